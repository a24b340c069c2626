import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { capMemory, coreModulesOf, definesMemory } from "./wasm-binary.ts";

// (module (memory (export "m") 1)) and (module (memory (export "m") 1 3))
const noMax = Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 5, 1, 1, 0x6d, 2, 0]);
const withMax = Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 4, 1, 1, 1, 3, 7, 5, 1, 1, 0x6d, 2, 0]);
const empty = Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);

async function memoryOf(bytes: Uint8Array): Promise<WebAssembly.Memory> {
  const { instance } = await WebAssembly.instantiate(bytes as Uint8Array<ArrayBuffer>);
  return instance.exports["m"] as WebAssembly.Memory;
}

describe("capMemory", () => {
  it("adds a maximum so that growing past it fails", async () => {
    const m = await memoryOf(capMemory(noMax, 2));
    expect(m.grow(1)).toBe(1);
    expect(() => m.grow(1)).toThrow(RangeError);
    expect((await memoryOf(noMax)).grow(5)).toBe(1); // the original has no cap
  });

  it("keeps a smaller declared maximum and lowers a larger one", async () => {
    expect(() => capMemory(withMax, 10)).not.toThrow();
    const kept = await memoryOf(capMemory(withMax, 10));
    expect(() => kept.grow(3)).toThrow(RangeError);
    const lowered = await memoryOf(capMemory(withMax, 1));
    expect(() => lowered.grow(1)).toThrow(RangeError);
  });

  it("refuses a limit below the initial size, and leaves modules without memory alone", () => {
    expect(() => capMemory(noMax, 0)).toThrow(ReachError);
    expect(capMemory(empty, 1)).toBe(empty);
    expect(definesMemory(noMax)).toBe(true);
    expect(definesMemory(empty)).toBe(false);
  });
});

describe("coreModulesOf", () => {
  it("lists top-level core modules and refuses what is not a component", () => {
    // component preamble + core module section (id 1) holding `empty`
    const component = Uint8Array.from([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 1, empty.length, ...empty]);
    expect(coreModulesOf(component).map((m) => [...m])).toEqual([[...empty]]);
    expect(() => coreModulesOf(empty)).toThrow(ReachError);
    const truncated = component.subarray(0, component.length - 2);
    expect(() => coreModulesOf(truncated)).toThrow(/runs past the end/);
  });
});
