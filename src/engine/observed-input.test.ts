// What a tool observes live is what replay gives it, for every input (conformance/HASHING.md "What a tool sees"):
// seeded inputs with shuffled key orders, odd number spellings, "__proto__" and other prototype names, integer-like
// names, non-BMP and unnormalised Unicode names and nesting go through js, python and wasm tools, exec_python, the
// memory store and `$step` references; every run verifies and replays to its run hash, and every spelling of the same
// value gives the same run hash. A session's calls with their arguments in a client's order replay too (engine and
// MCP); refusals happen at the door with a code; a divergence names the event, the field and both values.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it } from "vitest";
import { canonicalize, hashCanonical } from "../canonical/jcs.ts";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { valueCommit } from "../canonical/commit.ts";
import { createMcpServer } from "../mcp/server.ts";
import { McpSessionRun } from "../mcp/session-run.ts";
import type { McpEngine } from "../mcp/session-run.ts";
import { SESSION_START } from "./session-chain.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { ReachError } from "../protocol/errors.ts";
import { MAX_JSON_DEPTH, parseJsonText } from "../protocol/json-text.ts";
import { genObject, rng, spell } from "../protocol/_test-json.ts";
import type { JsonValue } from "../protocol/json.ts";
import { buildRunCapsule, capsuleRequest } from "./capsule.ts";
import { runPack } from "./coordinator.ts";
import { openSession } from "./engine.ts";
import type { EngineRun } from "./engine.ts";
import { loadPack } from "./pack.ts";
import type { LoadedPack } from "./pack.ts";
import { replayCapsule } from "./replay.ts";
import { Session } from "./session.ts";
import type { RunRecord } from "./types.ts";
import { verifyRunCapsule } from "./verify.ts";
import { jsPack, observerPack, planOf, SEE_JS } from "../../tests/support/pack.ts";
import { forged } from "../../tests/support/forge.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const enc = new TextEncoder();
const door = { what: "the input", code: "PROTO_INVALID_ARGUMENT" as const };

const loadedPack: Promise<LoadedPack> = observerPack().then(loadPack);

/** Build, verify and replay a run's capsule; returns it. */
async function capsuleReplays(record: RunRecord, loaded: LoadedPack): Promise<ReturnType<typeof readRunCapsule>> {
  const capsule = readRunCapsule(buildRunCapsule(record, loaded, capsuleRequest(record, {})).bytes);
  expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
  expect(replay.runHash).toBe(record.runHash);
  return capsule;
}

/** Run the observer pack on JSON text, as a caller hands it in; the capsule verifies and replays. */
async function runText(text: string): Promise<RunRecord> {
  const loaded = await loadedPack;
  const record = await runPack({ loaded, env, input: parseJsonText(text, door) as JsonValue });
  expect(record.status, record.error?.message).toBe("COMPLETED");
  await capsuleReplays(record, loaded);
  return record;
}

