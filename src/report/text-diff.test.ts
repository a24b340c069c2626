import { describe, expect, it } from "vitest";
import { diffLines, MAX_DIFF_EDITS, MAX_DIFF_LINES } from "./text-diff.ts";

/** A small deterministic generator (Park–Miller), so the cases are the same on every run. */
function lcg(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 48271) % 2147483647;
    return s % n;
  };
}

describe("diffLines", () => {
  it("keeps, removes and adds lines so that both texts are rebuilt (300 random pairs)", () => {
    const r = lcg(7);
    for (let t = 0; t < 300; t++) {
      const a = Array.from({ length: r(12) }, () => String(r(4)));
      const b = Array.from({ length: r(12) }, () => String(r(4)));
      const d = diffLines(a.map((l) => `${l}\n`).join(""), b.map((l) => `${l}\n`).join(""))!;
      expect(d.filter((l) => l.op !== "+").map((l) => l.text)).toEqual(a);
      expect(d.filter((l) => l.op !== "-").map((l) => l.text)).toEqual(b);
    }
  });

  it("finds a minimal diff for a one-line change", () => {
    expect(diffLines("a\nb\nc\n", "a\nx\nc\n")).toEqual([{ op: " ", text: "a" }, { op: "-", text: "b" }, { op: "+", text: "x" }, { op: " ", text: "c" }]);
    expect(diffLines("", "")).toEqual([]);
  });

  it("gives up (null) past its bounds instead of doing quadratic work", () => {
    const many = Array.from({ length: MAX_DIFF_LINES + 1 }, (_, i) => `${i}\n`).join("");
    expect(diffLines(many, "")).toBeNull();
    const a = Array.from({ length: MAX_DIFF_EDITS }, (_, i) => `a${i}\n`).join("");
    const b = Array.from({ length: MAX_DIFF_EDITS }, (_, i) => `b${i}\n`).join("");
    expect(diffLines(a, b)).toBeNull();
  });
});
