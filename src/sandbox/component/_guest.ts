/**
 * The boundary between a component guest and the host: the `reach:tool/host#call` import (which host errors the
 * guest sees as `err`, which stop it), the choice of the imports the glue gets, and the mapping of whatever the guest
 * or its glue threw to a `ReachError`. See `README.md` ("The WIT world").
 * @module
 */
import { isErrorCode, ReachError, toReachError } from "../../protocol/mod.ts";
import type { ErrorCode } from "../../protocol/mod.ts";
import { isHostOp } from "../types.ts";
import type { ToolInvocation } from "../types.ts";
import type { JsonObject, JsonValue } from "../../protocol/mod.ts";
import type { TranspiledComponent } from "./transpiled.ts";
import { GuestExit } from "./wasi-p2.ts";
import type { ImportObject } from "./wasi-p2.ts";

/**
 * Host errors that stop the tool (the call does not return): policy violations, replay divergences, limits and
 * sandbox violations. Any other `ReachError` from the host comes back to the guest as `err({"code","message"})`.
 */
const HALTING_PREFIXES = ["POLICY_", "REPLAY_", "PROTO_CHAIN_"];
const HALTING_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "EXEC_SANDBOX_VIOLATION",
  "EXEC_TOOL_TIMEOUT",
  "EXEC_RESOURCE_EXHAUSTED",
  "EXEC_MEMORY_EXCEEDED",
  "EXEC_ABORTED",
]);

function halts(err: ReachError): boolean {
  return HALTING_CODES.has(err.code) || HALTING_PREFIXES.some((p) => err.code.startsWith(p));
}

/**
 * The guest's `reach:tool/host#call(op, request)`: check the deadline, run the host operation with the parsed
 * request, and answer its JSON response. A host error the tool may handle (or a request that is not a JSON object)
 * becomes the guest's `err('{"code","message"}')`; a halting one (policy, replay, limits, …, or an unknown `op`)
 * goes through `halt` and never returns.
 * @param invocation the invocation whose host API and tool name are used
 * @param op the operation name as the guest passed it (any value; only `HOST_OPS` names are accepted)
 * @param request the request as the guest passed it (JSON object text)
 * @param checkpoint throws when the invocation must stop (timeout, an earlier halt); run before and after the call
 * @param halt records a halting error and throws it
 * @returns the host's response as JSON text (the guest's `ok`)
 * @throws `{ payload }` (jco's err value) for errors the guest may handle; the halting `ReachError` otherwise
 * @example
 * const imports = { [HOST_INTERFACE]: { call: (op: unknown, req: unknown) => callHostImport(invocation, op, req, checkpoint, halt) } };
 */
export function callHostImport(
  invocation: ToolInvocation,
  op: unknown,
  request: unknown,
  checkpoint: () => void,
  halt: (err: ReachError) => never,
): string {
  checkpoint();
  if (typeof op !== "string" || !isHostOp(op)) {
    return halt(
      new ReachError("POLICY_VIOLATION", `tool "${invocation.toolName}" called an unknown host operation`, {
        details: { violationType: "UNDEFINED_TOOL", attemptedCapability: String(op).slice(0, 100) },
      }),
    );
  }
  let parsed: unknown;
  try {
    parsed = typeof request === "string" ? JSON.parse(request) : undefined;
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return guestErr({ code: "PROTO_INVALID_ARGUMENT", message: `host call "${op}": the request must be a JSON object` });
  }
  const response = callHost(() => invocation.host.invokeSync(op, parsed as JsonObject), halt);
  if ("error" in response) return guestErr(response.error);
  checkpoint();
  return JSON.stringify(response.ok);
}

/**
 * jco's glue maps an import's return value to `ok(...)` and a thrown value to `err(...)`: an `Error` is re-thrown
 * (a trap), anything else becomes the err value, or its `payload` property when it has one (`getErrorPayload`).
 * Throwing `{ payload }` works with the glue of every jco version we have seen (1.17 and 1.35).
 */
