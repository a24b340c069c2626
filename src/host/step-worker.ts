/**
 * A step thread (see `step-thread.ts`): runs step jobs (`src/engine/step-job.ts`) one at a time with the platform's
 * sandboxes, kept per run so that a run's later jobs find them warm. A platform thread (`src/platform/threads.ts`).
 * @module
 */
import { realNow, runRunners } from "../engine/mod.ts";
import { runStepJob } from "../engine/mod.ts";
import type { StepJob, StepJobResult } from "../engine/mod.ts";
import { capabilityPolicy } from "../policy/mod.ts";
import type { CapabilityPolicy } from "../policy/mod.ts";
import type { Manifest } from "../protocol/mod.ts";
import { toReachError } from "../protocol/mod.ts";
import { defaultEnvironment } from "./environment.ts";
import type { FromStepWorker, ToStepWorker } from "./step-thread.ts";
import { threadChannel } from "../platform/threads.ts";

const ch = await threadChannel<ToStepWorker, FromStepWorker>();
const env = defaultEnvironment();
/** Sandboxes and policy per run (the last two runs). */
const runs = new Map<string, { policy: CapabilityPolicy; runners: ReturnType<typeof runRunners> }>();
const aborts = new Map<number, AbortController>();

function forRun(job: StepJob): { policy: CapabilityPolicy; runners: ReturnType<typeof runRunners> } {
  let r = runs.get(job.runId);
  if (r === undefined) {
    r = { policy: capabilityPolicy(job.manifest as Manifest, { restricted: job.restricted }), runners: runRunners(env, job.roots) };
    runs.set(job.runId, r);
    while (runs.size > 2) runs.delete(runs.keys().next().value!);
  }
  return r;
}

async function run(id: number, job: StepJob, interrupt: SharedArrayBuffer): Promise<StepJobResult> {
  const word = new Int32Array(interrupt);
  const controller = new AbortController();
  aborts.set(id, controller);
  try {
    const { policy, runners } = forRun(job);
    return await runStepJob(job, {
      policy,
      runnerFor: runners.runnerFor,
      now: realNow(env),
      signal: controller.signal,
      interrupted: () => {
        const stopped = Atomics.load(word, 0) !== 0;
        if (stopped && !controller.signal.aborted) controller.abort("abort");
        return stopped;
      },
      ...(job.network ? { fetch: (url: string | URL | Request, init?: RequestInit) => fetch(url, init) } : {}),
    });
  } finally {
    aborts.delete(id);
  }
}

ch.listen((m) => {
  if (m.kind === "abort") {
    aborts.get(m.id)?.abort("abort");
    return;
  }
  run(m.id, m.job, m.interrupt).then(
    (result) => ch.send({ kind: "result", id: m.id, result }),
    (err: unknown) => ch.send({ kind: "error", id: m.id, error: toReachError(err, "EXEC_TOOL_FAILED").toDetails() }),
  );
});
