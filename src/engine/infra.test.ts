// Seed 002's infrastructure tools in every run, and Python tools (kind "python"), through the engine: recorded on the
// tape, replayed to the same run hash, working in the restricted executor on the run's own memory and temp/.
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { buildRunCapsule, capsuleRequest } from "./capsule.ts";
import { runPack } from "./coordinator.ts";
import { loadPack } from "./pack.ts";
import { replayCapsule } from "./replay.ts";
import { verifyRunCapsule } from "./verify.ts";
import { jsPack, planOf } from "../../tests/support/pack.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const ECHO = "export default (input) => ({ echo: input })";
const enc = new TextEncoder();

async function runAndReplay(files: Map<string, Uint8Array>, restricted: boolean) {
  const loaded = await loadPack(files);
  const record = await runPack({ loaded, env, restricted });
  const capsule = readRunCapsule(buildRunCapsule(record, loaded, capsuleRequest(record, { restricted })).bytes);
  expect(verifyRunCapsule(capsule).valid).toBe(true);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
  return record;
}

describe("infrastructure tools (seed 002), always available", () => {
  it("a plan calls every infra tool by name, without a manifest entry, even in the restricted executor; the run replays", async () => {
    const plan = planOf([
      { id: "w", tool: "write_memory", arguments: { key: "k", value: { n: [1, 2] } } },
      { id: "r", tool: "read_memory", arguments: { key: "k" } },
      { id: "absent", tool: "read_memory", arguments: { key: "nope" } },
      { id: "t", tool: "write_temp", arguments: { name: "notes.txt", content: "one\ntwo\nthree\n" } },
      { id: "l", tool: "read_lines", arguments: { path: "temp/notes.txt", start: 1, end: 3 } },
      { id: "py", tool: "exec_python", arguments: { code: "print('hi')\nresult = sum(input) * 2", input: [1, 2, 3] } },
    ]);
    const record = await runAndReplay(jsPack({ tools: { echo: ECHO }, plan }), true);
    expect(record.status, record.error?.message).toBe("COMPLETED");
    expect(record.outputs).toEqual({
      w: { ok: true },
      r: { value: { n: [1, 2] } },
      absent: { value: null },
      t: { path: "temp/notes.txt" },
      l: { lines: ["two", "three"] },
      py: { stdout: "hi\n", result: 12 },
    });
    expect(record.tape.records.map((r) => r.op)).toEqual(expect.arrayContaining(["memory.set", "memory.get", "temp.write", "lines.read"]));
  });

  it("arguments are checked against the tool's schema (PROTO_SCHEMA_VIOLATION), and a pack cannot ship its own write_memory", async () => {
    const record = await runPack({ loaded: await loadPack(jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "w", tool: "write_memory", arguments: { value: 1 } }]) })), env });
    expect(record.error?.code).toBe("PROTO_SCHEMA_VIOLATION");
    const files = jsPack({ tools: { write_memory: ECHO }, plan: planOf([{ id: "w", tool: "write_memory" }]) });
    await expect(loadPack(files)).rejects.toMatchObject({ code: "PACK_INVALID_MANIFEST" });
  });

  it("a python tool (def main(input, reach)) runs in the sandbox and replays", async () => {
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "p", tool: "stats" }]) });
    const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json")!));
    doc.tools.stats = { kind: "python", module: "tools/stats.py" };
    doc.manifest.capabilities.tools.push({ name: "stats" });
    files.set("reach.json", enc.encode(JSON.stringify(doc)));
    files.set("tools/stats.py", enc.encode("def main(input, reach):\n    return {'n': len(str(input)), 'now': reach.now()['iso']}\n"));
    const plan = JSON.parse(new TextDecoder().decode(files.get("plan.json")!));
    plan.scope.allowed.push("stats");
    files.set("plan.json", enc.encode(JSON.stringify(plan)));
    const record = await runAndReplay(files, false);
    expect(record.status, record.error?.message).toBe("COMPLETED");
    expect(record.outputs["p"]).toMatchObject({ n: 2, now: expect.stringMatching(/^1970-01-01T00:00:00\.\d{3}Z$/) });
  });
});
