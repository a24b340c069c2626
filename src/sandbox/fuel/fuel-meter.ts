/**
 * Handing fuel to instrumented instances in slices (`instrument.ts`: every instance imports `reach_fuel.refill`).
 *
 * A {@link FuelSlot} is made once per instance (its refill import is bound at instantiation and may outlive one
 * invocation, as kept QuickJS engines and component instances do); a {@link FuelMeter} is one invocation's budget.
 * `meter.bind(slot)` points the slot at the meter and empties its counter, so the instance's next tick asks for a
 * slice. At every refill the meter, in this order:
 * 1. stops at a recorded stop point (`stopAt`, replay): once the fuel used reaches it, with the recorded reason;
 * 2. asks `poll()` whether the run must stop now (a signal, the wall-clock watchdog) and, if so, stops and records
 *    the fuel used at that moment — the stop point a replay is given;
 * 3. refuses when the budget is spent (the tool ran out of fuel);
 * 4. otherwise hands out the next slice (at most {@link FUEL_SLICE} units).
 * Refills happen at the same ticks for the same budget, charges and slice size, so every stop falls on the same
 * instruction in a replay. Host calls cost fuel too ({@link FuelMeter.charge}): a loop of host calls cannot run long
 * on little fuel, and the refill that notices an interrupt comes soon after them.
 *
 * Accounting: `consumed` counts finished slices (each including the tick that emptied it); a slot's live usage is
 * `sliceStart − counter`. With several instances (a component's core modules) a slice is never larger than what the
 * budget has left after the other instances' outstanding slices, so the total never passes the budget.
 * @module
 */
import { REFILL_FIELD, REFILL_MODULE } from "./instrument.ts";
import { fuelGlobal } from "./meter.ts";
import type { MeterOutcome, StopPoint, StopReason } from "./meter.ts";

export type { MeterOutcome, StopPoint, StopReason } from "./meter.ts";

/** Most units handed out at once (2^18 ≈ 1–5 ms of work): how soon an interrupt is noticed in a busy loop. */
export const FUEL_SLICE = 1n << 18n;

/** Options of {@link FuelMeter}. */
export type FuelMeterOptions = {
  /** The budget in units (each function entry and loop iteration costs one). */
  budget: bigint;
  /** Asked at every refill: a reason to stop now, or null. Never consulted in replay for recorded stops. */
  poll?: () => StopReason | null;
  /** A recorded stop point to reproduce (replay). */
  stopAt?: StopPoint | null;
  /** Slice size (default {@link FUEL_SLICE}; tests use small ones). */
  slice?: bigint;
  /** Called once, by `start()`, when the tool's own code is about to run (the watchdog's clock starts there). */
  onStart?: () => void;
};

/**
 * The refill import of one instance. Make it before instantiating and pass `slot.imports` with the instance's
 * other imports; `attach` the instance afterwards.
 * @example
 * const slot = new FuelSlot();
 * const instance = new WebAssembly.Instance(module, { ...imports, ...slot.imports });
 * slot.attach(instance);
 */
export class FuelSlot {
  /** The meter the instance currently draws from (null: every refill is refused, so the instance traps). */
  meter: FuelMeter | null = null;
  /** The instance's `reach_fuel` global, once attached. */
  global: WebAssembly.Global | null = null;
  /** The import object part to merge into the instance's imports. */
  readonly imports: Record<string, Record<string, (g: bigint) => bigint>>;

  constructor() {
    this.imports = { [REFILL_MODULE]: { [REFILL_FIELD]: (g: bigint) => (this.meter === null ? -1n : this.meter.refill(this, g)) } };
  }

  /**
   * Remember the instance the imports were given to.
   * @param instance an instance of an instrumented module
   * @returns nothing
   * @throws TypeError when the instance has no `reach_fuel` global
   */
  attach(instance: WebAssembly.Instance): void {
    this.global = fuelGlobal(instance);
  }
}

/**
 * One invocation's fuel budget over one or more instances (see the module notes).
 * @example
 * const meter = new FuelMeter({ budget: 1_000_000n, poll: () => (signal.aborted ? "abort" : null) });
 * meter.bind(slot);
 * try { exports.run(); } finally { meter.release(); }
 * meter.outcome; // null, { kind: "exhausted" } or { kind: "stopped", reason, fuel }
 */
export class FuelMeter {
  readonly budget: bigint;
  readonly #poll: (() => StopReason | null) | undefined;
  readonly #stopAt: StopPoint | null;
  readonly #slice: bigint;
  #onStart: (() => void) | undefined;
  readonly #slots = new Map<FuelSlot, bigint>(); // slot → its outstanding slice (sliceStart)
  #consumed = 0n;
  #outcome: MeterOutcome | null = null;
  #final: bigint | null = null;

