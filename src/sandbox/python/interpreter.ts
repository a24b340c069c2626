/**
 * The Python interpreter: MicroPython 1.27.0's WebAssembly port (`@micropython/micropython-webassembly-pyscript`,
 * an emscripten build), instantiated from its `.wasm` alone with our own import object (`imports.ts`). The
 * package's JavaScript glue never runs: it would give Python a proxy of the host realm's `globalThis` (`import js`),
 * the real clock and `crypto.getRandomValues`, and an emscripten file system in our realm.
 *
 * The runner relies on facts about this exact build, so the bytes are pinned by SHA-256 (`PYTHON_WASM_SHA256`) and
 * any other build is refused (fail closed); README.md "Upgrading the interpreter" says how to re-derive them:
 * - the module defines its memory (259 pages initial, 2 GiB maximum) and has no `memory.grow` instruction: it grows
 *   only through the `emscripten_resize_heap` import, where `imports.ts` enforces the invocation's memory cap. We
 *   lower the initial size to {@link INITIAL_PAGES} (1 MiB; static data ends below 192 KiB) before compiling, so that
 *   a snapshot restore, which zeroes all memory above the heap, touches little;
 * - the C stack comes first (`--stack-first`): 64 KiB at [0, 65536), growing down; running past its bottom wraps
 *   below address 0 and traps (out of bounds) instead of overwriting anything;
 * - `sbrk`'s break is the 32-bit word at {@link BREAK_ADDRESS} (read by `snapshot.ts`);
 * - `nlr_jump_fail` (an exception raised where no handler is set, e.g. when the heap is exhausted or locked while
 *   an uncaught exception is being printed) is a `while (1);` — function 1219, its body at byte
 *   {@link NLR_JUMP_FAIL_BODY}. We replace the loop with `unreachable` (same length) before compiling, so such a
 *   failure traps at once instead of burning the whole fuel budget;
 * - MicroPython's C-stack check keeps `stack_top` / `stack_limit` at {@link CSTACK_TOP_ADDRESS} / +4; `mp_js_init`
 *   sets the limit to 32 KiB (≈150 Python frames) and we raise it to {@link CSTACK_LIMIT_BYTES} (≈280 frames),
 *   keeping a margin below the 64 KiB for C frames between two checks.
 * @module
 */
import { sha256Hex } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { coreSections, leb } from "../wasm-binary.ts";
import type { FuelSlot, MeteredModuleStore } from "../fuel/mod.ts";
import { compileInterpreter, newFuelSlot, prepareFuel } from "./fuel.ts";
import { makeImports } from "./imports.ts";
import type { InterpreterExports, Link } from "./imports.ts";

/** Where the interpreter's WebAssembly bytes come from (the platform layer reads them from node_modules). */
export type PythonWasmSource = Uint8Array | (() => Promise<Uint8Array>);

/** SHA-256 of `micropython.wasm` in `@micropython/micropython-webassembly-pyscript` 1.27.0. */
export const PYTHON_WASM_SHA256 = "06338c955b03c5700aa0069015d3e392d76836ef8e2ce25bedbe59b88ccd373c";
/** The npm package and version the digest belongs to (for messages). */
export const PYTHON_PACKAGE = "@micropython/micropython-webassembly-pyscript@1.27.0";

const PAGE = 65_536;
/** The module's own initial memory, in pages (its memory section). */
const MODULE_INITIAL_PAGES = 259;
/** The initial memory we give it, in pages. */
export const INITIAL_PAGES = 16;
/** The interpreter's initial memory in bytes. */
export const INTERPRETER_BASE_BYTES = INITIAL_PAGES * PAGE;
/** The module's own maximum (2 GiB). */
const MAX_PAGES = 32_768;
/** Top of the C stack ([0, 65536), stack first). */
export const STACK_TOP = 65_536;
/** Address of `sbrk`'s break in static data. */
export const BREAK_ADDRESS = 179_028;
/** Address of `MP_STATE_THREAD(stack_top)`; `stack_limit` follows it. */
export const CSTACK_TOP_ADDRESS = 185_108;
/** The C-stack limit we give MicroPython (of the 64 KiB stack; the rest is margin for C frames between checks). */
export const CSTACK_LIMIT_BYTES = 60_000;

