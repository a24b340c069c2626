/**
 * Refusals of the run service: every one is a ReachError document (upstream `error.schema.json`, `ReachError.toJSON`)
 * with the fitting HTTP status. Nothing else ever leaves the API as an error, not even an internal failure.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { ErrorCode } from "../protocol/mod.ts";

/** A ReachError with the HTTP status it is answered with. */
export class HttpRefusal extends Error {
  readonly status: number;
  readonly error: ReachError;
  /**
   * @param status the HTTP status
   * @param error the ReachError sent as the body
   */
  constructor(status: number, error: ReachError) {
    super(error.message);
    this.name = "HttpRefusal";
    this.status = status;
    this.error = error;
  }
}

/**
 * Build a refusal.
 * @param status HTTP status
 * @param code the ReachError code
 * @param message what went wrong and how to fix it
 * @param details machine-readable context
 * @returns the refusal, to throw
 * @example throw refuse(404, "PROTO_INVALID_ARGUMENT", "there is no run …");
 */
export function refuse(status: number, code: ErrorCode, message: string, details: Record<string, unknown> = {}): HttpRefusal {
  return new HttpRefusal(status, new ReachError(code, message, { details }));
}

/**
 * The HTTP status for a ReachError that did not come with one.
 * @param err the error
 * @returns the status
 * @example statusOf(new ReachError("PACK_MALFORMED", "…")) // 422
 */
export function statusOf(err: ReachError): number {
  const code = err.code;
  if (code === "PACK_NOT_FOUND") return 404;
  if (code === "PROTO_SEQUENCE_ERROR") return 409;
  if (code === "POLICY_PERMISSION_DENIED") return 403;
  if (code === "POLICY_RATE_LIMIT_EXCEEDED") return 429;
  if (code === "EXEC_RESOURCE_UNAVAILABLE") return 503;
  if (code.startsWith("PACK_") || code === "PROTO_VERSION_MISMATCH" || code.startsWith("PLAN_")) return 422;
  if (code.startsWith("PROTO_")) return 400;
  return 500;
}

/**
 * Whether a failure is the client going away while its request body was read (Node: "aborted", `ECONNRESET`; Deno:
 * `BadResource` or `Http` reading the body): the client's doing, answered as a refusal, not logged as an internal error.
 */
function clientWentAway(err: unknown): boolean {
  if (err === null || typeof err !== "object") return false;
  const { code, message, name } = err as { code?: unknown; message?: unknown; name?: unknown };
  if ((name === "BadResource" || name === "Http") && typeof message === "string" && /body/i.test(message)) return true;
  return code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || message === "aborted";
}

/**
 * The response for anything thrown by a handler.
 * @param err what was thrown
 * @param onInternal called with unexpected errors (for the server's log)
 * @returns a JSON response with the ReachError document
 * @example app.onError((err) => errorResponse(err, log));
 */
export function errorResponse(err: unknown, onInternal?: (err: unknown) => void): Response {
  let status: number;
  let error: ReachError;
  if (err instanceof HttpRefusal) ({ status, error } = err);
  else if (err instanceof ReachError) [status, error] = [statusOf(err), err];
  else if (clientWentAway(err)) [status, error] = [400, new ReachError("PROTO_INVALID_MESSAGE", "the request did not arrive whole (the connection closed while its body was read); send it again")];
  else {
    onInternal?.(err);
    [status, error] = [500, new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the run service failed to answer (an internal error; see its log); retry later", { retryAfter: 1000 })];
  }
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (status === 401) headers["www-authenticate"] = 'Bearer realm="reach-wasm"';
  if (status === 413) headers["connection"] = "close"; // the unread rest of the body must not be taken for the next request
  if (error.retryAfter !== null) headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfter / 1000)));
  return new Response(JSON.stringify(error.toJSON()), { status, headers });
}
