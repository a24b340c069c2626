/**
 * A deterministic WASI preview1 (`wasi_snapshot_preview1`) over the virtual workspace (ARCHITECTURE
 * "Determinism"): args and environ only as given, `clock_*` and `random_get` from virtual
 * sources, `poll_oneoff` virtual (clock subscriptions complete at once by advancing the virtual clock; fd
 * subscriptions are always ready), the standard streams captured with caps, preopens mapped to workspace folders,
 * links and renames as in `link-calls.ts`. Every preview1 function is implemented (`proc_raise`: `ENOTSUP`;
 * `sock_*`: `ENOTSOCK`, as no descriptor is a socket); an import this shim does not know at all is supplied as an
 * `ENOSYS` stub so that instantiation never fails on it.
 * @module
 */
import { nanos } from "../../determinism/mod.ts";
import { ClockId, Errno, WasiErrno } from "./errno.ts";
import { WasiContext, WasiExit } from "./context.ts";
import type { WasiOptions } from "./context.ts";
import { fdCalls } from "./fd-calls.ts";
import { fdMetaCalls } from "./fd-meta-calls.ts";
import { flush } from "./fd-table.ts";
import { linkCalls } from "./link-calls.ts";
import { u32 } from "./memory.ts";
import { pathCalls } from "./path-calls.ts";

type Fn = (...args: never[]) => number | void;

/** The import module name of WASI preview1. */
export const WASI_MODULE = "wasi_snapshot_preview1";
/** Resolution reported by `clock_res_get`: 1 ms, the virtual clock's step (in ns). */
export const CLOCK_RESOLUTION_NS = 1_000_000n;
/** Most random bytes one `random_get` call returns (larger requests are `EINVAL`). */
export const MAX_RANDOM_PER_CALL = 1 << 20;

/** Write `[ptr…]` pointer array + NUL-terminated strings (args_get / environ_get). */
function writeStrings(ctx: WasiContext, items: Uint8Array[], ptrs: number, buf: number): void {
  const size = items.reduce((s, b) => s + b.length, 0);
  ctx.mem.check(ptrs, items.length * 4, 4);
  ctx.mem.bytes(buf, size);
  let at = buf;
  items.forEach((b, i) => {
    ctx.mem.setU32(ptrs + i * 4, at);
    ctx.mem.bytes(at, b.length).set(b);
    at += b.length;
  });
}

function writeSizes(ctx: WasiContext, items: Uint8Array[], countPtr: number, sizePtr: number): void {
  ctx.mem.check(countPtr, 4, 4);
  ctx.mem.check(sizePtr, 4, 4);
  ctx.mem.setU32(countPtr, items.length);
  ctx.mem.setU32(sizePtr, items.reduce((s, b) => s + b.length, 0));
}

function baseCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  return {
    args_sizes_get: (c: number, s: number) => writeSizes(ctx, ctx.args, u32(c), u32(s)),
    args_get: (p: number, b: number) => writeStrings(ctx, ctx.args, u32(p), u32(b)),
    environ_sizes_get: (c: number, s: number) => writeSizes(ctx, ctx.env, u32(c), u32(s)),
    environ_get: (p: number, b: number) => writeStrings(ctx, ctx.env, u32(p), u32(b)),
    clock_res_get: (id: number, out: number) => {
      if (u32(id) > ClockId.THREAD_CPUTIME) throw new WasiErrno(Errno.INVAL, "unknown clock");
      m.check(u32(out), 8, 8);
      m.setU64(u32(out), CLOCK_RESOLUTION_NS);
    },
    clock_time_get: (id: number, _precision: bigint, out: number) => {
      if (u32(id) > ClockId.THREAD_CPUTIME) throw new WasiErrno(Errno.INVAL, "unknown clock");
      m.check(u32(out), 8, 8);
      // Every clock (realtime, monotonic, CPU time) is the virtual clock, read once per call (VirtualClock.read).
      m.setU64(u32(out), nanos(ctx.sources.readClockMs()));
    },
    random_get: (buf: number, len: number) => {
      if (u32(len) > MAX_RANDOM_PER_CALL) throw new WasiErrno(Errno.INVAL, "random_get request too large");
      const target = m.bytes(u32(buf), u32(len));
      for (let at = 0; at < target.length; at += 65_536) {
        const n = Math.min(65_536, target.length - at);
        const chunk = ctx.sources.randomBytes(n);
        if (!(chunk instanceof Uint8Array) || chunk.length !== n) throw new WasiErrno(Errno.IO, "random source failed");
        m.bytes(u32(buf) + at, n).set(chunk);
      }
    },
    poll_oneoff: (inPtr: number, outPtr: number, n: number, neventsPtr: number) => pollOneoff(ctx, u32(inPtr), u32(outPtr), u32(n), u32(neventsPtr)),
    proc_exit: (code: number) => {
      throw new WasiExit(u32(code));
    },
    proc_raise: () => Errno.NOTSUP,
    sched_yield: () => Errno.SUCCESS,
  };
}