/** One instance of the interpreter module, with its own memory and import link. Never reused after a trap. */
export type Interpreter = {
  readonly instance: WebAssembly.Instance;
  readonly exports: InterpreterExports;
  readonly memory: WebAssembly.Memory;
  /** What the instance's imports answer for (the current invocation's hooks). */
  readonly link: Link;
  /** The instance's fuel refill import (bind a `FuelMeter` to it), or null when the module is unmetered. */
  readonly slot: FuelSlot | null;
};

/**
 * The ceiling of an interpreter's linear memory for a memory limit: the module's initial memory plus the limit, in
 * whole pages, at most 2 GiB. The `emscripten_resize_heap` import refuses to grow past it.
 * @param memoryLimitBytes the invocation's memory limit
 * @returns the ceiling in bytes
 * @throws RangeError when the limit is not a positive safe integer
 * @example interpreterMemoryCap(64 * 1024 * 1024) // 68157440
 */
export function interpreterMemoryCap(memoryLimitBytes: number): number {
  if (!Number.isSafeInteger(memoryLimitBytes) || memoryLimitBytes <= 0) {
    throw new RangeError(`"memoryLimitBytes" expected a positive integer, got ${memoryLimitBytes}`);
  }
  return Math.min(MAX_PAGES, Math.ceil((memoryLimitBytes + INTERPRETER_BASE_BYTES) / PAGE)) * PAGE;
}

function unavailable(message: string, cause?: unknown): ReachError {
  return new ReachError("EXEC_RESOURCE_UNAVAILABLE", message, cause === undefined ? {} : { cause });
}

function wrongBuild(what: string): ReachError {
  return unavailable(
    `the Python interpreter's WebAssembly is not the build this runner was written for (${what}); ` +
      `install ${PYTHON_PACKAGE} (package.json pins it) or update src/sandbox/python/interpreter.ts`,
  );
}

/** Offset of `nlr_jump_fail`'s body in the pinned module: no locals, `loop br 0 end`, `end`. */
export const NLR_JUMP_FAIL_BODY = 249_810;
const NLR_LOOP = [0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b];
const NLR_TRAP = [0x00, 0x00, 0x01, 0x01, 0x01, 0x01, 0x0b]; // no locals, unreachable, nop × 4, end

/**
 * The pinned module as we run it: `nlr_jump_fail` traps instead of looping, and the memory section's initial size
 * is lowered to `INITIAL_PAGES` (its maximum unchanged).
 */
function patchModule(bytes: Uint8Array): Uint8Array {
  const at = NLR_JUMP_FAIL_BODY;
  if (bytes.subarray(at, at + NLR_LOOP.length).join() !== NLR_LOOP.join()) throw wrongBuild("unexpected nlr_jump_fail");
  const patched = bytes.slice();
  patched.set(NLR_TRAP, at);
  return withInitialPages(patched);
}

/** `bytes` with its memory section's initial size lowered to `INITIAL_PAGES` (the maximum unchanged). */
function withInitialPages(bytes: Uint8Array): Uint8Array {
  const section = coreSections(bytes).find((s) => s.id === 5);
  const limits = (min: number) => [...leb(1), 0x01, ...leb(min), ...leb(MAX_PAGES)];
  const body = section === undefined ? [] : [...bytes.subarray(section.bodyStart, section.end)];
  if (section === undefined || body.join() !== limits(MODULE_INITIAL_PAGES).join()) throw wrongBuild("unexpected memory section");
  const next = limits(INITIAL_PAGES);
  const head = [5, ...leb(next.length), ...next];
  const out = new Uint8Array(bytes.length - (section.end - section.start) + head.length);
  out.set(bytes.subarray(0, section.start), 0);
  out.set(head, section.start);
  out.set(bytes.subarray(section.end), section.start + head.length);
  return out;
}

