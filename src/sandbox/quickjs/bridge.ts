/**
 * The two host functions a QuickJS context gets (`callSync`, `callAsync`) and the per-invocation state they share
 * with the runner. Only strings cross: the guest sends `(op, requestJson)`, the host answers with a JSON envelope
 * `{"ok":true,"value":…}` / `{"ok":false,"code":…,"message":…}`. Host errors never cross as objects; an error that
 * is not a `ReachError` reaches the guest as a generic message (no host stack, no host paths).
 *
 * A halting error from the host (`../halting.ts`: a policy denial, a replay divergence, a stop from outside) is
 * remembered: it halts the step (the interrupt handler stops the guest at its next check, even if the guest catches
 * the in-sandbox error) and becomes the invocation's outcome.
 * @module
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten-core";
import { base64ToBytes, bytesToBase64 } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { haltsTool } from "../halting.ts";
import { hostRequest } from "../types.ts";
import type { HostApi, HostOp } from "../types.ts";
import type { JsonObject } from "../../protocol/mod.ts";

/** Largest request a guest may send in one host call (JSON text, UTF-16 code units). */
export const MAX_REQUEST_CHARS = 16 * 1024 * 1024;

/** A settled asynchronous host call, waiting to be handed back to the guest. */
export type Settled = { deferred: QuickJSDeferredPromise; envelope: string };

/** What one invocation's host functions remember. */
export class InvocationState {
  /** The first halting error the host raised (`../halting.ts`); it is the invocation's outcome. */
  violation: ReachError | undefined;
  /**
   * Set when the tool reached the module loader (`import`): that path runs quickjs-emscripten's host-side loader
   * code, so the engine is not reused after it (see `warm.ts`).
   */
  importAttempted = false;
  /** Asynchronous host calls in flight. */
  readonly inflight = new Set<Promise<Settled>>();
  /** The engine's linear memory and its size when the invocation started (to recognise exhausted memory). */
  memory: WebAssembly.Memory | undefined;
  memoryAtStart = 0;
  /** Log lines the host accepted (`[level] message`). */
  readonly log: string[] = [];
  #logChars = 0;
  readonly #maxLogChars: number;

  /** @param maxLogChars cap of the collected log (further lines are dropped, with one marker line) */
  constructor(maxLogChars: number) {
    this.#maxLogChars = maxLogChars;
  }

