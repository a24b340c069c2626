/**
 * Everything the Python runner does with fuel, in one place (`../fuel/` instruments the interpreter module and hands
 * out its budget in slices through the `reach_fuel.refill` import): compiling the metered module, the refill import
 * of each instance (a `FuelSlot`), binding an invocation's `FuelMeter` (or a meter of its own for preparing), charging
 * work done outside the metered code, and turning the meter's outcome into an error. An instance whose call trapped
 * is never given to an invocation again (the runner drops it).
 * @module
 */
import { FuelMeter, FuelSlot, getMeteredModule, meterError, unmeteredWork } from "../fuel/mod.ts";
import type { MeteredModuleStore } from "../fuel/mod.ts";
import type { ReachError } from "../../protocol/mod.ts";

/** What fuel handling needs of an interpreter: its refill slot (null when unmetered). */
type Metered = { readonly slot: FuelSlot | null };

/** Fuel charged for each import call that does work outside the metered code (a write, a tick, a channel call). */
export const IMPORT_CALL_FUEL = 100;
/** Plus one unit per this many bytes such a call copies. */
export const IMPORT_BYTES_PER_UNIT = 64;

/**
 * Compile the interpreter module, fuel-instrumented when `metered` (once per process: `getMeteredModule` caches).
 * @param bytes the interpreter's WebAssembly bytes
 * @param metered whether to instrument
 * @param store where the instrumented module is kept between processes (null: memory only)
 * @returns the compiled module
 * @throws ReachError `PACK_MALFORMED` when binaryen rejects the module
 * @example const module = await compileInterpreter(bytes, true);
 */
export async function compileInterpreter(bytes: Uint8Array, metered: boolean, store: MeteredModuleStore | null = null): Promise<WebAssembly.Module> {
  return metered ? (await getMeteredModule(bytes, {}, store)).module : WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
}

/**
 * The refill import of a new instance (merge `slot.imports` into its imports; `slot.attach(instance)` after).
 * @param metered whether the module is instrumented
 * @returns the slot, or null for an unmetered module
 * @example const slot = newFuelSlot(true);
 */
export function newFuelSlot(metered: boolean): FuelSlot | null {
  return metered ? new FuelSlot() : null;
}

/**
 * Let an interpreter run work that is no invocation's (preparing it; reading its state after a trap) on a meter of
 * its own. Release the returned meter when done.
 * @param interp the interpreter
 * @returns the meter
 * @example const setup = prepareFuel(interp); try { init(); } finally { setup.release(); }
 */
export function prepareFuel(interp: Metered): FuelMeter {
  const meter = unmeteredWork();
  if (interp.slot !== null) meter.bind(interp.slot);
  return meter;
}

/**
 * Draw an interpreter's fuel from an invocation's meter (its own, or one with budget `fuel`) from now on, and start
 * the meter's clock (the watchdog counts from here: preparing the interpreter was not the tool's time).
 * @param interp the interpreter
 * @param inv the invocation's meter and budget
 * @returns the meter to charge and release
 * @example const meter = invocationFuel(interp, invocation);
 */
export function invocationFuel(interp: Metered, inv: { meter?: FuelMeter; fuel: bigint }): FuelMeter {
  const meter = inv.meter ?? new FuelMeter({ budget: inv.fuel });
  if (interp.slot !== null) meter.bind(interp.slot);
  meter.start();
  return meter;
}

/**
 * Charge an import call's work to the meter: {@link IMPORT_CALL_FUEL} plus one unit per {@link IMPORT_BYTES_PER_UNIT}
 * bytes it copied. The refill that follows (where a stop is noticed) comes at the interpreter's next tick.
 * @param meter the invocation's meter
 * @param bytes bytes the call copied
 * @returns nothing
 * @example chargeImport(meter, text.length)
 */
export function chargeImport(meter: FuelMeter, bytes = 0): void {
  meter.charge(IMPORT_CALL_FUEL + Math.floor(bytes / IMPORT_BYTES_PER_UNIT));
}

/**
 * End an invocation's use of its meter.
 * @param meter the invocation's meter
 * @param toolName the tool, for the message
 * @returns the fuel used, and the meter's error (out of fuel, or stopped by an abort or the watchdog) or null
 * @example const { used, error } = releaseFuel(meter, "stats");
 */
export function releaseFuel(meter: FuelMeter, toolName: string): { used: bigint; error: ReachError | null } {
  const used = meter.release();
  return { used, error: meterError(meter, toolName) };
}

/**
 * Call into an interpreter whose last call trapped, only to read its state (on a meter of its own).
 * @param interp the interpreter (dropped afterwards)
 * @param probe a call that reads state (a few ticks)
 * @returns what `probe` returns
 * @example probeAfterTrap(interp, () => interp.exports.emscripten_stack_get_current())
 */
export function probeAfterTrap<T>(interp: Metered, probe: () => T): T {
  const meter = prepareFuel(interp);
  try {
    return probe();
  } finally {
    meter.release();
  }
}
