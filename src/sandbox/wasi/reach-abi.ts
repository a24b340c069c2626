/**
 * The `reach` import module: the host API (src/sandbox/types.ts `HostApi`) for core WebAssembly tools. The ABI is
 * documented in `REACH_ABI.md` beside this file. Requests and responses are UTF-8 JSON objects; every pointer and
 * length is checked; nothing a guest passes makes these functions throw. A `POLICY_VIOLATION` from the host halts
 * the guest at once (seed 003 §4.3), so the guest never sees a denied call return.
 * @module
 */
import { toReachError } from "../../protocol/mod.ts";
import { isHostOp } from "../types.ts";
import type { HostApi } from "../types.ts";
import type { JsonObject } from "../../protocol/mod.ts";
import { WasiErrno } from "./errno.ts";
import { WasiExit, WasiHalt } from "./context.ts";
import type { WasiContext } from "./context.ts";
import { u32 } from "./memory.ts";

/** The import module name. */
export const REACH_MODULE = "reach";
/** Largest request accepted, in bytes (16 MiB). */
export const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/** Status codes returned by `reach.call` and `reach.response` (i32). */
export const ReachStatus = {
  /** The response JSON was written; its length is at `*resp_len_out`. */
  OK: 0,
  /** The buffer is too small; `*resp_len_out` holds the needed length; fetch it with `reach.response`. */
  BUFFER_TOO_SMALL: 1,
  /** A pointer or length is out of bounds, the op is not UTF-8, or the request is not a JSON object. */
  INVALID_ARGUMENT: 2,
  /** The op is not a host operation. */
  UNKNOWN_OP: 3,
  /** The operation failed; the response is `{"error":{"code","message"}}`. */
  ERROR: 4,
  /** `reach.response` was called with no response pending. */
  NO_RESPONSE: 5,
} as const;

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/**
 * Build the `reach` import module for one invocation.
 * @param ctx the WASI instance state (memory, halt state, limits hook)
 * @param host the invocation's host API
 * @param beforeCall the runner's limits check (may throw a WasiHalt)
 * @returns `{ reach: { call, response } }`
 * @example WebAssembly.instantiate(module, { ...wasi.imports(module), ...reachImports(wasi.ctx, host, check) })
 */
export function reachImports(
  ctx: WasiContext,
  host: HostApi,
  beforeCall: () => void,
): Record<string, Record<string, WebAssembly.ImportValue>> {
  const m = ctx.mem;
  let pending: { status: number; bytes: Uint8Array } | null = null;

  const deliver = (ptr: number, cap: number, lenOut: number): number => {
    const p = pending!;
    m.setU32(lenOut, p.bytes.length);
    if (p.bytes.length > cap) return ReachStatus.BUFFER_TOO_SMALL;
    m.bytes(ptr, p.bytes.length).set(p.bytes);
    pending = null;
    return p.status;
  };

  const guard = (fn: () => number): number => {
    if (ctx.halted !== null) throw ctx.halted;
    if (ctx.exited !== null) throw ctx.exited;
    try {
      beforeCall();
      return fn();
    } catch (err) {
      if (err instanceof WasiHalt) {
        ctx.halted = err;
        throw err;
      }
      if (err instanceof WasiExit) throw err;
      if (err instanceof WasiErrno) return ReachStatus.INVALID_ARGUMENT;
      ctx.halted = new WasiHalt(toReachError(err, "EXEC_TOOL_FAILED"));
      throw ctx.halted;
    }
  };

  const call = (opPtr: number, opLen: number, reqPtr: number, reqLen: number, respPtr: number, respCap: number, lenOut: number): number =>
    guard(() => {
      const [rp, rc, lo] = [u32(respPtr), u32(respCap), u32(lenOut)];
      m.check(lo, 4, 4);
      m.bytes(rp, rc);
      if (u32(reqLen) > MAX_REQUEST_BYTES) return ReachStatus.INVALID_ARGUMENT;
      const op = m.string(u32(opPtr), u32(opLen), 64);
      let request: unknown;
      try {
        request = JSON.parse(decoder.decode(m.bytes(u32(reqPtr), u32(reqLen))));
      } catch {
        return ReachStatus.INVALID_ARGUMENT;
      }
      if (typeof request !== "object" || request === null || Array.isArray(request)) return ReachStatus.INVALID_ARGUMENT;
      if (!isHostOp(op)) return ReachStatus.UNKNOWN_OP;
      let status: number = ReachStatus.OK;
      let response: unknown;
      try {
        response = host.invokeSync(op, request as JsonObject);
      } catch (err) {
        const e = toReachError(err, "EXEC_TOOL_FAILED");
        if (e.code === "POLICY_VIOLATION") throw new WasiHalt(e); // seed 003 §4.3: a denial halts the step
        status = ReachStatus.ERROR;
        response = { error: { code: e.code, message: e.message } };
      }
      pending = { status, bytes: encoder.encode(JSON.stringify(response)) };
      return deliver(rp, rc, lo);
    });

  const responseFn = (respPtr: number, respCap: number, lenOut: number): number =>
    guard(() => {
      const [rp, rc, lo] = [u32(respPtr), u32(respCap), u32(lenOut)];
      m.check(lo, 4, 4);
      m.bytes(rp, rc);
      if (pending === null) return ReachStatus.NO_RESPONSE;
      return deliver(rp, rc, lo);
    });

  return { [REACH_MODULE]: { call, response: responseFn } };
}