describe("every input replays: run → capsule → verify → replay, and every spelling gives the same run hash", () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: js, python, wasm, exec_python, memory and $step see the same live and on replay`, async () => {
      const r = rng(seed);
      const value = genObject(r, 3, 10);
      const [a, b] = [spell(value, r), spell(value, r)];
      expect(a).not.toBe(b);
      const first = await runText(a);
      const second = await runText(b);
      expect(second.runHash).toBe(first.runHash);
      // the tools saw the canonical value: the js tool's text is that of the parse of its canonical text
      expect((first.outputs["whole"] as { text: string }).text).toBe(JSON.stringify(JSON.parse(canonicalize(value))));
    });
  }

  it(`an input nested ${MAX_JSON_DEPTH} levels deep runs and replays; one level more is refused at the door`, async () => {
    const deep = "[".repeat(MAX_JSON_DEPTH - 1) + '{"b":1,"a":-0.0}' + "]".repeat(MAX_JSON_DEPTH - 1);
    await runText(`{"deep":${deep.slice(1, -1)}}`);
    const loaded = await loadedPack;
    await expect(runPack({ loaded, env, input: JSON.parse("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1)) })).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT", details: { reason: "depth" } });
    await expect(runPack({ loaded, env, input: { s: "\ud800" } })).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT", details: { reason: "not-json" } });
  });

  it("a plan's literal arguments keep a \"__proto__\" member, and a pack file with a name twice is refused", async () => {
    const plan = planOf([{ id: "p", tool: "see", arguments: {} }]);
    const text = JSON.stringify(plan).replace('"arguments":{}', '"arguments":{"__proto__":{"polluted":true},"b":1}');
    const files = jsPack({ tools: { see: SEE_JS }, plan: {} });
    files.set("plan.json", enc.encode(text));
    const loaded = await loadPack(files);
    const record = await runPack({ loaded, env });
    expect(record.status, record.error?.message).toBe("COMPLETED");
    expect((record.outputs["p"] as { text: string }).text).toBe('{"__proto__":{"polluted":true},"b":1}');
    await capsuleReplays(record, loaded);
    files.set("plan.json", enc.encode(text.replace('"b":1', '"b":1,"b":2')));
    await expect(loadPack(files)).rejects.toMatchObject({ code: "PLAN_INVALID", details: { reason: "duplicate-key", path: "$.steps[0].arguments.b" } });
    files.set("plan.json", enc.encode(text));
    files.set("reach.json", enc.encode(new TextDecoder().decode(files.get("reach.json")!).replace('"id":', '"id":"x","id":')));
    await expect(loadPack(files)).rejects.toMatchObject({ code: "PACK_MALFORMED", details: { reason: "duplicate-key", path: "$.id" } });
  });
});

describe("session calls replay whatever order the client's arguments are in", () => {
  const args = (): JsonValue => parseJsonText('{"zeta":1,"__proto__":{"p":[]},"alpha":{"__proto__":{"x":1.0},"10":2,"2":-0,"\\u00e9":1,"e\\u0301":2,"\\ud83d\\ude00":3}}', door) as JsonValue;

  it("engine sessions: the calls' capsule verifies and replays; arguments that are not JSON or too deep are refused and the session goes on", async () => {
    const loaded = await loadedPack;
    const session = Session.open({ loaded, env });
    expect(await session.call("see", args())).toMatchObject({ ok: true });
    expect(await session.call("exec_python", { input: args(), code: "import json\nresult = json.dumps(input)" })).toMatchObject({ ok: true });
    const deep = JSON.parse(`{"x":${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}}`) as JsonValue;
    expect(await session.call("see", deep)).toMatchObject({ ok: false, stepId: null, ended: false, error: { code: "PROTO_INVALID_ARGUMENT", details: { reason: "depth" } } });
    expect(await session.call("see", { s: "\udc00" })).toMatchObject({ ok: false, stepId: null, ended: false, error: { code: "PROTO_INVALID_ARGUMENT" } });
    expect(await session.call("write_memory", { value: args(), key: "seen" })).toMatchObject({ ok: true, stepId: "call-3" });
    const record = await session.close();
    expect(record.status, record.error?.message).toBe("COMPLETED");
    await capsuleReplays(record, loaded);
  });

  it("MCP: the SDK client's arguments in its own order; the session capsule verifies and replays", async () => {
    const runs: EngineRun[] = [];
    const engine: McpEngine = { openSession: async ({ session }) => {
      const s = await openSession(env, { pack: { files: await observerPack() }, trust: { unrestricted: true }, session });
      return { ...s, tools: s.tools(), call: (t: string, a: JsonValue) => s.call(t, a), workspace: () => s.workspace(), readWorkspace: (p: string) => s.readWorkspace(p), close: (x?: boolean) => s.close(x) };
    } };
    const first = await engine.openSession({ session: SESSION_START });
    const run = new McpSessionRun(first, async (r) => (runs.push(r), `mem/${r.capsule.name}`), { engine });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(run, { name: "reach-wasm", version: "test" }).connect(a);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(b);
    const seen = await client.callTool({ name: "see", arguments: args() as Record<string, unknown> });
    expect(seen.isError, JSON.stringify(seen)).toBeFalsy();
    // every member reaches the tool, "__proto__" at the top too, in canonical order (integer-like names first, as JavaScript orders them)
    expect((seen.structuredContent as { text: string }).text).toBe(JSON.stringify(parseJsonText('{"__proto__":{"p":[]},"alpha":{"10":2,"2":0,"__proto__":{"x":1},"e\\u0301":2,"\\u00e9":1,"\\ud83d\\ude00":3},"zeta":1}', door)));
    const py = await client.callTool({ name: "exec_python", arguments: { input: args(), code: "import json\nresult = json.dumps(input)" } });
    expect(py.isError, JSON.stringify(py)).toBeFalsy();
    await run.end();
    await client.close();
    expect(runs.map((r) => r.status)).toEqual(["COMPLETED"]);
    const capsule = readRunCapsule(runs[0]!.capsule.bytes);
    expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches, replay.divergence?.message).toBe(true);
  });
});

/** Re-chain a record's events after `mutate` changed payloads (a consistent forgery: every hash recomputed). */
describe("REPLAY_DIVERGENCE names the event, the field and both values", () => {
  it("a recorded output that differs from the replayed one: the field, both hashes, the JSON pointer and both values, escaped", async () => {
    const files = jsPack({ tools: { keys: "export default (input) => ({ keys: Object.keys(input.x), n: 1 })" }, plan: planOf([{ id: "s", tool: "keys", arguments: { x: { $input: "" } } }]) });
    const loaded = await loadPack(files);
    const record = await runPack({ loaded, env, input: { zeta: 1, alpha: 2 } });
    expect(record.outputs["s"]).toEqual({ keys: ["alpha", "zeta"], n: 1 });
    // what a run that handed the tool its caller's key order would have recorded, with a hostile string in it
    const hostile = "zeta\u001b[31m\u009b2J\u202e";
    const output = { keys: [hostile, "alpha"], n: 1 };
    // the output as salted commitments record it (HASHING.md "Value commitments"), so the capsule verifies
    const completed = record.events.find((e) => e.type === "tool.completed")!;
    const commit = valueCommit(String(completed.payload["resultSalt"]), output);
    const replayedCommit = String(completed.payload["outputHash"]);
    const bad = forged(record, (events) => {
      for (const e of events) {
        if (e.type === "tool.completed") Object.assign(e.payload, { result: output, outputHash: commit });
        if (e.type === "run.step.completed") e.payload["result"] = { outputHash: commit };
        if (e.type === "run.completed") e.payload["outputHash"] = hashCanonical({ s: commit });
      }
    });
    const capsule = readRunCapsule(buildRunCapsule(bad, loaded, capsuleRequest(bad, {})).bytes);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches).toBe(false);
    const d = replay.divergence!;
    expect(d).toMatchObject({ eventIndex: 3, stepId: "s", field: "payload.outputHash", recorded: JSON.stringify(commit), replayed: JSON.stringify(replayedCommit) });
    expect(d.value).toEqual({ of: "output", pointer: "/keys/0", recorded: '"zeta\\u001b[31m\\u009b2J\\u202e"', replayed: '"alpha"' });
    expect(d.message).toContain(`event 3 (step "s", tool.completed) differs at payload.outputHash: recorded "${commit}", replayed "${replayedCommit}"`);
    expect(d.message).toContain('the output differs first at /keys/0: recorded "zeta\\u001b[31m\\u009b2J\\u202e", replayed "alpha"');
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(d.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/); // nothing a terminal would act on
  });

  it("recorded arguments that differ: the JSON pointer into the arguments, both values clipped", async () => {
    const files = jsPack({ tools: { keys: "export default (input) => ({ n: Object.keys(input).length })" }, plan: planOf([{ id: "s", tool: "keys", arguments: { x: { $input: "" } } }]) });
    const loaded = await loadPack(files);
    const record = await runPack({ loaded, env, input: { text: "short" } });
    const bad = forged(record, (events) => {
      const invoked = events.find((e) => e.type === "tool.invoked")!;
      invoked.payload["arguments"] = { x: { text: "y".repeat(5000) } };
      invoked.payload["argumentsCommit"] = valueCommit(String(invoked.payload["argumentsSalt"]), invoked.payload["arguments"]);
    });
    const replay = await replayCapsule(readRunCapsule(buildRunCapsule(bad, loaded, capsuleRequest(bad, {})).bytes), env);
    const d = replay.divergence!;
    expect(d).toMatchObject({ eventIndex: 2, stepId: "s", field: "payload.arguments.x.text", replayed: '"short"' });
    expect(d.recorded).toBe(`"${"y".repeat(199)}…`);
    expect(d.value).toMatchObject({ of: "arguments", pointer: "/x/text", replayed: '"short"' });
    expect(d.message.length).toBeLessThan(1000);
    expect(d.message).toContain('event 2 (step "s", tool.invoked) differs at payload.arguments.x.text: recorded "yyy');
  });
});

it("a ReachError, not a crash, for every door refusal (a library caller's bad input)", async () => {
  const loaded = await loadedPack;
  for (const input of [{ a: undefined }, { n: Number.NaN }, { d: new Date(0) }] as unknown[]) {
    const err = await runPack({ loaded, env, input: input as JsonValue }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).message).toMatch(/^the run input is not JSON data: /);
  }
});
