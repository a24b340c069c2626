/**
 * The state of the workspace and the memory store after each step of a recorded run, by replaying it
 * (`replayCapsule` with `onStep`): what the record alone cannot say (a WASI tool writes the workspace through its
 * preopened directories, not through recorded host calls) the replay computes again, deterministically, with no
 * network and no secrets. The states are the recorded run's only when the replay as a whole reproduces it (every
 * event, the run hash, the workspace after): otherwise the outcome says why not, and no state is given.
 * @module
 */
import type { RunCapsule } from "../capsule/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { replayCapsule } from "./replay.ts";
import type { ReplayOptions } from "./replay.ts";
import type { EngineEnvironment } from "./runners.ts";
import type { ObservedStep } from "./types.ts";

/** The states a replay observed, when it reproduced the recorded run; else why it did not. */
export type ReplayedStates = { matches: true; runHash: string; steps: ObservedStep[] } | { matches: false; reason: string };

/**
 * Replay a capsule and keep the state after each step.
 * @param capsule the capsule
 * @param env the platform's engines
 * @param options the replay's progress, parallelism and component preparation
 * @returns the states in the record's step order, or why they cannot be trusted (never throws for the capsule)
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * import { defaultEnvironment } from "../host/node.ts";
 * declare const bytes: Uint8Array; // a capsule's .tar.gz bytes
 * const states = await replayedStates(readRunCapsule(bytes), defaultEnvironment());
 * if (states.matches) for (const s of states.steps) console.log(s.stepId, [...s.workspace.files.keys()], s.memory);
 * else console.log(states.reason);
 * ```
 */
export async function replayedStates(capsule: RunCapsule, env: EngineEnvironment, options: Omit<ReplayOptions, "noExec" | "onStep"> = {}): Promise<ReplayedStates> {
  const steps: ObservedStep[] = [];
  try {
    const report = await replayCapsule(capsule, env, { ...options, onStep: (s) => steps.push(s) });
    if (report.matches) return { matches: true, runHash: report.runHash, steps };
    const reason = report.redacted?.message ?? report.divergence?.message ?? `the replay's run hash ${report.runHash} is not the recorded ${report.expectedRunHash}`;
    return { matches: false, reason: `replaying the capsule did not reproduce the run: ${reason}` };
  } catch (err) {
    if (!(err instanceof ReachError)) throw err;
    return { matches: false, reason: `the capsule cannot be replayed (${err.code}): ${err.message}` };
  }
}
