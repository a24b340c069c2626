/**
 * Reading and setting the fuel counter of an instrumented instance, and telling a fuel trap from the tool's own
 * traps (see `instrument.ts` for what the counter counts).
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { FUEL_EXPORT, MAX_FUEL, REFILL_FIELD, REFILL_MODULE } from "./instrument.ts";

/** Why a meter stopped an instance before its budget ran out. */
export type StopReason = "abort" | "watchdog";

/** A recorded stop point: stop once this much fuel is used, for this reason (replay). */
export type StopPoint = { readonly fuel: bigint; readonly reason: StopReason };

/** What a meter ended with: out of fuel, or stopped from outside at a fuel count. */
export type MeterOutcome = { kind: "exhausted" } | { kind: "stopped"; reason: StopReason; fuel: bigint };

/**
 * The refill import for an instance driven with {@link setFuel} alone: every refill is refused, so the instance
 * traps as soon as its counter drops below zero (a budget set with `setFuel` and nothing more).
 * @returns the import object part to merge into the instance's imports
 * @example new WebAssembly.Instance(module, { ...imports, ...noRefillImports() })
 */
export function noRefillImports(): Record<string, Record<string, (g: bigint) => bigint>> {
  return { [REFILL_MODULE]: { [REFILL_FIELD]: () => -1n } };
}

/**
 * The exported fuel counter of an instance made from an instrumented module.
 * @param instance an instance of a module returned by `instrumentFuel` / `getMeteredModule`
 * @returns its `reach_fuel` global
 * @throws TypeError when the instance has no `reach_fuel` i64 global (the module was not instrumented)
 * @example fuelGlobal(instance).value // 1000000000n
 */
export function fuelGlobal(instance: WebAssembly.Instance): WebAssembly.Global {
  const global = (instance?.exports as Record<string, unknown> | undefined)?.[FUEL_EXPORT];
  if (!(global instanceof WebAssembly.Global) || typeof global.value !== "bigint") {
    throw new TypeError(
      `"instance" expected an instance of a fuel-instrumented module (with an exported i64 global "${FUEL_EXPORT}"); ` +
        "instantiate the module from getMeteredModule / instrumentFuel",
    );
  }
  return global;
}

/**
 * Give an instance a fuel budget (before calling into it; a fresh budget per invocation).
 * @param instance an instance of an instrumented module
 * @param fuel units: each function entry and each loop iteration costs one; 0..2^63-1
 * @returns nothing
 * @throws TypeError when `fuel` is not a bigint or the instance is not instrumented
 * @throws RangeError when `fuel` is negative or above 2^63-1
 * @example setFuel(instance, 1_000_000_000n)
 */
export function setFuel(instance: WebAssembly.Instance, fuel: bigint): void {
  if (typeof fuel !== "bigint") throw new TypeError(`"fuel" expected a bigint, got ${typeof fuel}`);
  if (fuel < 0n || fuel > MAX_FUEL) throw new RangeError(`"fuel" expected 0..2^63-1, got ${fuel}`);
  fuelGlobal(instance).value = fuel;
}

/**
 * The fuel an instance has left. Negative (−1) exactly when the fuel trap fired.
 * @param instance an instance of an instrumented module
 * @returns the counter's value
 * @throws TypeError when the instance is not instrumented
 * @example remainingFuel(instance) // 999999873n
 */
export function remainingFuel(instance: WebAssembly.Instance): bigint {
  return fuelGlobal(instance).value as bigint;
}

/**
 * The fuel spent since `setFuel(instance, fuelLimit)`: `fuelLimit − remaining`, capped at `fuelLimit` (the tick
 * that trapped is not counted).
 * @param instance an instance of an instrumented module
 * @param fuelLimit the budget given with `setFuel`
 * @returns units used, 0..fuelLimit
 * @throws TypeError when the instance is not instrumented
 * @example fuelUsed(instance, 1000n) // 101n
 */
export function fuelUsed(instance: WebAssembly.Instance, fuelLimit: bigint): bigint {
  const remaining = remainingFuel(instance);
  const used = fuelLimit - (remaining < 0n ? 0n : remaining);
  return used < 0n ? 0n : used;
}