function guestErr(error: { code: string; message: string }): never {
  throw { payload: JSON.stringify(error) };
}

/** Run a host call: halting errors stop the tool, other ReachErrors become the guest's `err`. */
function callHost(
  fn: () => JsonObject,
  halt: (err: ReachError) => never,
): { ok: JsonObject } | { error: { code: string; message: string } } {
  try {
    return { ok: fn() };
  } catch (err) {
    if (err instanceof ReachError && !halts(err)) return { error: { code: err.code, message: err.message } };
    // A non-ReachError from the host is a host bug: stop rather than hand its details to the tool.
    return halt(err instanceof ReachError ? err : toReachError(err, "EXEC_SANDBOX_VIOLATION"));
  }
}

/**
 * Only the imports the glue looks up, each of them present (a missing one is refused before anything runs).
 * @param component the transpiled component (its `importNames`)
 * @param imports every import reach-wasm supplies for this invocation
 * @returns the subset of `imports` named by `component.importNames`
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` (`details.missingImports`) when the component imports an interface
 *   that is not supplied (`wasi:sockets/*`, `wasi:http/*`, …)
 * @example selectImports(C_WORDCOUNT, { ...wasi.imports, [HOST_INTERFACE]: host }) // only `reach:tool/host`
 */
export function selectImports(component: TranspiledComponent, imports: ImportObject): ImportObject {
  const given: ImportObject = {};
  const missing: string[] = [];
  for (const name of component.importNames) {
    const iface = imports[name];
    if (iface === undefined) missing.push(name);
    else given[name] = iface;
  }
  if (missing.length > 0) {
    throw new ReachError(
      "EXEC_SANDBOX_VIOLATION",
      `component imports ${missing.join(", ")}, which reach-wasm does not supply; build the tool without them ` +
        `(componentize-js: disableFeatures ["http", "fetch-event"])`,
      { details: { missingImports: missing }, recoverable: false },
    );
  }
  return given;
}

/**
 * Classify what `invoke` (or instantiation) threw: `wasi:cli/exit`, the guest's `err(...)` (jco's `ComponentError`),
 * a stack overflow, a trap, a `ReachError` from the host side, or anything else.
 * @param toolName the tool's name, for the messages
 * @param err what was thrown
 * @returns the error to report (`EXEC_TOOL_FAILED`, `EXEC_RESOURCE_EXHAUSTED` for the stack, or `err` itself)
 * @throws nothing
 * @example guestError("stats", new WebAssembly.RuntimeError("unreachable")).code // "EXEC_TOOL_FAILED"
 */
export function guestError(toolName: string, err: unknown): ReachError {
  if (err instanceof GuestExit) {
    return new ReachError("EXEC_TOOL_FAILED", `tool "${toolName}" exited (status ${err.status}) instead of returning`, {
      details: { exitStatus: err.status },
    });
  }
  if (err instanceof Error && Object.prototype.hasOwnProperty.call(err, "payload")) {
    const payload = (err as Error & { payload: unknown }).payload;
    const text = typeof payload === "string" ? payload : String(payload);
    return new ReachError("EXEC_TOOL_FAILED", `tool "${toolName}" failed: ${text.slice(0, 1000)}`, {
      details: { toolError: parseMaybeJson(text) },
    });
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return new ReachError("EXEC_RESOURCE_EXHAUSTED", `tool "${toolName}" overflowed the stack`, {
      details: { reason: "stack" },
      cause: err,
    });
  }
  if (err instanceof WebAssembly.RuntimeError) {
    return new ReachError("EXEC_TOOL_FAILED", `tool "${toolName}" trapped: ${err.message}`, { details: { trap: err.message }, cause: err });
  }
  if (err instanceof ReachError) return err;
  const reach = toReachError(err, "EXEC_TOOL_FAILED");
  return isErrorCode(reach.code) ? reach : new ReachError("EXEC_TOOL_FAILED", String(err));
}

function parseMaybeJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text.slice(0, 1000);
  }
}