  /** Remember a log line, within the cap. */
  addLog(level: string, message: string): void {
    if (this.#logChars > this.#maxLogChars) return;
    const line = `[${level}] ${message}`;
    this.#logChars += line.length + 1;
    this.log.push(this.#logChars > this.#maxLogChars ? "[reach] log truncated" : line);
  }
}

function envelopeOk(value: JsonObject): string {
  return JSON.stringify({ ok: true, value });
}

/** The envelope for a failed call; remembers a policy violation. */
function envelopeError(state: InvocationState, err: unknown): string {
  if (err instanceof ReachError) {
    if (haltsTool(err)) state.violation ??= err;
    return JSON.stringify({ ok: false, code: err.code, message: err.message });
  }
  return JSON.stringify({ ok: false, code: "EXEC_TOOL_FAILED", message: "the host operation failed" });
}

function halted(state: InvocationState): ReachError {
  return new ReachError("EXEC_ABORTED", "the step was halted (a policy violation or a stop); no further host calls are answered", {
    details: { violation: state.violation?.code ?? null },
  });
}

/**
 * Read and check the guest's `(op, requestJson)` handles.
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` for an unknown op or a request that is not a JSON object
 */
function readRequest(ctx: QuickJSContext, opHandle: QuickJSHandle | undefined, jsonHandle: QuickJSHandle | undefined): [HostOp, JsonObject] {
  if (opHandle === undefined || jsonHandle === undefined || ctx.typeof(opHandle) !== "string" || ctx.typeof(jsonHandle) !== "string") {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", "a host call needs an operation name and a JSON request string");
  }
  return hostRequest(ctx.getString(opHandle), ctx.getString(jsonHandle), MAX_REQUEST_CHARS);
}

const TEXT_OPS: ReadonlySet<HostOp> = new Set<HostOp>(["fs.read", "http.fetch"]);

/** Guest → host: `bytes: number[]` becomes the host API's base64 `data`. */
function toHostRequest(op: HostOp, request: JsonObject): JsonObject {
  const bytes = request["bytes"];
  if (bytes === undefined) return request;
  if ("data" in request || "text" in request || !Array.isArray(bytes)) {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", `the ${op} request must carry exactly one of bytes, data or text`);
  }
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (typeof b !== "number" || !Number.isInteger(b) || b < 0 || b > 255) {
      throw new ReachError("EXEC_SANDBOX_VIOLATION", `the ${op} request's bytes must be integers 0..255`);
    }
    out[i] = b;
  }
  const { bytes: _dropped, ...rest } = request;
  return { ...rest, data: bytesToBase64(out) };
}

/** Host → guest: base64 `data` becomes `bytes: number[]` (and UTF-8 `text` for fs.read and http.fetch). */
function toGuestResponse(op: HostOp, response: JsonObject): JsonObject {
  const data = response["data"];
  if (typeof data !== "string") return response;
  const bytes = base64ToBytes(data);
  const { data: _dropped, ...rest } = response;
  const out: JsonObject = { ...rest, bytes: Array.from(bytes) };
  if (TEXT_OPS.has(op)) out["text"] = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(bytes);
  return out;
}

/** Remember what a successful `log` call logged. */
function noteLog(state: InvocationState, op: HostOp, request: JsonObject): void {
  if (op === "log" && typeof request["message"] === "string") {
    state.addLog(typeof request["level"] === "string" ? request["level"] : "info", request["message"]);
  }
}

/** Check a host response: a plain JSON object (re-serialised by the envelope, so nothing else survives). */
function checkResponse(op: HostOp, response: unknown): JsonObject {
  if (typeof response !== "object" || response === null || Array.isArray(response)) {
    throw new ReachError("EXEC_TOOL_FAILED", `the host answered ${op} with something other than a JSON object`);
  }
  return response as JsonObject;
}

/**
 * The invocation a sandbox's host functions answer for. A prepared sandbox serves one invocation after another
 * (README.md "Reuse"), so its functions read the host and state from here on every call.
 */
export type HostSlot = { host: HostApi; state: InvocationState };

/**
 * Install nothing globally; return the two host functions as handles for the prelude's `setup`.
 * @param ctx the sandbox's context
 * @param slot the invocation they answer for (read on every call)
 * @returns `[callSync, callAsync]`; the caller disposes them
 */
export function makeHostFunctions(ctx: QuickJSContext, slot: HostSlot): [QuickJSHandle, QuickJSHandle] {
  const callSync = ctx.newFunction("callSync", (opHandle, jsonHandle) => {
    const { host, state } = slot;
    let envelope: string;
    try {
      if (state.violation !== undefined) throw halted(state);
      const [op, request] = readRequest(ctx, opHandle, jsonHandle);
      if (op === "http.fetch") throw new ReachError("EXEC_SANDBOX_VIOLATION", "http.fetch is asynchronous; use reach.http.fetch");
      const response = checkResponse(op, host.invokeSync(op, toHostRequest(op, request)));
      noteLog(state, op, request);
      envelope = envelopeOk(toGuestResponse(op, response));
    } catch (err) {
      envelope = envelopeError(state, err);
    }
    return ctx.newString(envelope);
  });

  const callAsync = ctx.newFunction("callAsync", (opHandle, jsonHandle) => {
    const { host, state } = slot;
    const deferred = ctx.newPromise();
    let started: Promise<JsonObject>;
    try {
      if (state.violation !== undefined) throw halted(state);
      const [op, request] = readRequest(ctx, opHandle, jsonHandle);
      started = Promise.resolve(host.invoke(op, toHostRequest(op, request))).then((response) => {
        const checked = checkResponse(op, response);
        noteLog(state, op, request);
        return toGuestResponse(op, checked);
      });
    } catch (err) {
      started = Promise.reject(err);
    }
    const settled: Promise<Settled> = started.then(
      (value) => ({ deferred, envelope: envelopeOk(value) }),
      (err: unknown) => ({ deferred, envelope: envelopeError(state, err) }),
    );
    state.inflight.add(settled);
    return deferred.handle;
  });
  return [callSync, callAsync];
}