/**
 * `poll_oneoff` (subscription: 48 bytes, event: 32 bytes). fd subscriptions are ready at once (stdin and files
 * report the bytes left); when there are none, the earliest clock subscription fires after the virtual clock is
 * advanced to it. Nothing ever blocks.
 */
function pollOneoff(ctx: WasiContext, inPtr: number, outPtr: number, n: number, neventsPtr: number): void {
  const m = ctx.mem;
  if (n === 0 || n > 4096) throw new WasiErrno(Errno.INVAL, "bad subscription count");
  m.check(inPtr, n * 48, 8);
  m.check(outPtr, n * 32, 8);
  m.check(neventsPtr, 4, 4);
  type Ev = { userdata: bigint; error: number; type: number; nbytes: bigint };
  const fdEvents: Ev[] = [];
  const clocks: { userdata: bigint; delayMs: number; error: number }[] = [];
  for (let i = 0; i < n; i++) {
    const s = inPtr + i * 48;
    const userdata = m.getU64(s);
    const tag = m.getU8(s + 8);
    if (tag === 0) {
      const id = m.getU32(s + 16);
      const timeout = m.getU64(s + 24);
      const absolute = (m.getU16(s + 40) & 1) !== 0;
      if (id > ClockId.THREAD_CPUTIME) {
        clocks.push({ userdata, delayMs: 0, error: Errno.INVAL });
        continue;
      }
      const ms = Number((timeout + 999_999n) / 1_000_000n);
      clocks.push({ userdata, delayMs: Math.min(absolute ? 0 : ms, 365 * 24 * 3600 * 1000), error: 0 });
      if (absolute) {
        // Absolute deadline: the delay is deadline − now (without reading the clock twice).
        const target = Number(timeout / 1_000_000n);
        clocks[clocks.length - 1]!.delayMs = -target; // resolved below
      }
    } else if (tag === 1 || tag === 2) {
      const fd = m.getU32(s + 16);
      let error = 0;
      let nbytes = 0n;
      try {
        const e = ctx.fds.get(fd);
        if (tag === 1 && e.kind === "stdin") nbytes = BigInt(e.data.length - e.pos);
        if (tag === 1 && e.kind === "file") nbytes = BigInt(Math.max(0, e.file.size - e.pos));
      } catch {
        error = Errno.BADF;
      }
      fdEvents.push({ userdata, error, type: tag, nbytes });
    } else {
      throw new WasiErrno(Errno.INVAL, "unknown subscription tag");
    }
  }
  let events: Ev[] = fdEvents;
  if (events.length === 0) {
    const hasAbsolute = clocks.some((c) => c.delayMs < 0);
    const now = hasAbsolute ? ctx.sources.readClockMs() : 0;
    for (const c of clocks) if (c.delayMs < 0) c.delayMs = Math.max(0, -c.delayMs - now);
    const min = Math.min(...clocks.map((c) => (c.error !== 0 ? 0 : c.delayMs)));
    if (min > 0) ctx.sources.sleepMs?.(min);
    events = clocks
      .filter((c) => c.error !== 0 || c.delayMs <= min)
      .map((c) => ({ userdata: c.userdata, error: c.error, type: 0, nbytes: 0n }));
  }
  events.forEach((ev, i) => {
    const e = outPtr + i * 32;
    m.bytes(e, 32).fill(0);
    m.setU64(e, ev.userdata);
    m.setU16(e + 8, ev.error);
    m.setU8(e + 10, ev.type);
    m.setU64(e + 16, ev.nbytes);
  });
  m.setU32(neventsPtr, events.length);
}

