/**
 * The import object of the interpreter module: every one of its 60 imports, written here instead of by its
 * emscripten glue. What each answers:
 * - the JavaScript FFI (`lookup_attr`, `call0..n`, `store_attr`, `js_reflect_construct`, …): there is no
 *   JavaScript host object. `import js` gives an empty module (every attribute is missing). The one object Python
 *   can reach is the `_reach` module the runner registers (ref 2), whose functions `call`, `begin` and `finish`
 *   take and return strings only (`GuestHooks.channel`). Every other FFI use stops the invocation with
 *   `EXEC_SANDBOX_VIOLATION`;
 * - files (`__syscall_*`, WASI `fd_*` on anything but stdio): refused (no such file, permission denied); stdout and
 *   stderr go to `GuestHooks.write`, stdin is empty;
 * - `mp_js_time_ms` (`time.time()`, `datetime.now()`), `mp_js_random_u32` (the seed of `random`): the hooks, which
 *   use the host API's `clock.now` / `random.bytes` (recorded on the tape); `mp_js_ticks_ms` (`time.ticks_ms()`,
 *   `time.sleep()`): a per-invocation counter advancing 1 ms per read;
 * - `emscripten_resize_heap` (the only way the memory grows): up to `GuestHooks.memoryCapBytes`, else refused;
 * - `invoke_*` / `_emscripten_throw_longjmp`: emscripten's setjmp/longjmp (MicroPython raises exceptions with it);
 *   anything thrown that is not the longjmp marker (a fuel trap, a `GuestStop`) passes through.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";

/** The functions of the `_reach` module. */
export type ChannelName = "call" | "begin" | "finish";

/** What the imports answer for: one invocation (or the preparation of an interpreter). */
export interface GuestHooks {
  /** The most the linear memory may grow to, in bytes. */
  readonly memoryCapBytes: number;
  /** Called when a growth past the cap was refused (Python then raises `MemoryError`). */
  memoryRefused(requestedBytes: number): void;
  /** `_reach.<name>(*args)`: string arguments (null for anything else) → the string returned to Python. */
  channel(name: ChannelName, args: ReadonlyArray<string | null>): string;
  /** Bytes written to stdout (1) or stderr (2). */
  write(fd: 1 | 2, bytes: Uint8Array): void;
  /** Wall time for `time.time()`, in ms since 1970 (virtual). */
  timeMs(): number;
  /** The monotonic tick for `time.ticks_ms()`. */
  ticksMs(): number;
  /** 32 random bits (the seed of `random`). */
  randomU32(): number;
}

/** The exports of the interpreter module the runner uses. */
export type InterpreterExports = {
  memory: WebAssembly.Memory;
  __indirect_function_table: WebAssembly.Table;
  __wasm_call_ctors(): void;
  emscripten_stack_init(): void;
  emscripten_stack_get_current(): number;
  _emscripten_stack_restore(sp: number): void;
  setThrew(threw: number, value: number): void;
  malloc(size: number): number;
  free(ptr: number): void;
  mp_js_init(pystackWords: number, heapBytes: number): void;
  proxy_c_init(): void;
  mp_js_register_js_module(name: number, value: number): void;
  mp_js_do_exec(src: number, len: number, out: number): void;
};

/** The mutable link between an instance's imports and the runner. */
export type Link = { exports: InterpreterExports | undefined; hooks: GuestHooks };

/** Thrown from an import to unwind out of the interpreter with an invocation's outcome (the instance is dropped). */
export class GuestStop extends Error {
  /** @param error the invocation's outcome */
  constructor(readonly error: ReachError) {
    super(error.message);
    this.name = "GuestStop";
  }
}

/** JS-side references: MicroPython's two static ones, then the `_reach` module and its functions. */
export const REF_REACH = 2;
const FUNCTION_REFS: ReadonlyMap<string, number> = new Map([["call", 3], ["begin", 4], ["finish", 5]]);
const CHANNEL_BY_REF: ReadonlyMap<number, ChannelName> = new Map([[3, "call"], [4, "begin"], [5, "finish"]]);

// MicroPython's value tags (ports/webassembly/proxy_c.c): Python → JS and JS → Python.
const MP_STR = 5;
const JS_NULL = 1;
const JS_STRING = 5;
const JS_OBJECT = 7;

// Error numbers as MicroPython prints them (its own errno table: `[Errno 13] EACCES`).
const ENOENT = 2;
const EBADF = 9;
const EACCES = 13;
const ESPIPE = 29;
const ENOSYS = 38;

const PAGE = 65_536;
const LONGJMP = Number.POSITIVE_INFINITY;

