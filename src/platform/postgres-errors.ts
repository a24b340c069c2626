/**
 * What a database failure means for the run service: the store is unavailable for now (the server is down,
 * restarting, out of connections, or PGlite's files are gone) and the same statement will work later, or the
 * statement itself fails (bad data, a bug) and will fail again. The first becomes a ReachError
 * `EXEC_RESOURCE_UNAVAILABLE` with `retryAfter` and `details.storeUnavailable`, which the API answers with 503 and
 * `Retry-After` and the workers wait out; the second is passed on as it is.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { redactSecrets } from "./redact.ts";

/** How long a client should wait before trying again while the store is unavailable (ms). */
export const STORE_RETRY_AFTER_MS = 2000;

/** SQLSTATE classes and codes that mean "not now" rather than "never" (PostgreSQL appendix A). */
const TRANSIENT_CLASSES = new Set(["08", "53", "57", "58"]); // connection, resources, operator intervention, system (I/O)
const TRANSIENT_CODES = new Set(["40001", "40P01", "55P03", "55006"]); // serialization, deadlock, lock not available, object in use
/** Messages of node-pg and pg-pool for a connection that broke or could not be made (they carry no SQLSTATE). */
const CONNECTION_MESSAGES = /connection terminated|connection ended|not queryable|connection error|timeout exceeded when trying to connect|terminating connection|server closed the connection|the database system is/i;

function sqlstateOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

/**
 * Whether a driver error means the store is unavailable for now (retrying the same statement later may work).
 * @param err what the driver threw
 * @param kind which driver: for PGlite, an error without a SQLSTATE is its runtime failing (files gone), never data
 * @returns true for connection failures, shutdowns, restarts, resource shortages, I/O errors and lock conflicts
 * @example isTransientDbError(Object.assign(new Error("x"), { code: "57P01" }), "postgres") // true
 */
export function isTransientDbError(err: unknown, kind: "postgres" | "pglite"): boolean {
  if (err instanceof ReachError) return err.code === "EXEC_RESOURCE_UNAVAILABLE" && err.details["storeUnavailable"] === true;
  const state = sqlstateOf(err);
  if (state !== null) return TRANSIENT_CLASSES.has(state.slice(0, 2)) || TRANSIENT_CODES.has(state);
  if (kind === "pglite") return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE, ENOTFOUND, …
  return err instanceof Error && CONNECTION_MESSAGES.test(err.message);
}

/**
 * The error to throw for a failed statement: a transient failure becomes the "store unavailable" ReachError, anything
 * else is returned unchanged.
 * @param err what the driver threw
 * @param kind which driver
 * @param where the store, for the message (a URL without its password, or a directory)
 * @returns the error to throw
 * @example throw storeError(err, "postgres", "postgres://u:***@h/db");
 */
export function storeError(err: unknown, kind: "postgres" | "pglite", where: string): unknown {
  if (err instanceof ReachError || !isTransientDbError(err, kind)) return err;
  const state = sqlstateOf(err);
  const why = redactSecrets(err instanceof Error ? err.message : String(err));
  return new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the service database ${where} is unavailable (${why}${state === null ? "" : `, SQLSTATE ${state}`}); retry in a few seconds`, {
    cause: err,
    retryAfter: STORE_RETRY_AFTER_MS,
    details: { storeUnavailable: true, ...(state === null ? {} : { sqlstate: state }) },
  });
}