/** The `wasi_snapshot_preview1` function imports of a module, in import order (listed once per module). */
const importNames = new WeakMap<WebAssembly.Module, readonly string[]>();

function wasiImportNames(module: WebAssembly.Module): readonly string[] {
  let names = importNames.get(module);
  if (names === undefined) {
    names = WebAssembly.Module.imports(module).filter((i) => i.module === WASI_MODULE && i.kind === "function").map((i) => i.name);
    importNames.set(module, names);
  }
  return names;
}

/**
 * One WASI preview1 instance: build its imports for a module, bind the memory after instantiation, and flush open
 * files when the run ends.
 * @example
 * const wasi = new WasiPreview1({ args: ["tool"], sources: virtualSources(clock, stream), fs: ws, preopens });
 * const instance = await WebAssembly.instantiate(module, wasi.imports(module));
 * wasi.bind(instance);
 * try { (instance.exports._start as () => void)(); } catch (e) { if (!(e instanceof WasiExit)) throw e; }
 */
export class WasiPreview1 {
  /** The instance state (fds, captured output, remembered violation, exit). */
  readonly ctx: WasiContext;
  /** The implementations, unwrapped; each is wrapped on first use (a module imports only a few of them). */
  readonly #impl: readonly Record<string, Fn>[];
  #all: Record<string, (...args: unknown[]) => number> | null = null;

  /**
   * @param options see {@link WasiOptions}
   * @throws TypeError for malformed args, env or preopens
   */
  constructor(options: WasiOptions) {
    this.ctx = new WasiContext(options);
    // not merged: spreading ~45 keys costs more than the run of a small tool
    this.#impl = [baseCalls(this.ctx), fdCalls(this.ctx), fdMetaCalls(this.ctx), pathCalls(this.ctx), linkCalls(this.ctx)];
  }

  #find(name: string): Fn | undefined {
    for (const part of this.#impl) if (Object.hasOwn(part, name)) return part[name];
    return undefined;
  }

  /**
   * Every implemented preview1 function, wrapped (for tests and embedders that call them directly).
   * @returns name → function; each returns an errno and never throws except the WasiExit / WasiHalt sentinels
   * @example wasi.functions().sched_yield!() // 0
   */
  functions(): Readonly<Record<string, (...args: unknown[]) => number>> {
    if (this.#all === null) {
      const calls: Record<string, (...args: unknown[]) => number> = {};
      for (const part of this.#impl) for (const name of Object.keys(part)) calls[name] = this.ctx.wrap(part[name]!);
      this.#all = calls;
    }
    return this.#all;
  }

  /**
   * The `wasi_snapshot_preview1` import functions a module needs; unknown names get `ENOSYS` stubs.
   * @param module the compiled module (its import list decides which stubs exist)
   * @returns `{ wasi_snapshot_preview1: {...} }`, to merge with other import modules
   * @example WebAssembly.instantiate(module, wasi.imports(module))
   */
  imports(module: WebAssembly.Module): Record<string, Record<string, WebAssembly.ImportValue>> {
    const ns: Record<string, WebAssembly.ImportValue> = {};
    for (const name of wasiImportNames(module)) ns[name] = this.ctx.wrap(this.#find(name) ?? (() => Errno.NOSYS));
    return { [WASI_MODULE]: ns };
  }

  /**
   * Attach the instance's exported memory (required before the guest runs).
   * @param instance the instance
   * @returns nothing
   * @throws TypeError when it exports no `memory`
   * @example wasi.bind(instance)
   */
  bind(instance: WebAssembly.Instance): void {
    this.ctx.mem.bind(instance.exports["memory"] as WebAssembly.Memory);
  }

  /**
   * Write back every open file that has unflushed writes (fd order); errors are remembered, never thrown.
   * @returns nothing
   * @example wasi.finish()
   */
  finish(): void {
    if (this.ctx.fs === null) return;
    for (const [, e] of this.ctx.fds.entries()) {
      if (e.kind !== "file") continue;
      try {
        flush(this.ctx.fs, e.file);
      } catch (err) {
        if (err instanceof Error && "code" in err) this.ctx.remember(err as never);
      }
    }
  }
}


