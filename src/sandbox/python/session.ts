/**
 * A prepared interpreter kept across invocations (README.md "Reuse"): a fresh instance on which MicroPython was
 * initialised, the `_reach` module registered and the prelude executed, and a snapshot of its memory taken right
 * after. Each invocation executes the driver (`_run()`) on it; afterwards the snapshot is put back, so the next
 * invocation starts from the same bytes whatever ran before — fuel, outputs and `id()`s do not depend on history.
 * An instance whose call did not return normally (a trap, a stop, a fuel trap) is dropped, never called again.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { prepareFuel } from "./fuel.ts";
import { idleHooks, REF_REACH } from "./imports.ts";
import type { GuestHooks } from "./imports.ts";
import { INTERPRETER_BASE_BYTES, raiseStackLimit } from "./interpreter.ts";
import type { Interpreter, PythonEngine } from "./interpreter.ts";
import type { SandboxApiLevel } from "../types.ts";
import { DRIVER_SOURCE, preludeSource } from "./prelude.ts";
import { MemorySnapshot } from "./snapshot.ts";

/** MicroPython's Python stack (frames of Python calls), in words: 64 KiB. */
export const PYSTACK_WORDS = 16_384;
/** MicroPython's first GC heap (more is added on demand, up to the memory cap). */
export const INITIAL_HEAP_BYTES = 512 * 1024;

const MP_EXCEPTION = -1;

/** How one execution of the driver ended. */
export type RawResult =
  | { kind: "returned" }
  | { kind: "raised"; type: string; text: string }
  | { kind: "threw"; error: unknown };

/** Hooks while preparing: no host, no clock, no randomness; the memory may grow a little. */
function prepareHooks(): GuestHooks {
  return { ...idleHooks(), memoryCapBytes: INTERPRETER_BASE_BYTES + 16 * 1024 * 1024, ticksMs: () => 0 };
}

/** Copy a NUL-terminated UTF-8 string into the interpreter's heap. */
function cString(interp: Interpreter, text: string): { ptr: number; len: number } {
  const utf8 = new TextEncoder().encode(text);
  const ptr = interp.exports.malloc(utf8.length + 1);
  if (ptr === 0) throw new Error("the interpreter could not allocate a string");
  const dst = new Uint8Array(interp.memory.buffer, ptr, utf8.length + 1);
  dst.set(utf8);
  dst[utf8.length] = 0;
  return { ptr, len: utf8.length };
}

/** Read the value `mp_js_do_exec` left at `out`. */
function readResult(interp: Interpreter, out: number): RawResult {
  const view = new DataView(interp.memory.buffer);
  if (view.getInt32(out, true) !== MP_EXCEPTION) return { kind: "returned" };
  const len = view.getUint32(out + 4, true);
  const ptr = view.getUint32(out + 8, true);
  if (ptr === 0 || ptr + len > interp.memory.buffer.byteLength) return { kind: "raised", type: "MemoryError", text: "" };
  const full = new TextDecoder().decode(new Uint8Array(interp.memory.buffer, ptr, len));
  const sep = full.indexOf("\x04");
  return sep < 0 ? { kind: "raised", type: "", text: full } : { kind: "raised", type: full.slice(0, sep), text: full.slice(sep + 1) };
}

/** A prepared interpreter and the snapshot of its memory. */
export class WarmInterpreter {
  readonly interp: Interpreter;
  /** The sandbox API level whose prelude it ran (a snapshot serves that level only). */
  readonly level: SandboxApiLevel;
  readonly #snapshot: MemorySnapshot | null;
  readonly #driver: { ptr: number; len: number };
  readonly #out: number;

  private constructor(interp: Interpreter, level: SandboxApiLevel, snapshot: MemorySnapshot | null, driver: { ptr: number; len: number }, out: number) {
    this.interp = interp;
    this.level = level;
    this.#snapshot = snapshot;
    this.#driver = driver;
    this.#out = out;
  }

  /**
   * Prepare a fresh interpreter: initialise MicroPython, register `_reach`, run the prelude and (when `keep`)
   * snapshot the memory. Preparing is not charged to any invocation (it runs with `PREPARE_FUEL`).
   * @param engine the engine to instantiate
   * @param keep take a snapshot so that the interpreter can serve more than one invocation
   * @param level the sandbox API level (which prelude, `preludeSource`; default 1)
   * @returns the prepared interpreter
   * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when it cannot be prepared
   * @example const warm = await WarmInterpreter.prepare(engine, true);
   */
  static async prepare(engine: PythonEngine, keep: boolean, level: SandboxApiLevel = 1): Promise<WarmInterpreter> {
    const interp = await engine.instantiate();
    interp.link.hooks = prepareHooks();
    const setup = prepareFuel(interp);
    try {
      const x = interp.exports;
      x.mp_js_init(PYSTACK_WORDS, INITIAL_HEAP_BYTES);
      raiseStackLimit(interp);
      x.proxy_c_init();
      const name = cString(interp, "_reach");
      const value = x.malloc(12);
      new Uint32Array(interp.memory.buffer, value, 3).set([7, REF_REACH, 0]); // a JavaScript object, ref 2
      x.mp_js_register_js_module(name.ptr, value);
      const prelude = cString(interp, preludeSource(level));
      const out = x.malloc(12);
      x.mp_js_do_exec(prelude.ptr, prelude.len, out);
      const ran = readResult(interp, out);
      if (ran.kind === "raised") throw new Error(`the prelude raised ${ran.type}: ${ran.text}`);
      const driver = cString(interp, DRIVER_SOURCE);
      interp.link.hooks = idleHooks();
      return new WarmInterpreter(interp, level, keep ? MemorySnapshot.take(interp.memory) : null, driver, out);
    } catch (err) {
      if (err instanceof ReachError) throw err;
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the Python interpreter could not be prepared; reinstall dependencies", { cause: err });
    } finally {
      setup.release();
    }
  }

  /** Bytes a restore copies (0 without a snapshot). */
  get snapshotBytes(): number {
    return this.#snapshot?.size ?? 0;
  }

  /** The interpreter's linear memory size now. */
  get memoryBytes(): number {
    return this.interp.memory.buffer.byteLength;
  }

  /**
   * Execute the driver once, answering through `hooks` (the caller has bound the invocation's fuel meter).
   * @param hooks the invocation's hooks
   * @returns how the driver ended
   */
  execute(hooks: GuestHooks): RawResult {
    const interp = this.interp;
    interp.link.hooks = hooks;
    try {
      interp.exports.mp_js_do_exec(this.#driver.ptr, this.#driver.len, this.#out);
      return readResult(interp, this.#out);
    } catch (error) {
      return { kind: "threw", error };
    } finally {
      interp.link.hooks = idleHooks();
    }
  }

  /**
   * After an execution that returned (normally or with a Python exception): put the snapshot back.
   * @param maxMemoryBytes keep the interpreter only while its memory is at most this large
   * @returns true when the interpreter is in its snapshot's state again and may serve another invocation
   */
  reset(maxMemoryBytes: number): boolean {
    const snapshot = this.#snapshot;
    if (snapshot === null || this.memoryBytes > maxMemoryBytes) return false;
    snapshot.restore(this.interp.memory);
    return true;
  }
}
