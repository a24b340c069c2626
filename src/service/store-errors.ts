/**
 * Telling the failures of the run store apart: "unavailable for now" (the database is down, restarting or out of
 * connections: the platform throws ReachError `EXEC_RESOURCE_UNAVAILABLE` with `details.storeUnavailable`, answered
 * with 503 and `Retry-After`, waited out by workers) from everything else, which fails the same way every time.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";

/**
 * Whether an error says the run store is unavailable for now (retrying later may work).
 * @param err what a store function threw
 * @returns true for the platform's "store unavailable" ReachError
 * @example if (isStoreUnavailable(err)) await sleep(err.retryAfter);
 */
export function isStoreUnavailable(err: unknown): err is ReachError {
  return err instanceof ReachError && err.code === "EXEC_RESOURCE_UNAVAILABLE" && err.details["storeUnavailable"] === true;
}
