/**
 * Deterministic fuel metering for core WebAssembly modules (ARCHITECTURE.md "Stopping a tool that will not stop").
 *
 * `instrumentFuel` rewrites a module with binaryen so that it carries one exported, mutable i64 global
 * (`reach_fuel`) and imports one function, `reach_fuel.refill: (i64) -> i64`. Every function entry and every loop
 * iteration (the head of each `loop` body) subtracts one unit; when the counter drops below zero the module asks the
 * host for more:
 *
 * ```wat
 * (global.set $reach_fuel (i64.sub (global.get $reach_fuel) (i64.const 1)))
 * (if (i64.lt_s (global.get $reach_fuel) (i64.const 0))
 *   (then (global.set $reach_fuel (call $refill (global.get $reach_fuel)))
 *         (if (i64.lt_s (global.get $reach_fuel) (i64.const 0)) (then unreachable))))
 * ```
 *
 * The host (`FuelMeter`, `meter.ts`) hands out the budget in slices, so it regains control every slice: that is where
 * a budget runs out, and where an interrupt (a signal, the wall-clock watchdog) is noticed, always at the same tick
 * for the same fuel count — so a stop can be recorded as a fuel count and replayed exactly. Refusing (returning a
 * negative value) makes the module trap with `unreachable`, which guest code cannot catch. `memory.fill`,
 * `memory.copy` and `memory.init` cost one more unit per KiB of their length (charged before they run), so a loop of
 * bulk operations cannot run long on little fuel. Allocating GC objects (`struct.new`, `array.new*`) is refused:
 * their memory would escape the module's memory limit.
 *
 * Nothing else changes: imports (the refill import is added after them), exports, memories, tables, data and element
 * segments, the start function and custom sections (the name section included) are kept. The counter starts at 0,
 * so even a start function asks the host first. No optimisation pass runs, so the output is a pure function of the
 * input bytes. Where the ticks and charges go (every loop, every bulk memory operation, refusing what the walk cannot
 * look into) is found by `_expression-walk.ts`.
 *
 * binaryen (≈14 MB of JavaScript, top-level-await initialised, ~0.9 s to load) is imported lazily on first use,
 * so modules that import this file pay nothing until they instrument something.
 * @module
 */
import type BinaryenNs from "binaryen";
import { ReachError } from "../../protocol/mod.ts";
import { collectSites } from "./_expression-walk.ts";
import type { Binaryen, ExpressionRef } from "./_expression-walk.ts";

type Module = BinaryenNs.Module;

/** The export name of the fuel counter: an exported mutable i64 global. */
export const FUEL_EXPORT = "reach_fuel";
/** The import module and field of the refill function every instrumented module imports. */
export const REFILL_MODULE = "reach_fuel";
export const REFILL_FIELD = "refill";
/** Bulk memory operations cost one extra unit per this many bytes of length. */
export const BULK_BYTES_PER_UNIT = 1024;

/** Largest fuel value the i64 counter can hold (2^63 − 1). */
export const MAX_FUEL = (1n << 63n) - 1n;

/** Options of {@link instrumentFuel}. */
export type InstrumentFuelOptions = {
  /**
   * The counter's initial value, baked into the module (default 0: the first tick, even in a start function, asks
   * the refill import for a slice).
   */
  initialFuel?: bigint;
};

let binaryen: Binaryen | undefined;
let loading: Promise<Binaryen> | undefined;

/**
 * Load binaryen (once per process). `instrumentFuel` calls it itself; call it early to take the ~1 s load off
 * the first tool invocation.
 * @returns a promise that resolves once binaryen is ready
 * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the `binaryen` package cannot be loaded
 * @example await loadFuelInstrumenter();
 */
export async function loadFuelInstrumenter(): Promise<void> {
  await loadBinaryen();
}

async function loadBinaryen(): Promise<Binaryen> {
  if (binaryen !== undefined) return binaryen;
  loading ??= import("binaryen").then(
    (mod) => {
      const b = mod.default as Binaryen;
      binaryen = b;
      return b;
    },
    (cause: unknown) => {
      loading = undefined;
      throw new ReachError(
        "EXEC_RESOURCE_UNAVAILABLE",
        'fuel metering needs the "binaryen" package (a dependency of reach-wasm); reinstall dependencies',
        { cause },
      );
    },
  );
  return loading;
}

/**
 * Instrument a core WebAssembly module with a fuel counter (see the module documentation for what is inserted).
 * Deterministic: the same bytes and options always give the same output bytes, on Node and on Deno.
 * @param wasm the bytes of a core WebAssembly module (not a component)
 * @param options see {@link InstrumentFuelOptions}
 * @returns the instrumented module's bytes, which export the counter as `reach_fuel`
 * @throws ReachError `PACK_MALFORMED` when `wasm` is not a valid core module for this runtime, already exports
 *   `reach_fuel`, or uses instructions the instrumenter cannot walk (table.fill/copy/init, elem.drop, try_table,
 *   throw_ref, strings, stack switching)
 * @throws TypeError / RangeError for a bad argument
 * @example
 * const metered = await instrumentFuel(bytes);
 * const { instance } = await WebAssembly.instantiate(metered, imports);
 */