/**
 * True when `err` is the fuel trap: a `WebAssembly.RuntimeError` (V8: "unreachable") thrown while the instance's
 * counter is below zero. The counter only goes below zero in the instrumentation's own check, right before its
 * `unreachable`, so the tool's own `unreachable`, a division by zero or an out-of-bounds access (counter ≥ 0) are
 * not mistaken for it. The message is not compared: it differs between engines. Never call into an instance again
 * after a trap: drop it and instantiate afresh.
 * @param err what the call into the instance threw
 * @param instance the instance that was called
 * @returns whether the tool ran out of fuel
 * @throws TypeError when the instance is not instrumented
 * @example
 * try { run(); } catch (err) { if (isFuelExhausted(err, instance)) throw fuelError(limit); throw err; }
 */
export function isFuelExhausted(err: unknown, instance: WebAssembly.Instance): boolean {
  return err instanceof WebAssembly.RuntimeError && remainingFuel(instance) < 0n;
}

/** A bigint as a JSON value: a number when it is exact, else a decimal string. */
function jsonInt(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(n) : n.toString();
}

/**
 * How a tool gets more time: the fields that set a step's timeout, as the refusals name them (a plan step has no
 * timeout of its own: seed 001's plan sets one for all its steps).
 */
export const STEP_TIMEOUT_HINT = "raise the step timeout (the plan's execution.step_timeout_ms, or run --step-timeout MS when the plan sets none)";

/**
 * The error for a tool that ran out of fuel.
 * @param fuelLimit the budget the tool had (all of it was used)
 * @param context optional `toolName` for the message and details
 * @returns a `ReachError` `EXEC_RESOURCE_EXHAUSTED` with details `{reason: "fuel", fuelLimit, fuelUsed, toolName?}`;
 *   the amounts are JSON numbers (decimal strings above 2^53 − 1)
 * @throws RangeError when `fuelLimit` is not a non-negative bigint
 * @example throw fuelError(1_000_000_000n, { toolName: "grep" })
 */
export function fuelError(fuelLimit: bigint, context: { toolName?: string } = {}): ReachError {
  if (typeof fuelLimit !== "bigint" || fuelLimit < 0n) {
    throw new RangeError(`"fuelLimit" expected a non-negative bigint, got ${String(fuelLimit)}`);
  }
  const who = context.toolName === undefined ? "the tool" : `tool "${context.toolName}"`;
  const details: Record<string, unknown> = { reason: "fuel", fuelLimit: jsonInt(fuelLimit), fuelUsed: jsonInt(fuelLimit) };
  if (context.toolName !== undefined) details["toolName"] = context.toolName;
  return new ReachError(
    "EXEC_RESOURCE_EXHAUSTED",
    `${who} ran out of fuel after ${fuelLimit} units (one per function call and loop iteration); ` +
      `it probably loops forever — otherwise give the tool less work, or ${STEP_TIMEOUT_HINT}: its fuel follows from that`,
    { details },
  );
}

/**
 * The error for an instance its meter stopped from outside (a signal, the wall-clock watchdog): the stop point is in
 * the details as `fuel`, which is what a replay needs to stop at the same instruction.
 * @param reason why it was stopped
 * @param fuel the fuel used when it was stopped
 * @param toolName the tool, for the message
 * @returns `EXEC_ABORTED` (reason `aborted`) or `EXEC_TOOL_TIMEOUT` (reason `watchdog`)
 * @example stopError("abort", 262144n, "grep").code // "EXEC_ABORTED"
 */
export function stopError(reason: "abort" | "watchdog", fuel: bigint, toolName: string): ReachError {
  const details = { reason: reason === "abort" ? "aborted" : "watchdog", fuel: jsonInt(fuel), toolName };
  return reason === "abort"
    ? new ReachError("EXEC_ABORTED", `tool "${toolName}" was stopped because the run was aborted (after ${fuel} fuel units); its effects were discarded`, { details })
    : new ReachError("EXEC_TOOL_TIMEOUT", `the watchdog stopped tool "${toolName}" when it ran past its wall-clock limit (after ${fuel} fuel units); ${STEP_TIMEOUT_HINT} or give it less work`, { details });
}

/**
 * The error a meter's outcome stands for, or null when the code ran within its budget.
 * @param meter the invocation's meter
 * @param toolName the tool
 * @returns `fuelError` for an exhausted budget, `stopError` for a stop, or null
 * @example const err = meterError(meter, "grep"); if (err) return { status: "error", error: err, … };
 */
export function meterError(meter: { readonly budget: bigint; readonly outcome: MeterOutcome | null }, toolName: string): ReachError | null {
  const o = meter.outcome;
  if (o === null) return null;
  return o.kind === "exhausted" ? fuelError(meter.budget, { toolName }) : stopError(o.reason, o.fuel, toolName);
}
