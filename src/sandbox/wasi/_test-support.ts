/**
 * Test support for the WASI tests: the committed tool binaries and a recording in-memory host API (clock and
 * random from the determinism module; `log` collected). Not part of the public API.
 * @module
 */
import { bytesToBase64 } from "../../canonical/hex.ts";
import { VirtualClock } from "../../determinism/clock.ts";
import { deriveStream } from "../../determinism/prng.ts";
import { ReachError, policyViolation } from "../../protocol/errors.ts";
import type { HostApi, HostOp, ToolInvocation } from "../types.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { DEFAULT_MEMORY_LIMIT_BYTES } from "../types.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { WasiExit, virtualSources } from "./context.ts";
import { LookupFlags, Rights } from "./errno.ts";
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

/** Rights for reading and writing a file in the guest helpers. */
export const RW = Rights.FD_READ | Rights.FD_WRITE | Rights.FD_FILESTAT_GET;

/**
 * A guest's-eye view of the shim over `fs`: each call returns its errno (and its result where there is one).
 * @param fs the workspace view
 * @param preopens preopens (fds 3, 4, …)
 * @returns the calls
 */
export async function guest(fs: WorkspaceView, preopens: Preopen[]) {
  const { f, put, dv, mem, wasi, clock } = await bareShim(fs, preopens);
  const dec = (b: Uint8Array): string => new TextDecoder().decode(b);
  const at = (ptr: number) => dv().getUint32(ptr, true);
  const call = (name: string, ...args: unknown[]): number => f[name]!(...args);
  return {
    wasi,
    clock,
    call,
    dv,
    put,
    open(dirfd: number, path: string, o: { follow?: boolean; oflags?: number; rights?: bigint } = {}): [number, number] {
      const [p, l] = put(1000, path);
      const e = call("path_open", dirfd, o.follow === false ? 0 : LookupFlags.SYMLINK_FOLLOW, p, l, o.oflags ?? 0, o.rights ?? RW, RW, 0, 2000);
      return [e, e === 0 ? at(2000) : -1];
    },
    symlink(target: string, dirfd: number, path: string): number {
      const [tp, tl] = put(1000, target);
      const [p, l] = put(1500, path);
      return call("path_symlink", tp, tl, dirfd, p, l);
    },
    link(fromFd: number, from: string, toFd: number, to: string): number {
      const [ap, al] = put(1000, from);
      const [bp, bl] = put(1500, to);
      return call("path_link", fromFd, 0, ap, al, toFd, bp, bl);
    },
    rename(fromFd: number, from: string, toFd: number, to: string): number {
      const [ap, al] = put(1000, from);
      const [bp, bl] = put(1500, to);
      return call("path_rename", fromFd, ap, al, toFd, bp, bl);
    },
    unlink(dirfd: number, path: string): number {
      const [p, l] = put(1000, path);
      return call("path_unlink_file", dirfd, p, l);
    },
    readlink(dirfd: number, path: string): [number, string] {
      const [p, l] = put(1000, path);
      const e = call("path_readlink", dirfd, p, l, 3000, 256, 2000);
      return [e, e === 0 ? dec(new Uint8Array(mem.buffer, 3000, at(2000))) : ""];
    },
    stat(dirfd: number, path: string, follow: boolean): [number, number, bigint, bigint] {
      const [p, l] = put(1000, path);
      const e = call("path_filestat_get", dirfd, follow ? LookupFlags.SYMLINK_FOLLOW : 0, p, l, 4000);
      return [e, dv().getUint8(4016), dv().getBigUint64(4008, true), dv().getBigUint64(4024, true)]; // errno, type, ino, nlink
    },
    write(fd: number, text: string): number {
      const [p, l] = put(5000, text);
      dv().setUint32(2100, p, true);
      dv().setUint32(2104, l, true);
      return call("fd_write", fd, 2100, 1, 2108);
    },
    read(fd: number): string {
      dv().setUint32(2100, 6000, true);
      dv().setUint32(2104, 1000, true);
      if (call("fd_read", fd, 2100, 1, 2108) !== 0) throw new Error("fd_read failed");
      return dec(new Uint8Array(mem.buffer, 6000, at(2108)));
    },
    close: (fd: number): number => call("fd_close", fd),
  };
}