export async function instrumentFuel(
  wasm: Uint8Array,
  options: InstrumentFuelOptions = {},
): Promise<Uint8Array<ArrayBuffer>> {
  if (!(wasm instanceof Uint8Array)) throw new TypeError(`"wasm" expected Uint8Array, got ${typeof wasm}`);
  const initialFuel = options.initialFuel ?? 0n;
  if (typeof initialFuel !== "bigint") {
    throw new TypeError(`"options.initialFuel" expected a bigint, got ${typeof initialFuel}`);
  }
  if (initialFuel < 0n || initialFuel > MAX_FUEL) {
    throw new RangeError(`"options.initialFuel" expected 0..2^63-1, got ${initialFuel}`);
  }
  // WebAssembly.validate wants ArrayBuffer-backed bytes; slice() copies a view of a SharedArrayBuffer into one.
  const bytes = wasm.buffer instanceof ArrayBuffer ? (wasm as Uint8Array<ArrayBuffer>) : wasm.slice();
  checkCoreModule(bytes);
  const b = await loadBinaryen();
  return instrumentWith(b, bytes, initialFuel);
}

/** Refuse what is not a valid core module, with a message that says what it is instead. */
function checkCoreModule(wasm: Uint8Array<ArrayBuffer>): void {
  const magic = wasm.length >= 8 && wasm[0] === 0x00 && wasm[1] === 0x61 && wasm[2] === 0x73 && wasm[3] === 0x6d;
  if (!magic) {
    throw new ReachError(
      "PACK_MALFORMED",
      `fuel metering: the tool's code is not WebAssembly (it does not start with "\\0asm"; got ${wasm.length} bytes); ` +
        "build the tool as a .wasm module",
      { details: { reason: "not-wasm", size: wasm.length } },
    );
  }
  if (wasm[4] !== 0x01 || wasm[5] !== 0x00 || wasm[6] !== 0x00 || wasm[7] !== 0x00) {
    const component = wasm[6] === 0x01 && wasm[7] === 0x00;
    throw new ReachError(
      "PACK_MALFORMED",
      component
        ? "fuel metering: the tool's code is a WebAssembly component, not a core module; declare the tool as kind " +
            '"component" or build a core module'
        : "fuel metering: the tool's code has an unknown WebAssembly version; build a version 1 core module",
      { details: { reason: component ? "component" : "wasm-version", size: wasm.length } },
    );
  }
  if (!WebAssembly.validate(wasm)) {
    throw new ReachError(
      "PACK_MALFORMED",
      "fuel metering: the tool's code is not a valid WebAssembly module for this runtime " +
        "(WebAssembly.validate refused it); rebuild it, or check it with `wasm-tools validate`",
      { details: { reason: "invalid-wasm", size: wasm.length } },
    );
  }
}

function instrumentWith(b: Binaryen, wasm: Uint8Array<ArrayBuffer>, initialFuel: bigint): Uint8Array<ArrayBuffer> {
  // Features.All makes binaryen 132 write the compact import encoding, which V8 rejects (ARCHITECTURE.md).
  const features = b.Features.All & ~((b.Features as unknown as Record<string, number>)["CompactImports"] ?? 0);
  const savedDebugInfo = b.getDebugInfo();
  // debugInfo keeps a name section on output (better traps and stack traces) but would add one to modules that
  // had none; so it follows the input. The global flag is restored below.
  b.setDebugInfo(hasNameSection(wasm));
  try {
    let m: Module;
    try {
      // binaryen 132's JS takes the features as readBinary's second argument (its .d.ts names a
      // `readBinaryWithFeatures` that the JS does not define).
      m = (b.readBinary as (data: Uint8Array, features?: number) => Module)(wasm, features);
    } catch (cause) {
      throw new ReachError(
        "PACK_MALFORMED",
        "fuel metering: binaryen could not read the tool's module although the runtime validates it; " +
          "rebuild it without exotic features",
        { details: { reason: "unreadable" }, cause: cause instanceof Error ? cause : undefined },
      );
    }
    try {
      return instrumentModule(b, m, initialFuel);
    } finally {
      m.dispose();
    }
  } finally {
    b.setDebugInfo(savedDebugInfo);
  }
}