const FFI_IMPORTS = [
  "store_attr", "js_subscr_load", "js_subscr_store", "js_get_iter", "js_iter_next", "js_reflect_construct",
  "call0_kwarg", "calln_kwarg", "proxy_convert_mp_to_js_then_js_to_mp_obj_jsside",
  "proxy_convert_mp_to_js_then_js_to_js_then_js_to_mp_obj_jsside", "js_get_proxy_js_ref_info", "js_get_error_info",
  "js_then_resolve", "js_then_reject", "js_then_continue", "create_promise",
] as const;
const INVOKE_IMPORTS = ["i", "ii", "iii", "iiii", "iiiii", "iiiiii", "v", "vi", "vii", "viii", "viiii"] as const;
const REFUSED_PATH_CALLS = ["__syscall_chdir", "__syscall_mkdirat", "__syscall_renameat", "__syscall_rmdir", "__syscall_unlinkat"] as const;
const MISSING_PATH_CALLS = ["__syscall_stat64", "__syscall_lstat64", "__syscall_newfstatat"] as const;

function ffiRefused(name: string): never {
  throw new GuestStop(new ReachError(
    "EXEC_SANDBOX_VIOLATION",
    `Python tried to use the JavaScript FFI (${name}); the sandbox has no JavaScript host — use the reach object for host access`,
    { details: { reason: "js-ffi", import: name } },
  ));
}

/** Bounds-checked access to the instance's memory (views are made afresh: the memory may have grown). */
class Mem {
  constructor(private readonly link: Link) {}
  get exports(): InterpreterExports {
    const x = this.link.exports;
    if (x === undefined) throw new WebAssembly.RuntimeError("the interpreter is not linked");
    return x;
  }
  bytes(ptr: number, len: number): Uint8Array {
    const buf = this.exports.memory.buffer;
    if (ptr < 0 || len < 0 || ptr + len > buf.byteLength) throw new WebAssembly.RuntimeError("guest pointer out of bounds");
    return new Uint8Array(buf, ptr, len);
  }
  view(): DataView {
    return new DataView(this.exports.memory.buffer);
  }
  cstring(ptr: number, max = 4096): string {
    const u8 = new Uint8Array(this.exports.memory.buffer);
    let end = ptr;
    while (end < u8.length && u8[end] !== 0 && end - ptr < max) end++;
    return new TextDecoder().decode(u8.subarray(ptr, end));
  }
  /** A Python → JS value at `ptr` (three words): its text when it is a `str`, else null. */
  pyString(ptr: number): string | null {
    const v = this.view();
    if (v.getInt32(ptr, true) !== MP_STR) return null;
    return new TextDecoder().decode(this.bytes(v.getUint32(ptr + 8, true), v.getUint32(ptr + 4, true))); // [tag, len, data]
  }
  /** Hand Python a string (or None when the interpreter cannot allocate it) at `out`. */
  toPython(text: string, out: number): void {
    const utf8 = new TextEncoder().encode(text);
    const ptr = this.exports.malloc(utf8.length + 1);
    const v = this.view();
    if (ptr === 0) {
      v.setUint32(out, JS_NULL, true);
      return;
    }
    const dst = this.bytes(ptr, utf8.length + 1);
    dst.set(utf8);
    dst[utf8.length] = 0;
    v.setUint32(out, JS_STRING, true);
    v.setUint32(out + 4, utf8.length, true);
    v.setUint32(out + 8, ptr, true);
  }
}

function ffiImports(link: Link, mem: Mem): Record<string, unknown> {
  const channel = (ref: number, args: number[], out: number): number => {
    const name = CHANNEL_BY_REF.get(ref);
    if (name === undefined) ffiRefused("call");
    mem.toPython(link.hooks.channel(name, args.map((p) => mem.pyString(p))), out);
    return 0;
  };
  const env: Record<string, unknown> = {
    lookup_attr: (ref: number, attr: number, out: number): number => {
      const fn = ref === REF_REACH ? FUNCTION_REFS.get(mem.cstring(attr)) : undefined;
      if (fn === undefined) return 0; // missing: Python sees an AttributeError
      const v = mem.view();
      v.setUint32(out, JS_OBJECT, true);
      v.setUint32(out + 4, fn, true);
      return 1; // found; not 2 ("a JavaScript method"), which would pass the `_reach` object as a first argument
    },
    has_attr: (ref: number, attr: number): number => (ref === REF_REACH && FUNCTION_REFS.has(mem.cstring(attr)) ? 1 : 0),
    call0: (ref: number, out: number) => channel(ref, [], out),
    call1: (ref: number, _self: number, a0: number, out: number) => channel(ref, [a0], out),
    call2: (ref: number, _self: number, a0: number, a1: number, out: number) => channel(ref, [a0, a1], out),
    calln: (ref: number, _self: number, n: number, args: number, out: number) => {
      if (n < 0 || n > 16) ffiRefused("calln");
      return channel(ref, Array.from({ length: n }, (_, i) => args + i * 12), out);
    },
    proxy_js_free_obj: () => undefined, // our references are static
    js_check_existing: () => -1, // no Python object was ever handed to JavaScript
  };
  for (const name of FFI_IMPORTS) env[name] = () => ffiRefused(name);
  return env;
}

