import { beforeAll, describe, expect, it } from "vitest";
import { wat } from "../wasi/_test-support.ts";
import { FuelMeter, FuelSlot, instrumentFuel } from "./mod.ts";
import type { StopReason } from "./mod.ts";

/** spin: an endless loop; work(n): n loop iterations, then returns n; fill(n): memory.fill of n bytes, n loop-free. */
const SOURCE = `(module
  (memory (export "mem") 64)
  (func (export "spin") (loop $l (br $l)))
  (func (export "work") (param $n i32) (result i32) (local $i i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $n))
  (func (export "fill") (param $n i32) (memory.fill (i32.const 0) (i32.const 7) (local.get $n))))`;

type Exports = { spin(): void; work(n: number): number; fill(n: number): void };
let module: WebAssembly.Module;

beforeAll(async () => {
  module = new WebAssembly.Module(await instrumentFuel(await wat(SOURCE)));
});

function instance(meter: FuelMeter): { exports: Exports; slot: FuelSlot } {
  const slot = new FuelSlot();
  meter.bind(slot);
  const inst = new WebAssembly.Instance(module, slot.imports);
  slot.attach(inst);
  return { exports: inst.exports as unknown as Exports, slot };
}

function trap(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a trap");
}

describe("FuelMeter", () => {
  it("hands out slices until the budget is spent, then traps: exactly the budget is used", () => {
    const meter = new FuelMeter({ budget: 10_000n, slice: 64n });
    const { exports } = instance(meter);
    expect(trap(() => exports.spin())).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(meter.outcome).toEqual({ kind: "exhausted" });
    expect(meter.release()).toBe(10_000n);
  });

  it("counts the same fuel for the same work whatever the slice size", () => {
    const used = [7n, 64n, 1n << 18n].map((slice) => {
      const meter = new FuelMeter({ budget: 1_000_000n, slice });
      expect(instance(meter).exports.work(5000)).toBe(5000);
      expect(meter.outcome).toBeNull();
      return meter.release();
    });
    expect(new Set(used).size).toBe(1);
    expect(used[0]).toBeGreaterThan(5000n);
  });

  it("stops when poll says so, records the fuel count, and a replay with that stop point stops at the same count", () => {
    let polls = 0;
    const poll = (): StopReason | null => (++polls === 5 ? "abort" : null);
    const meter = new FuelMeter({ budget: 1n << 40n, slice: 1000n, poll });
    expect(trap(() => instance(meter).exports.spin())).toBeInstanceOf(WebAssembly.RuntimeError);
    const outcome = meter.outcome;
    expect(outcome).toMatchObject({ kind: "stopped", reason: "abort" });
    const fuel = (outcome as { fuel: bigint }).fuel;
    expect(meter.release()).toBe(fuel);
    const replay = new FuelMeter({ budget: 1n << 40n, slice: 1000n, stopAt: { fuel, reason: "abort" }, poll: () => null });
    expect(trap(() => instance(replay).exports.spin())).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(replay.outcome).toEqual({ kind: "stopped", reason: "abort", fuel });
  });

  it("charges bulk memory operations by length, so a big fill needs fuel", () => {
    const small = new FuelMeter({ budget: 1_000n, slice: 100n });
    instance(small).exports.fill(1024);
    expect(small.release()).toBeLessThan(10n);
    const big = new FuelMeter({ budget: 1_000n, slice: 100n });
    expect(trap(() => instance(big).exports.fill(4 * 1024 * 1024))).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(big.outcome).toEqual({ kind: "exhausted" });
  });

  it("charges host work to the bound instance, which refills (and stops) at its next tick", () => {
    const meter = new FuelMeter({ budget: 5_000n, slice: 1000n });
    const { exports } = instance(meter);
    exports.work(10);
    meter.charge(4_900);
    expect(trap(() => exports.work(200))).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(meter.outcome).toEqual({ kind: "exhausted" });
  });

  it("an instance whose meter was released traps at its next refill", () => {
    const meter = new FuelMeter({ budget: 1_000_000n, slice: 100n });
    const { exports } = instance(meter);
    meter.release();
    expect(trap(() => exports.work(1000))).toBeInstanceOf(WebAssembly.RuntimeError);
  });

  it("refuses bad budgets", () => {
    expect(() => new FuelMeter({ budget: -1n })).toThrow(RangeError);
    expect(() => new FuelMeter({ budget: 1n, slice: 0n })).toThrow(RangeError);
  });
});
