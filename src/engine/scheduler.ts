/**
 * Walking one plan generation with steps at the same time (`step-graph.ts`): a step is started once every step it
 * depends on has succeeded, on up to `run.parallel` threads, lowest plan index first; steps are written (emitted) in
 * plan order, each once it and every earlier step are done. The first failure ends the walk: steps after it in the
 * plan are never written (work already done for them is dropped, running ones are stopped), exactly as if the steps
 * had run one after another. Nothing written depends on which step finished first.
 * @module
 */
import type { ReachError } from "../protocol/mod.ts";
import type { PlanStep } from "../protocol/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import type { Generation } from "./generation.ts";
import { Aborted } from "./run-stops.ts";
import type { Run } from "./run.ts";
import { emitStep, prepareStep } from "./run-steps.ts";
import type { PreparedStep } from "./run-steps.ts";
import type { StepJobResult } from "./step-job.ts";

/** A step that finished (for the planner's replan context). */
export type CompletedStep = { stepId: string; tool: string; output: JsonObject };

/** How often an interrupt that came without a signal (the shared word) is looked for while steps run elsewhere. */
const INTERRUPT_POLL_MS = 50;

type Slot = { p: PreparedStep | null; done: Promise<StepJobResult | null | "interrupted">; settle: (r: StepJobResult | null | "interrupted") => void; fail: (e: unknown) => void; controller: AbortController };

function slot(): Slot {
  let settle: Slot["settle"] = () => {};
  let fail: Slot["fail"] = () => {};
  const done = new Promise<StepJobResult | null | "interrupted">((res, rej) => ((settle = res), (fail = rej)));
  done.catch(() => undefined);
  return { p: null, done, settle, fail, controller: new AbortController() };
}

/**
 * Run a generation's steps and write them in plan order.
 * @param run the run
 * @param gen the generation (from `run.beginGeneration`)
 * @param generation its number (0, then one more per replan)
 * @param completed steps that completed so far (appended to)
 * @returns null when every step completed, else the first failed step and its error
 * @throws Aborted when the run was aborted; ReachError when a budget is spent (as `emitStep`)
 */
export async function runGeneration(run: Run, gen: Generation, generation: number, completed: CompletedStep[]): Promise<{ step: PlanStep; error: ReachError } | null> {
  const n = gen.steps.length;
  const slots = Array.from({ length: n }, slot);
  const first = run.stepIndex;
  let running = 0;
  let stop = n; // nothing at or after this index starts
  const inFlight = new Set<Promise<unknown>>();
  const start = (i: number): void => {
    const s = slots[i]!;
    const p = prepareStep(run, gen, i, generation);
    s.p = p;
    if (p.job === null) {
      gen.complete(i, p.view.workspace, null, p.clockStartMs);
      s.settle(null);
      return;
    }
    running++;
    run.request.onProgress?.({ kind: "step", index: first + i, total: first + n, stepId: p.step.id, tool: p.step.tool, status: "started" });
    const job = run.runJob(p.job, s.controller.signal).then(
      (r) => {
        if (r !== null) gen.complete(i, p.view.workspace, r, p.clockStartMs);
        s.settle(r);
      },
      (err: unknown) => s.fail(err),
    ).finally(() => {
      running--;
      inFlight.delete(job);
      pump();
    });
    inFlight.add(job);
  };
  const pump = (): void => {
    for (let i = 0; i < stop && running < run.parallel; i++) {
      if (slots[i]!.p !== null) continue;
      if (run.interrupted()) {
        // Nothing more starts; whoever waits for a step that never started learns it here (emission then aborts).
        for (const s of slots) if (s.p === null) s.settle("interrupted");
        return;
      }
      if (gen.depsOf(i).every((d) => gen.succeeded(d))) start(i);
    }
  };
  // An abort reaches the steps running elsewhere through their signals (the signal, or the shared word polled here;
  // steps on this thread read the word at their fuel refills, and a poll there would only run while none holds it).
  const abortAll = (): void => {
    for (const s of slots) s.controller.abort();
    pump();
  };
  const poll = run.parallel > 1 ? setInterval(() => {
    if (run.interrupted()) abortAll();
  }, INTERRUPT_POLL_MS) : undefined;
  run.request.signal?.addEventListener("abort", abortAll, { once: true });
  try {
    for (let e = 0; e < n; e++) {
      pump();
      const result = await slots[e]!.done;
      if (result === "interrupted") {
        run.checkAbort({ phase: "executing", stepIndex: run.stepIndex });
        throw new Aborted({ phase: "executing", stepIndex: run.stepIndex });
      }
      const out = emitStep(run, gen, slots[e]!.p!, result, first + n);
      if (out.stepError !== null) {
        stop = e + 1;
        return { step: gen.steps[e]!, error: out.stepError };
      }
      completed.push({ stepId: gen.steps[e]!.id, tool: gen.steps[e]!.tool, output: out.toolOutput! });
    }
    return null;
  } finally {
    clearInterval(poll);
    run.request.signal?.removeEventListener("abort", abortAll);
    stop = 0;
    for (const s of slots) s.controller.abort();
    await Promise.allSettled([...inFlight]);
  }
}
