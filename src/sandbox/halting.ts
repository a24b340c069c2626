/**
 * Which host errors halt a tool (seed 003 §4.3 "Immediate Halt"): the runner stops the tool at once, even when the
 * guest caught the error inside the sandbox, and the error becomes the invocation's outcome. Because the rule looks
 * only at the recorded error, a replay — where the tape answers the call with the same error — halts at the same
 * point: a policy denial, a replay divergence, and a stop from outside that landed while the tool waited for an
 * asynchronous host call (an abort: `EXEC_ABORTED`; the wall-clock watchdog: `EXEC_TOOL_TIMEOUT` with reason
 * `watchdog`).
 * @module
 */
import type { ReachError } from "../protocol/mod.ts";

/**
 * Whether a host error halts the tool that received it.
 * @param err the host's error
 * @returns true for `POLICY_*`, `REPLAY_*`, `EXEC_ABORTED` and the watchdog's `EXEC_TOOL_TIMEOUT`
 * @example haltsTool(policyViolation("RESOURCE_ACCESS", "fs:/etc", "denied")) // true
 */
export function haltsTool(err: ReachError): boolean {
  const code = err.code;
  return code.startsWith("POLICY_") || code.startsWith("REPLAY_") || code === "EXEC_ABORTED" || (code === "EXEC_TOOL_TIMEOUT" && err.details["reason"] === "watchdog");
}
