/**
 * How a run stops early (seed 003 §3.1; see the module notes of `run.ts`): {@link Aborted} and {@link InfraRefused},
 * thrown out of a phase to the coordinator, and the stop points a signal or a watchdog made in an invocation, which a
 * replay is given back and stops at.
 * @module
 */
import type { ReachError } from "../protocol/mod.ts";
import type { StopPoint } from "../sandbox/mod.ts";
import type { AbortPoint } from "./types.ts";

/**
 * A plan called an infrastructure tool the run may not use (`RunRequest.infraTools`): thrown out of the run, which
 * then leaves no record (`runPack` throws `error`), because a record of the refusal could not be replayed without the
 * narrowing.
 */
export class InfraRefused extends Error {
  constructor(readonly error: ReachError) {
    super(error.message);
  }
}

/** One recorded stop: the invocation and its stop point. */
export type RecordedStop = { invocationId: string; reason: StopPoint["reason"]; fuel: number | string };

/** The run was aborted; thrown out of a phase to the coordinator, which ends the run ABORTED. */
export class Aborted extends Error {
  constructor(readonly at: AbortPoint | null) {
    super("aborted");
  }
}

/**
 * The stop point an error records (`reason` aborted/watchdog with a `fuel` count), or null.
 * @param error the failure of an invocation, if any
 * @returns its stop, without the invocation id
 */
export function stopOf(error: ReachError | null): Omit<RecordedStop, "invocationId"> | null {
  const d = error?.details;
  if (d === undefined || (d["reason"] !== "aborted" && d["reason"] !== "watchdog")) return null;
  const fuel = d["fuel"];
  if (typeof fuel !== "number" && typeof fuel !== "string") return null;
  return { reason: d["reason"] === "aborted" ? "abort" : "watchdog", fuel };
}
