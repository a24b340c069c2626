/**
 * Everything the Python runner does with fuel, in one place (`../fuel/` instruments the interpreter module and reads
 * its counter): compiling the metered module, giving an instance a budget, reading what it spent, and recognising
 * the fuel trap. An instance whose call trapped is never called again (the runner drops it).
 * @module
 */
import { fuelError, fuelUsed, getMeteredModule, isFuelExhausted, MAX_FUEL, setFuel } from "../fuel/mod.ts";
import type { ReachError } from "../../protocol/errors.ts";

/** The part of an interpreter fuel handling needs. */
type Metered = { readonly instance: WebAssembly.Instance; readonly metered: boolean };

/**
 * Compile the interpreter module, fuel-instrumented when `metered` (once per process: `getMeteredModule` caches).
 * @param bytes the interpreter's WebAssembly bytes
 * @param metered whether to instrument
 * @returns the compiled module
 * @throws ReachError `PACK_MALFORMED` when binaryen rejects the module
 * @example const module = await compileInterpreter(bytes, true);
 */
export async function compileInterpreter(bytes: Uint8Array, metered: boolean): Promise<WebAssembly.Module> {
  return metered ? (await getMeteredModule(bytes)).module : WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
}

/**
 * Give an interpreter a budget before calling into it (`MAX_FUEL` while it is being prepared).
 * @param interp the interpreter
 * @param budget fuel units for what follows
 * @returns nothing
 * @example armFuel(interp, invocation.fuel)
 */
export function armFuel(interp: Metered, budget: bigint): void {
  if (interp.metered) setFuel(interp.instance, budget);
}

/**
 * The fuel spent since `armFuel(interp, budget)` (0 on an unmetered interpreter).
 * @param interp the interpreter
 * @param budget the budget it was armed with
 * @returns units used, 0..budget
 * @example spentFuel(interp, invocation.fuel) // 123456n
 */
export function spentFuel(interp: Metered, budget: bigint): bigint {
  return interp.metered ? fuelUsed(interp.instance, budget) : 0n;
}

/**
 * The error for a call into the interpreter that threw, when it is the fuel trap.
 * @param err what the call threw
 * @param interp the interpreter that was called
 * @param budget its budget
 * @param toolName the tool, for the message
 * @returns `EXEC_RESOURCE_EXHAUSTED` (reason `fuel`), or null when the trap was not the fuel counter's
 * @example fuelTrap(err, interp, 1000n, "t")?.code // "EXEC_RESOURCE_EXHAUSTED"
 */
export function fuelTrap(err: unknown, interp: Metered, budget: bigint, toolName: string): ReachError | null {
  return interp.metered && isFuelExhausted(err, interp.instance) ? fuelError(budget, { toolName }) : null;
}

/**
 * Call into an interpreter whose last call trapped, only to read its state (its fuel was spent and read before).
 * @param interp the interpreter (dropped afterwards)
 * @param probe a call that reads state (a few ticks of fuel)
 * @returns what `probe` returns
 * @example probeAfterTrap(interp, () => interp.exports.emscripten_stack_get_current())
 */
export function probeAfterTrap<T>(interp: Metered, probe: () => T): T {
  armFuel(interp, 1_000n);
  return probe();
}

/** The budget an interpreter runs its own preparation with. */
export const PREPARE_FUEL = MAX_FUEL;
