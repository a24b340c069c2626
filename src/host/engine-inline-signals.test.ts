// A signal acts at any moment of a run on the calling thread (the CLI's `run`, the service's workers): its handler
// runs only when the event loop turns, as a real one's. A real signal (SIGUSR2, which this process handles) is sent
// at each progress report of a run — a storm over every point of the run, the planner's and the steps' included —
// and the run must end ABORTED at the next check (before the next step, or before its terminal state), never
// COMPLETED, with a capsule that verifies and replays. A run whose signal came after its last check (while its
// capsule was made) is started again to stop there. The CLI's own signals, on Node and on Deno, are in
// tests/signals.test.ts.
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { jsPack, planOf } from "../../tests/support/pack.ts";
import { inlineFirst } from "../engine/inline-first.ts";
import { runEngine } from "../engine/engine.ts";
import type { EngineRun, EngineRunRequest } from "../engine/engine.ts";
import { replayCapsule } from "../engine/replay.ts";
import type { RunProgress } from "../engine/types.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { busyPack } from "../../tests/support/pack.ts";
import { runInline, runInlineFirst, stoppedAtEnd } from "./engine-inline.ts";
import type { WireRequest } from "./engine-wire.ts";
import { defaultEnvironment } from "./environment.ts";

const env = defaultEnvironment({ diskCache: false });
const tool = "export default (input) => ({ seen: Object.keys(input).length })\n";
const plan = planOf([{ id: "a", tool: "a" }, { id: "b", tool: "b" }, { id: "c", tool: "c" }]);
/** Three steps planned by a QuickJS planner: 9 progress reports (pack, planning, planned, 3 × started/ended). */
const files = jsPack({ tools: { a: tool, b: tool, c: tool }, plan: `export default () => (${JSON.stringify(plan)});\n` });

// The handler a CLI installs: it aborts the run's signal, and runs only when this thread's event loop turns.
let onSignal: () => void = () => {};
const handler = (): void => onSignal();
beforeAll(async () => {
  process.on("SIGUSR2", handler);
  await new Promise((resolve) => setTimeout(resolve, 20)); // the runtime's signal watcher is listening
});
afterAll(() => void process.off("SIGUSR2", handler));

/** Send the signal now (it is delivered at once; its handler waits for the loop, as a real Ctrl-C's does). */
function raise(): void {
  process.kill(process.pid, "SIGUSR2");
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
}

async function expectAbortedCapsule(run: EngineRun): Promise<Record<string, unknown>> {
  expect(run.status).toBe("ABORTED");
  const capsule = readRunCapsule(run.capsule.bytes);
  expect(verifyRunCapsule(capsule).valid).toBe(true);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, JSON.stringify(replay)).toBe(true);
  const events = new TextDecoder().decode(run.files.get("events.jsonl")).trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
  const last = events.at(-1)!;
  expect(last.type).toBe("run.aborted");
  expect(last.payload["signal"]).toBe("SIGINT");
  return last.payload;
}

