/**
 * Test support for the WASI tests: the committed tool binaries and a recording in-memory host API (clock and
 * random from the determinism module; `log` collected). Not part of the public API.
 * @module
 */
import { bytesToBase64 } from "../../canonical/hex.ts";
import { VirtualClock } from "../../determinism/clock.ts";
import { deriveStream } from "../../determinism/prng.ts";
import { ReachError, policyViolation } from "../../protocol/errors.ts";
import type { HostApi, HostOp, JsonObject, ToolInvocation } from "../types.ts";
import { DEFAULT_MEMORY_LIMIT_BYTES } from "../types.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { WasiExit, virtualSources } from "./context.ts";
import type { Preopen } from "./context.ts";
import { WasiPreview1 } from "./preview1.ts";

/** One recorded host call. */
export type Recorded = { op: string; request: string; response: string };

/**
 * A host whose `clock.now` and `random.bytes` come from a VirtualClock and a seeded stream, and that records every
 * call (request and response JSON) like the tape would. `deny` lists ops answered with a POLICY_VIOLATION.
 */
export function recordingHost(seed: string, deny: readonly string[] = []): { host: HostApi; calls: Recorded[] } {
  const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
  const random = deriveStream(seed, "invocation/test");
  const calls: Recorded[] = [];
  const invokeSync = (op: HostOp, request: JsonObject): JsonObject => {
    let response: JsonObject;
    if (deny.includes(op)) throw policyViolation("UNDEFINED_TOOL", op, `${op} is not allowed`);
    if (op === "clock.now") {
      const ms = clock.read();
      response = { ms, iso: clock.iso(ms) };
    } else if (op === "random.bytes") {
      response = { data: bytesToBase64(random.bytes(request["n"] as number)) };
    } else if (op === "log") {
      response = {};
    } else {
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `${op} is not available in this test host`);
    }
    calls.push({ op, request: JSON.stringify(request), response: JSON.stringify(response) });
    return response;
  };
  return { host: { invokeSync, invoke: (op, req) => Promise.resolve(invokeSync(op, req)) }, calls };
}

/** An invocation with test defaults (1e8 fuel, 16 MiB memory, 10 s). */
export function invocation(code: Uint8Array, host: HostApi, input: ToolInvocation["input"] = {}, extra: Partial<ToolInvocation> = {}): ToolInvocation {
  return {
    toolName: "t",
    invocationId: "00000000-0000-4000-8000-000000000000",
    code,
    input,
    host,
    timeoutMs: 10_000,
    fuel: 100_000_000n,
    memoryLimitBytes: Math.min(16 * 1024 * 1024, DEFAULT_MEMORY_LIMIT_BYTES),
    ...extra,
  };
}

/**
 * Assemble a module from WebAssembly text with binaryen (tests only; no optimisation).
 * @param text the module in the WebAssembly text format
 * @returns its binary
 */
export async function wat(text: string): Promise<Uint8Array> {
  const { default: binaryen } = await import("binaryen");
  const m = binaryen.parseText(text);
  try {
    return m.emitBinary();
  } finally {
    m.dispose();
  }
}

/**
 * A shim bound to a bare 2-page memory, for calling host functions directly with hostile arguments.
 * @param fs the workspace view (optional)
 * @param preopens preopens (fds 3, 4, …)
 * @param clock the virtual clock
 * @returns the shim, its wrapped functions, `put(ptr, text)` → [ptr, len], a DataView maker and the memory
 */
export async function bareShim(fs?: WorkspaceView, preopens: Preopen[] = [], clock = new VirtualClock(0)) {
  const enc = new TextEncoder();
  const wasi = new WasiPreview1({ sources: virtualSources(clock, deriveStream("0", "t")), stdin: enc.encode("abc"), ...(fs ? { fs, preopens } : {}) });
  // (module (memory (export "memory") 2))
  const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 5, 3, 1, 0, 2, 7, 10, 1, 6, 109, 101, 109, 111, 114, 121, 2, 0]);
  const instance = await WebAssembly.instantiate(await WebAssembly.compile(bytes), {});
  wasi.bind(instance);
  const mem = instance.exports["memory"] as WebAssembly.Memory;
  const f = wasi.functions();
  const put = (ptr: number, s: string): [number, number] => {
    const b = enc.encode(s);
    new Uint8Array(mem.buffer).set(b, ptr);
    return [ptr, b.length];
  };
  const dv = (): DataView => new DataView(mem.buffer);
  return { wasi, f, put, dv, mem, clock };
}

/**
 * Run a WASI command directly (no fuel) over a workspace view.
 * @param code the module
 * @param fs the workspace view (optional)
 * @param preopens preopens
 * @param seed the random seed
 * @param args argv
 * @returns stdout, stderr, the exit code and the shim
 */
export async function runCommand(code: Uint8Array, fs: WorkspaceView | undefined, preopens: Preopen[], seed = "0", args = ["tool"]) {
  const clock = new VirtualClock(0);
  const wasi = new WasiPreview1({ args, sources: virtualSources(clock, deriveStream(seed, "t")), ...(fs ? { fs, preopens } : {}) });
  const module = await WebAssembly.compile(code as BufferSource);
  const instance = await WebAssembly.instantiate(module, wasi.imports(module));
  wasi.bind(instance);
  let exit = 0;
  try {
    (instance.exports["_start"] as () => void)();
  } catch (e) {
    if (!(e instanceof WasiExit)) throw e;
    exit = e.code;
  }
  wasi.finish();
  const dec = new TextDecoder();
  return { stdout: dec.decode(wasi.ctx.stdout.bytes()), stderr: dec.decode(wasi.ctx.stderr.bytes()), exit, wasi };
}