function instrumentModule(b: Binaryen, m: Module, initialFuel: bigint): Uint8Array<ArrayBuffer> {
  if (m.getExport(FUEL_EXPORT) !== 0) {
    throw new ReachError(
      "PACK_MALFORMED",
      `fuel metering: the module already exports "${FUEL_EXPORT}" (already instrumented, or a name clash); ` +
        "pass the original module, or rename that export",
      { details: { reason: "fuel-export-exists", export: FUEL_EXPORT } },
    );
  }
  const global = freshGlobalName(m, FUEL_EXPORT);
  m.addGlobal(global, b.i64, true, m.i64.const(initialFuel));
  m.addGlobalExport(global, FUEL_EXPORT);
  const refill = freshFunctionName(m, "reach_fuel_refill");
  m.addFunctionImport(refill, REFILL_MODULE, REFILL_FIELD, b.i64, b.i64);
  const fuel = (): ExpressionRef => m.global.get(global, b.i64);
  // Below zero: ask the host; still below zero: trap. A fresh tree per site: binaryen expressions must not be shared.
  const check = (): ExpressionRef =>
    m.if(
      m.i64.lt_s(fuel(), m.i64.const(0n)),
      m.block(null, [m.global.set(global, m.call(refill, [fuel()], b.i64)), m.if(m.i64.lt_s(fuel(), m.i64.const(0n)), m.unreachable())], b.none),
    );
  const tick = (): ExpressionRef => m.block(null, [m.global.set(global, m.i64.sub(fuel(), m.i64.const(1n))), check()], b.none);
  const charge = { i32: "", i64: "" };
  const chargeFor = (type: number): string => {
    const key = type === b.i64 ? "i64" : "i32";
    if (charge[key] !== "") return charge[key];
    const name = freshFunctionName(m, `reach_fuel_charge_${key}`);
    const len = m.local.get(0, type);
    const units = m.i64.shr_u(key === "i64" ? len : m.i64.extend_u(len), m.i64.const(BigInt(Math.log2(BULK_BYTES_PER_UNIT))));
    m.addFunction(name, type, type, [], m.block(null, [m.global.set(global, m.i64.sub(fuel(), units)), check(), m.local.get(0, type)], type));
    return (charge[key] = name);
  };
  const n = m.getNumFunctions();
  const chargeSize = (kind: "MemoryFill" | "MemoryCopy" | "MemoryInit", e: ExpressionRef): void => {
    const cls = (b as unknown as Record<string, { getSize(e: ExpressionRef): ExpressionRef; setSize(e: ExpressionRef, s: ExpressionRef): void }>)[kind]!;
    const size = cls.getSize(e);
    const type = b.getExpressionType(size);
    cls.setSize(e, m.call(chargeFor(type), [size], type));
  };
  for (let i = 0; i < n; i++) {
    const func = m.getFunctionByIndex(i);
    const body = b.Function.getBody(func);
    if (body === 0) continue; // an imported function
    const found = collectSites(b, body, b.Function.getName(func));
    for (const loop of found.loops) {
      const loopBody = b.Loop.getBody(loop);
      b.Loop.setBody(loop, m.block(null, [tick(), loopBody], b.getExpressionType(loopBody)));
    }
    for (const [kind, e] of found.bulk) chargeSize(kind, e);
    b.Function.setBody(func, m.block(null, [tick(), body], b.Function.getResults(func)));
  }
  const out = m.emitBinary() as Uint8Array<ArrayBuffer>; // a fresh copy out of binaryen's heap
  if (!WebAssembly.validate(out)) {
    throw new ReachError(
      "PACK_MALFORMED",
      "fuel metering: the instrumented module does not validate (a reach-wasm bug; please report it with the " +
        "module); the tool cannot run metered",
      { details: { reason: "instrumented-invalid" } },
    );
  }
  return out;
}

/** Whether a (validated) module has a custom section called "name": a walk over the section headers. */
function hasNameSection(wasm: Uint8Array): boolean {
  let pos = 8;
  const leb = (): number => {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = wasm[pos++] ?? 0;
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    return result;
  };
  while (pos < wasm.length) {
    const id = wasm[pos++];
    const size = leb();
    const end = pos + size;
    if (id === 0) {
      const len = leb();
      if (len === 4 && wasm[pos] === 0x6e && wasm[pos + 1] === 0x61 && wasm[pos + 2] === 0x6d && wasm[pos + 3] === 0x65) {
        return true;
      }
    }
    pos = end;
  }
  return false;
}

/** `base`, or `base_1`, … when a global of that internal name exists (names come from the name section). */
function freshGlobalName(module: Module, base: string): string {
  let name = base;
  for (let i = 1; module.getGlobal(name) !== 0; i++) name = `${base}_${i}`;
  return name;
}

/** `base`, or `base_1`, … when a function of that internal name exists. */
function freshFunctionName(module: Module, base: string): string {
  let name = base;
  for (let i = 1; module.getFunction(name) !== 0; i++) name = `${base}_${i}`;
  return name;
}