function emscriptenImports(link: Link, mem: Mem): Record<string, unknown> {
  const env: Record<string, unknown> = {
    _emscripten_throw_longjmp: () => {
      throw LONGJMP;
    },
    _abort_js: () => {
      throw new WebAssembly.RuntimeError("the Python interpreter aborted");
    },
    emscripten_resize_heap: (requested: number): number => {
      const memory = mem.exports.memory;
      const want = requested >>> 0;
      const cur = memory.buffer.byteLength;
      if (want <= cur) return 1;
      const cap = link.hooks.memoryCapBytes;
      if (want > cap) {
        link.hooks.memoryRefused(want);
        return 0;
      }
      const target = Math.min(cap, Math.ceil(Math.max(want, cur + cur / 4) / PAGE) * PAGE);
      try {
        memory.grow((target - cur) / PAGE);
        return 1;
      } catch {
        link.hooks.memoryRefused(want);
        return 0;
      }
    },
    mp_js_time_ms: () => link.hooks.timeMs(),
    mp_js_ticks_ms: () => link.hooks.ticksMs(),
    mp_js_random_u32: () => link.hooks.randomU32() | 0,
  };
  for (const sig of INVOKE_IMPORTS) {
    env[`invoke_${sig}`] = (index: number, ...args: number[]) => {
      const x = mem.exports;
      const sp = x.emscripten_stack_get_current();
      try {
        return (x.__indirect_function_table.get(index) as (...a: number[]) => number)(...args);
      } catch (err) {
        x._emscripten_stack_restore(sp);
        if (err !== LONGJMP) throw err;
        x.setThrew(1, 0);
        return 0;
      }
    };
  }
  return env;
}

function fileImports(mem: Mem): Record<string, unknown> {
  const env: Record<string, unknown> = {
    __syscall_openat: () => -EACCES,
    __syscall_fstat64: () => -EBADF,
    __syscall_getdents64: () => -EBADF,
    __syscall_statfs64: () => -ENOSYS,
    __syscall_poll: () => 0,
    __syscall_getcwd: (buf: number, size: number): number => {
      if (size < 2) return -34; // ERANGE
      mem.bytes(buf, 2).set([0x2f, 0]); // "/"
      return 2;
    },
  };
  for (const name of REFUSED_PATH_CALLS) env[name] = () => -EACCES;
  for (const name of MISSING_PATH_CALLS) env[name] = () => -ENOENT;
  return env;
}

function wasiImports(link: Link, mem: Mem): Record<string, unknown> {
  const stdio = (fd: number) => fd === 0 || fd === 1 || fd === 2;
  return {
    fd_write: (fd: number, iovs: number, count: number, written: number): number => {
      if (fd !== 1 && fd !== 2) return EBADF;
      let total = 0;
      for (let i = 0; i < count; i++) {
        const v = mem.view();
        const bytes = mem.bytes(v.getUint32(iovs + i * 8, true), v.getUint32(iovs + i * 8 + 4, true));
        link.hooks.write(fd, bytes);
        total += bytes.length;
      }
      mem.view().setUint32(written, total, true);
      return 0;
    },
    fd_read: (fd: number, _iovs: number, _count: number, read: number): number => {
      if (fd !== 0) return EBADF;
      mem.view().setUint32(read, 0, true); // stdin is empty
      return 0;
    },
    fd_close: (fd: number) => (stdio(fd) ? 0 : EBADF),
    fd_sync: (fd: number) => (stdio(fd) ? 0 : EBADF),
    fd_seek: (fd: number) => (stdio(fd) ? ESPIPE : EBADF),
  };
}

/** Hooks for an instance no invocation holds: every guest-visible hook stops the call. */
export function idleHooks(): GuestHooks {
  const stop = (): never => {
    throw new GuestStop(new ReachError("EXEC_ABORTED", "no invocation is running in this interpreter"));
  };
  return { memoryCapBytes: 0, memoryRefused: () => undefined, channel: stop, write: () => undefined, timeMs: stop, ticksMs: stop, randomU32: stop };
}

/**
 * A fresh import object and the link through which it answers.
 * @returns the imports (modules `env` and `wasi_snapshot_preview1`) and their link (exports unset, idle hooks)
 * @example const { imports, link } = makeImports(); link.exports = instance.exports;
 */
export function makeImports(): { imports: WebAssembly.Imports; link: Link } {
  const link: Link = { exports: undefined, hooks: idleHooks() };
  const mem = new Mem(link);
  const env = { ...ffiImports(link, mem), ...emscriptenImports(link, mem), ...fileImports(mem) };
  return { imports: { env, wasi_snapshot_preview1: wasiImports(link, mem) } as WebAssembly.Imports, link };
}