/**
 * Compiles (and fuel-instruments) the interpreter module once, and makes fresh instances of it, each with its own
 * memory and our own imports.
 */
export class PythonEngine {
  readonly #source: PythonWasmSource;
  readonly #metered: boolean;
  readonly #store: MeteredModuleStore | null;
  #compiled: Promise<WebAssembly.Module> | undefined;

  /**
   * @param source the interpreter's WebAssembly bytes, or a loader for them
   * @param metered instrument with fuel (default true); without fuel a `while True: pass` never ends
   * @param store where the instrumented interpreter is kept between processes (default: memory only)
   */
  constructor(source: PythonWasmSource, metered = true, store: MeteredModuleStore | null = null) {
    this.#source = source;
    this.#metered = metered;
    this.#store = store;
  }

  /** Whether instances carry a fuel counter. */
  get metered(): boolean {
    return this.#metered;
  }

  #compile(): Promise<WebAssembly.Module> {
    this.#compiled ??= (async () => {
      let bytes: unknown;
      try {
        bytes = typeof this.#source === "function" ? await this.#source() : this.#source;
      } catch (err) {
        throw unavailable(`the Python interpreter could not be read; install ${PYTHON_PACKAGE}`, err);
      }
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`"pythonWasm" expected Uint8Array bytes of the interpreter`);
      if (sha256Hex(bytes) !== PYTHON_WASM_SHA256) throw wrongBuild("its SHA-256 differs");
      return compileInterpreter(patchModule(bytes), this.#metered, this.#store);
    })().catch((err: unknown) => {
      this.#compiled = undefined;
      throw err;
    });
    return this.#compiled;
  }

  /**
   * A fresh interpreter instance, started (emscripten constructors run) but with no Python state yet.
   * @returns the instance and its import link
   * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the interpreter cannot be loaded or is not the pinned build
   * @example const interp = await new PythonEngine(bytes).instantiate();
   */
  async instantiate(): Promise<Interpreter> {
    const module = await this.#compile();
    const { imports, link } = makeImports();
    const slot = newFuelSlot(this.#metered);
    let instance: WebAssembly.Instance;
    try {
      instance = new WebAssembly.Instance(module, slot === null ? imports : { ...imports, ...slot.imports });
      slot?.attach(instance);
    } catch (err) {
      throw unavailable("the Python interpreter could not be instantiated; reinstall dependencies", err);
    }
    const exports = instance.exports as unknown as InterpreterExports;
    if (!(exports.memory instanceof WebAssembly.Memory) || exports.memory.buffer.byteLength !== INTERPRETER_BASE_BYTES) {
      throw wrongBuild("unexpected memory");
    }
    link.exports = exports;
    const interp: Interpreter = { instance, exports, memory: exports.memory, link, slot };
    const setup = prepareFuel(interp); // emscripten's start-up is no invocation's work
    try {
      exports.emscripten_stack_init();
      exports.__wasm_call_ctors();
    } finally {
      setup.release();
    }
    const brk = new DataView(exports.memory.buffer).getUint32(BREAK_ADDRESS, true);
    if (brk <= CSTACK_TOP_ADDRESS || brk % 16 !== 0 || brk >= INTERPRETER_BASE_BYTES) throw wrongBuild(`break ${brk}`);
    return interp;
  }
}

/**
 * Raise MicroPython's C-stack limit after `mp_js_init` (see the module documentation).
 * @param interp an interpreter on which `mp_js_init` just ran
 * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the stack state is not where this build keeps it
 */
export function raiseStackLimit(interp: Interpreter): void {
  const view = new DataView(interp.memory.buffer);
  const top = view.getUint32(CSTACK_TOP_ADDRESS, true);
  const limit = view.getUint32(CSTACK_TOP_ADDRESS + 4, true);
  if (limit !== 32_768 || top > STACK_TOP || top < STACK_TOP - 256) throw wrongBuild(`C stack state ${top}/${limit}`);
  view.setUint32(CSTACK_TOP_ADDRESS + 4, CSTACK_LIMIT_BYTES, true);
}
