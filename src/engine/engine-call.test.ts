import { describe, expect, it } from "vitest";
import { readRunCapsule, FEDERATION_ENTRY } from "../capsule/run-capsule.ts";
import { verifyRunCapsule } from "./verify.ts";
import { verifyChain } from "../ledger/verify.ts";
import { readJsonl } from "../ledger/jsonl.ts";
import { readQuickJsEngineWasm, readPythonWasm } from "../../tests/support/platform.ts";
import { writeArchive } from "../capsule/archive.ts";
import { packFromDisk } from "../../tests/support/pack.ts";
import { runEngine } from "./engine.ts";
import { replayCapsule } from "./replay.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };

describe("runEngine", () => {
  it("runs a pack from its files or its archive with the same run hash and capsule bytes", async () => {
    const files = packFromDisk("hello");
    const a = await runEngine(env, { pack: { files }, input: { text: "a b c" } });
    const archive = writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));
    const b = await runEngine(env, { pack: { archive }, input: { text: "a b c" } });
    expect(a.status).toBe("COMPLETED");
    expect(b.runHash).toBe(a.runHash);
    expect(b.capsule.bytes).toEqual(a.capsule.bytes);
    expect(a.capsule.name).toBe(`${a.runHash}.capsule.tar.gz`);
    expect(a.files.has("result.json")).toBe(true);
  });

  it("chains a federation annex onto the run without changing the run hash", async () => {
    const files = packFromDisk("hello");
    const plain = await runEngine(env, { pack: { files } });
    const annexed = await runEngine(env, { pack: { files }, annex: ({ runHash }) => [{ type: "federation.delegation", payload: { delegate: "n2" } }, { type: "capsule.sync", payload: { runHash } }] });
    expect(annexed.runHash).toBe(plain.runHash);
    const capsule = readRunCapsule(annexed.capsule.bytes);
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    const annex = readJsonl(capsule.entries.get(FEDERATION_ENTRY)!).events as { prevEventHash: string; type: string }[];
    expect(annex.map((e) => e.type)).toEqual(["federation.delegation", "capsule.sync"]);
    expect(annex[0]!.prevEventHash).toBe(plain.runHash);
    expect(verifyChain(annex).valid).toBe(false); // anchored on the run, not on the genesis hash: not a run of its own
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches, replay.divergence?.message).toBe(true);
    expect(replay.rebuilt?.indexMatches).toBe(true);
  });

  it("refuses a pack archive that is not a tar.gz with PACK_MALFORMED", async () => {
    await expect(runEngine(env, { pack: { archive: new Uint8Array([1, 2, 3]) } })).rejects.toMatchObject({ code: "PACK_MALFORMED" });
  });
});

describe("step threads", () => {
  it("are started only for a plan whose steps can run at the same time (not for a chain)", async () => {
    const sizes: number[] = [];
    // A pool that only notes that it was made (its jobs fail: what they would record is not the point here).
    const stepThreads = (size: number) => {
      sizes.push(size);
      return { run: () => Promise.reject(new Error("no threads in this test")), close: () => {} };
    };
    const chain = await runEngine({ ...env, stepThreads }, { pack: { files: packFromDisk("hello") }, parallel: 2 });
    expect(chain.status).toBe("COMPLETED");
    expect(sizes).toEqual([]);
    await runEngine({ ...env, stepThreads }, { pack: { files: packFromDisk("parallel") }, parallel: 2 }).catch(() => null);
    expect(sizes).toEqual([2]);
  });
});
