// Every name the workspace takes, a capsule can record (ARCHITECTURE "Capsule"): a name outside printable ASCII or too
// long for a ustar header is refused when a tool makes it (EILSEQ / ENAMETOOLONG, an ordinary tool error), never
// after the run when the capsule is written — which lost the whole run's record, and over MCP the whole session's.
// The workspace's rule and the capsule writer's agree on every path; a session and a js tool that try such names go
// on, and their capsules verify and replay.
import { describe, expect, it } from "vitest";
import { writeArchive } from "../src/capsule/mod.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { openSession, replayCapsule, runPack, verifyRunCapsule, loadPack, buildRunCapsule, capsuleRequest } from "../src/engine/mod.ts";
import type { EngineRun } from "../src/engine/mod.ts";
import { normalizeWorkspacePath } from "../src/sandbox/workspace/mod.ts";
import { uncarriedPath } from "../src/sandbox/workspace/path.ts";
import { rng } from "../src/protocol/_test-json.ts";
import { jsPack, packFromDisk, planOf } from "./support/pack.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "./support/platform.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const CHARS = "abcXYZ09-_.~ !'()é日😀\u00a0";

/** A random path made of segments of 1–120 characters, mostly ASCII. */
function randomPath(r: () => number): string {
  const depth = 1 + Math.floor(r() * 14);
  return Array.from({ length: depth }, () => {
    const n = 1 + Math.floor((r() < 0.5 ? r() * 25 : r() * 120));
    return Array.from({ length: n }, () => CHARS[Math.floor(r() * (r() < 0.97 ? 14 : CHARS.length))]!).join("");
  }).join("/");
}

async function checkCapsule(bytes: Uint8Array, runHash: string): Promise<void> {
  const capsule = readRunCapsule(bytes);
  expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
  expect(replay.runHash).toBe(runHash);
}

describe("workspace names a capsule can record", () => {
  it("the workspace's rule and the capsule writer's agree on every path (2,000 random paths, both sides of the limits)", () => {
    const r = rng(20261128);
    let taken = 0;
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      let path: string;
      try {
        path = normalizeWorkspacePath(randomPath(() => r.next()));
      } catch {
        continue; // a "." or ".." segment: refused before any of this
      }
      const workspace = uncarriedPath(path) === null;
      let capsule = true;
      try {
        writeArchive([{ path: `workspace/after/${path}`, bytes: new Uint8Array(1) }, { path: `workspace/before/${path}`, bytes: new Uint8Array(1) }]);
      } catch {
        capsule = false;
      }
      expect(workspace, path).toBe(capsule);
      if (workspace) taken++;
      else refused++;
    }
    expect(taken).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });

  it("an MCP-style session: write_temp of such a name is answered with the fix and the session goes on; its capsule verifies and replays", async () => {
    const session = await openSession(env, { pack: { files: packFromDisk("hello") } });
    for (const [name, errno] of [["ü.txt", "EILSEQ"], ["n".repeat(150), "ENAMETOOLONG"]] as const) {
      const answer = await session.call("write_temp", { name, content: "x" });
      expect(answer).toMatchObject({ ok: false, ended: false });
      if (answer.ok) throw new Error("accepted");
      expect(answer.error.code).toBe("EXEC_RESOURCE_UNAVAILABLE");
      expect(answer.error.message).toMatch(errno === "EILSEQ" ? /not printable ASCII.*choose such a name/ : /too long for a capsule.*choose a shorter name/);
    }
    expect(await session.call("write_temp", { name: "u.txt", content: "x" })).toMatchObject({ ok: true });
    expect(await session.call("wordcount", { text: "still serving" })).toMatchObject({ ok: true, output: { words: 2 } });
    const run: EngineRun = await session.close();
    expect(run.status).toBe("COMPLETED");
    expect([...readRunCapsule(run.capsule.bytes).entries.keys()]).toContain("workspace/after/temp/u.txt");
    await checkCapsule(run.capsule.bytes, run.runHash);
  });

  it("a js tool that tries such names gets an error it can catch; the run completes, verifies and replays", async () => {
    const tool = `export default (i, reach) => {
      const seen = [];
      for (const p of ["out/résumé.md", "out/" + "x".repeat(101), "out/ok.md"]) {
        try { reach.fs.write(p, "hello"); seen.push("written " + p.length); } catch (e) { seen.push(String(e.message).includes("capsule") ? "refused" : "other: " + e.message); }
      }
      return { seen };
    }`;
    const files = jsPack({
      tools: { w: tool },
      plan: planOf([{ id: "a", tool: "w" }]),
      manifest: { capabilities: { tools: [{ name: "w" }], resources: [{ uri: "workspace:///out/", access: "readwrite" }], permissions: ["filesystem"] } },
    });
    const loaded = await loadPack(files);
    const record = await runPack({ loaded, env, input: {} });
    expect(record.status, record.error?.message).toBe("COMPLETED");
    expect(record.outputs["a"]).toEqual({ seen: ["refused", "refused", "written 9"] });
    const built = buildRunCapsule(record, loaded, capsuleRequest(record, {}));
    await checkCapsule(built.bytes, record.runHash);
  });
});
