// inlineFirst: a short run stays on the calling thread (no engine thread), a run that holds the thread past its
// budget is dropped and run again elsewhere with the same record and without repeated progress, and a cancel during
// the attempt ends the run there.
import { describe, expect, it } from "vitest";
import { readArchive } from "../capsule/archive.ts";
import type { RunProgress } from "../engine/types.ts";
import { env, packArchive, spinPackArchive } from "./_test-service.ts";
import { runOnEngine } from "./engine-adapter.ts";
import type { EngineJob, EngineOutcome } from "./engine-adapter.ts";
import { inlineFirst } from "./inline-first.ts";

const job = async (archive: Uint8Array, seed = 7): Promise<EngineJob> => ({ pack: { files: readArchive(archive) }, options: { seed }, trust: null });
const hooks = (progress: RunProgress[] = [], signal = new AbortController().signal) => ({ signal, onProgress: (p: RunProgress) => void progress.push(p) });

describe("inlineFirst", () => {
  it("runs a short run on the calling thread: nothing goes elsewhere, the record is the engine call's", async () => {
    const j = await job(await packArchive("hello"));
    let elsewhere = 0;
    const out = await inlineFirst({ ms: 60_000 })(env, j, hooks(), () => (elsewhere++, Promise.reject(new Error("not here"))));
    const direct = await runOnEngine(env, j, hooks());
    expect(elsewhere).toBe(0);
    expect(out.status).toBe("COMPLETED");
    expect(out.runHash).toBe(direct.runHash);
    expect(Buffer.from(out.capsule).equals(Buffer.from(direct.capsule))).toBe(true);
  }, 60_000);

  it("moves a run that holds the thread past its budget, from the start, with the same record and no repeated progress", async () => {
    const j = await job(spinPackArchive(3, 3_000_000));
    const progress: RunProgress[] = [];
    let elsewhere = 0;
    // budget 0: the first fuel refill after any time at all gives the attempt up (the tool counts to 3 million)
    const out = await inlineFirst({ ms: 0 })(env, j, hooks(progress), (h) => (elsewhere++, runOnEngine(env, j, h)));
    const directProgress: RunProgress[] = [];
    const direct: EngineOutcome = await runOnEngine(env, j, hooks(directProgress));
    expect(elsewhere).toBe(1);
    expect(out.status).toBe("COMPLETED");
    expect(out.runHash).toBe(direct.runHash);
    expect(Buffer.from(out.capsule).equals(Buffer.from(direct.capsule))).toBe(true);
    expect(progress.map((p) => JSON.stringify({ ...p, durationMs: 0 }))).toEqual(directProgress.map((p) => JSON.stringify({ ...p, durationMs: 0 })));
  }, 120_000);

  it("keeps an attempt on the thread while the process used no CPU meanwhile (a loaded machine, not a long run)", async () => {
    const j = await job(spinPackArchive(2, 300_000));
    let elsewhere = 0;
    const frozen = await inlineFirst({ ms: 0, cpuMs: () => 0 })(env, j, hooks(), (h) => (elsewhere++, runOnEngine(env, j, h)));
    expect([elsewhere, frozen.status]).toEqual([0, "COMPLETED"]);
    let cpu = 0;
    await inlineFirst({ ms: 0, cpuMs: () => (cpu += 1) })(env, j, hooks(), (h) => (elsewhere++, runOnEngine(env, j, h)));
    expect(elsewhere).toBe(1); // the same run, with the CPU clock moving, is moved
  }, 60_000);

  it("ends a run cancelled before or during the attempt there (ABORTED with a capsule), not elsewhere", async () => {
    const j = await job(spinPackArchive(3, 3_000_000));
    const c = new AbortController();
    c.abort();
    let elsewhere = 0;
    const out = await inlineFirst({ ms: 60_000 })(env, j, hooks([], c.signal), (h) => (elsewhere++, runOnEngine(env, j, h)));
    expect(elsewhere).toBe(0);
    expect(out.status).toBe("ABORTED");
    expect(out.capsule.length).toBeGreaterThan(0);
  }, 60_000);
});