  /**
   * @param options the budget, the poll, a recorded stop point
   * @throws RangeError when the budget or the slice is not positive
   */
  constructor(options: FuelMeterOptions) {
    if (typeof options.budget !== "bigint" || options.budget < 0n) throw new RangeError(`"budget" expected a non-negative bigint, got ${String(options.budget)}`);
    const slice = options.slice ?? FUEL_SLICE;
    if (typeof slice !== "bigint" || slice <= 0n) throw new RangeError(`"slice" expected a positive bigint, got ${String(slice)}`);
    this.budget = options.budget;
    this.#poll = options.poll;
    this.#stopAt = options.stopAt ?? null;
    this.#slice = slice;
    this.#onStart = options.onStart;
  }

  /**
   * Mark the moment the tool's own code starts (after compiling, instantiating, preparing a sandbox): the
   * wall-clock watchdog counts from here. Later calls do nothing.
   * @returns nothing
   */
  start(): void {
    const f = this.#onStart;
    this.#onStart = undefined;
    f?.();
  }

  /** How the metered code was stopped, or null while it runs / when it finished within its budget. */
  get outcome(): MeterOutcome | null {
    return this.#outcome;
  }

  /**
   * Draw `slot`'s fuel from this meter from now on. Its counter is emptied, so its next tick asks for a slice.
   * @param slot the slot (attached or about to be instantiated)
   * @returns nothing
   */
  bind(slot: FuelSlot): void {
    slot.meter = this;
    this.#slots.set(slot, 0n);
    if (slot.global !== null) slot.global.value = 0n;
  }

  /**
   * Charge work done outside the metered code (a host call, a WASI call) to the first bound instance: its counter
   * drops, and a refill follows at its next tick once it is below zero.
   * @param units units to charge (non-negative)
   * @returns nothing
   */
  charge(units: number): void {
    if (!(units > 0) || this.#outcome !== null) return;
    const amount = BigInt(Math.min(Math.floor(units), Number.MAX_SAFE_INTEGER));
    for (const slot of this.#slots.keys()) {
      if (slot.global !== null && slot.meter === this) {
        slot.global.value = (slot.global.value as bigint) - amount;
        return;
      }
    }
    this.#consumed += amount;
  }

  /**
   * The refill import's answer (called from the instance through its slot).
   * @param slot the slot whose counter went below zero
   * @param g the counter's value (negative)
   * @returns the next counter value, or −1 to trap
   */
  refill(slot: FuelSlot, g: bigint): bigint {
    const start = this.#slots.get(slot) ?? 0n;
    this.#consumed += start - g;
    if (this.#outcome !== null) return this.#refuse(slot);
    if (this.#stopAt !== null && this.#consumed >= this.#stopAt.fuel) return this.#stop(slot, this.#stopAt.reason);
    const reason = this.#poll?.() ?? null;
    if (reason !== null) return this.#stop(slot, reason);
    let outstanding = 0n;
    for (const [other, s] of this.#slots) if (other !== slot && s > 0n) outstanding += s;
    const left = this.budget - this.#consumed - outstanding;
    if (left <= 0n) {
      this.#outcome = { kind: "exhausted" };
      return this.#refuse(slot);
    }
    const next = left < this.#slice ? left : this.#slice;
    this.#slots.set(slot, next);
    return next;
  }

  #stop(slot: FuelSlot, reason: StopReason): bigint {
    this.#outcome = { kind: "stopped", reason, fuel: this.#consumed };
    return this.#refuse(slot);
  }

  #refuse(slot: FuelSlot): bigint {
    this.#slots.set(slot, -1n); // the counter will read −1: its live usage is 0
    return -1n;
  }

  /**
   * Fuel used so far: finished slices plus what each bound instance used of its current one (capped at the budget).
   * @returns units
   */
  used(): bigint {
    if (this.#final !== null) return this.#final;
    let used = this.#consumed;
    for (const [slot, start] of this.#slots) {
      if (slot.global !== null && slot.meter === this) used += start - (slot.global.value as bigint);
    }
    if (this.#outcome?.kind === "stopped") used = this.#outcome.fuel;
    return used > this.budget ? this.budget : used < 0n ? 0n : used;
  }

  /**
   * End the invocation: remember the final count and detach every slot (their next refill is refused).
   * @returns the fuel used
   */
  release(): bigint {
    const used = this.used();
    this.#final = used;
    for (const slot of this.#slots.keys()) if (slot.meter === this) slot.meter = null;
    return used;
  }
}

/**
 * A meter that never refuses (a huge budget, no poll): for work that is not a tool's, such as preparing a sandbox.
 * @returns the meter
 * @example unmeteredWork().bind(slot)
 */
export function unmeteredWork(): FuelMeter {
  return new FuelMeter({ budget: (1n << 62n), slice: 1n << 40n });
}