describe("a signal during a run on the calling thread", () => {
  const points = Array.from({ length: 9 }, (_, i) => i + 1);
  it.each(points)("a signal at progress report %i ends the run ABORTED; the capsule verifies and replays", async (at) => {
    const user = new AbortController();
    onSignal = () => user.abort("SIGINT");
    let n = 0;
    const seen: string[] = [];
    const onProgress = (p: RunProgress): void => {
      seen.push(p.kind === "step" ? `${p.stepId}:${p.status}` : p.kind);
      if (++n === at) raise();
    };
    const onThread = async (): Promise<EngineRun> => {
      throw new Error("the run stays on the calling thread (a long budget)");
    };
    const run = await runInlineFirst({ pack: { files } }, { signal: user.signal, onProgress }, 60_000, onThread);
    expect(n, seen.join(" ")).toBeGreaterThanOrEqual(at);
    const aborted = await expectAbortedCapsule(run);
    // Stopped at the first check after the signal: before the first step started after it, else at the end.
    const next = seen.findIndex((s, i) => i >= at - 1 && s.endsWith(":started"));
    if (at === 1) expect(aborted["abortedAt"]).toEqual({ phase: "planning", attempt: 0 });
    else if (at === 2 && aborted["abortedAt"] === undefined) expect(aborted["stops"]).toEqual([expect.objectContaining({ reason: "abort" })]); // while the planner loaded
    else expect(aborted["abortedAt"], seen.join(" ")).toEqual({ phase: "executing", stepIndex: next < 0 ? 3 : ["a", "b", "c"].indexOf(seen[next]!.split(":")[0]!) });
  }, 60_000);

  it("the same through the engine's own inline-first runner: never COMPLETED once the handler could run", async () => {
    for (const at of [3, 9]) {
      const user = new AbortController();
      onSignal = () => user.abort("SIGINT");
      let n = 0;
      const request: EngineRunRequest = { pack: { files }, signal: user.signal, onProgress: () => void (++n === at && raise()) };
      const run = await inlineFirst({ ms: 60_000 })((r) => runEngine(env, r), request, () => Promise.reject(new Error("not expected")));
      await expectAbortedCapsule(run);
    }
  }, 60_000);

  it("a signal that came while a tool held the thread (seen only once it was given up) stops the run started again where the attempt stopped", async () => {
    const user = new AbortController();
    onSignal = () => user.abort("SIGINT");
    let calls = 0;
    let cpu = 0;
    // At its 50th fuel refill the tool gets the signal and has used the budget's CPU: the attempt is given up at the next.
    const request: EngineRunRequest = {
      pack: { files: busyPack(3e6) },
      signal: user.signal,
      interrupted: () => {
        if (++calls === 50) {
          raise();
          cpu = 1e9;
        }
        return false;
      },
    };
    const elsewhere: { stopAt?: EngineRunRequest["stopAt"]; signal?: AbortSignal }[] = [];
    const run = await inlineFirst({ ms: 0, cpuMs: () => cpu })((r) => runEngine(env, r), request, (o) => {
      elsewhere.push(o);
      return runEngine(env, { pack: request.pack, ...(o.stopAt === undefined ? {} : { stopAt: o.stopAt }), ...(o.signal === undefined ? {} : { signal: o.signal }) });
    });
    expect(elsewhere).toHaveLength(1);
    expect(elsewhere[0]!.signal).toBeUndefined(); // started again not aborted: it stops at the recorded point
    expect(elsewhere[0]!.stopAt).toMatchObject({ signal: "SIGINT", fuel: expect.stringMatching(/^\d+$/) });
    const aborted = await expectAbortedCapsule(run);
    expect(aborted["stops"]).toEqual([expect.objectContaining({ reason: "abort" })]);
  }, 60_000);

  it("a run whose signal came after its last check is started again and stopped there (ABORTED at its end)", async () => {
    const request: WireRequest = { pack: { files } };
    const completed = await runInline(request, {});
    expect(completed.status).toBe("COMPLETED");
    const user = new AbortController();
    user.abort("SIGINT");
    const warnings: string[] = [];
    const again: WireRequest[] = [];
    const run = await stoppedAtEnd(completed, request, { signal: user.signal, onProgress: (p) => void (p.kind === "warning" && warnings.push(p.message)) }, (r) => (again.push(r), runInline(r, {})));
    expect(again.map((r) => r.stopAt)).toEqual([{ atEnd: true, signal: "SIGINT" }]);
    expect(warnings).toEqual([expect.stringMatching(/^SIGINT came as the run ended COMPLETED/)]);
    expect((await expectAbortedCapsule(run))["abortedAt"]).toEqual({ phase: "executing", stepIndex: 3 });
    // Without a signal, or with one that never came, the run is taken as it ended.
    expect(await stoppedAtEnd(completed, request, {}, () => Promise.reject(new Error("not expected")))).toBe(completed);
    expect(await stoppedAtEnd(completed, request, { signal: new AbortController().signal }, () => Promise.reject(new Error("not expected")))).toBe(completed);
  }, 60_000);
});
