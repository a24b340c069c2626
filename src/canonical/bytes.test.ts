import { describe, expect, it } from "vitest";
import { concatBytes } from "./bytes.ts";

describe("concatBytes", () => {
  it("joins chunks into a new array, with or without their counted size", () => {
    const a = new Uint8Array([1, 2]);
    const parts = [a, new Uint8Array(0), new Uint8Array([3])];
    expect(concatBytes(parts)).toEqual(new Uint8Array([1, 2, 3]));
    expect(concatBytes(parts, 3)).toEqual(new Uint8Array([1, 2, 3]));
    expect(concatBytes([])).toEqual(new Uint8Array(0));
    const one = concatBytes([a]);
    expect(one).not.toBe(a);
    expect(one).toEqual(a);
  });
});
