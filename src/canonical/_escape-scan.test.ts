import { describe, expect, it } from "vitest";
import { escapeScanner } from "./_escape-scan.ts";
import { canonicalize } from "./jcs.ts";

/** What the scanner must answer: does `s` hold `"`, `\` or a U+0000–U+001F code unit? */
const reference = (s: string): boolean => /["\\]|[^\u0020-\uffff]/.test(s);

describe("SIMD escape scan (_escape-scan.ts)", () => {
  it("is available on this runtime (WebAssembly SIMD)", () => {
    expect(escapeScanner).not.toBeNull();
  });

  it("finds each special character at every position of the first and last 16-byte blocks, and nothing else", () => {
    const scan = escapeScanner!;
    const specials = ['"', "\\", "\u0000", "\u0009", "\u001f"];
    const harmless = [" ", "!", "#", "[", "]", "\u007f", "é", "\u2028", "中", "\u{1F600}", "\uD800"];
    for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 1000]) {
      const base = "x".repeat(length);
      expect(scan(base)).toBe(false);
      for (const ch of harmless) expect(scan(base + ch), `harmless ${JSON.stringify(ch)}`).toBe(false);
      const positions = new Set([0, 1, 14, 15, 16, 17, length - 17, length - 16, length - 1, length].filter((p) => p >= 0 && p <= length));
      for (const p of positions) {
        for (const ch of specials) {
          const s = base.slice(0, p) + ch + base.slice(p);
          expect(scan(s), `${JSON.stringify(ch)} at ${p} of ${length}`).toBe(true);
        }
      }
    }
  });

  it("agrees with the regex on multi-byte text, and hands back strings too long for its memory", () => {
    const scan = escapeScanner!;
    const pieces = ["a", "é", "中", "\u{1F600}", "\uDC00", " ", '"', "\\", "\n", "\u0001"];
    let seed = 7;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let i = 0; i < 2000; i++) {
      let s = "";
      const length = next(400);
      for (let j = 0; j < length; j++) s += pieces[next(j % 7 === 0 ? pieces.length : 6)];
      expect(scan(s), JSON.stringify(s.slice(0, 40))).toBe(reference(s));
    }
    // 65,520 bytes fit; one more byte, or the same length in 3-byte characters, does not.
    expect(scan("a".repeat(65520))).toBe(false);
    expect(scan("a".repeat(65519) + '"')).toBe(true);
    expect(scan("a".repeat(65521))).toBeUndefined();
    expect(scan("中".repeat(21841))).toBeUndefined();
  });

  it("gives canonicalize the same output as JSON.stringify for long strings, escaped or not", () => {
    for (const ch of ["", '"', "\\", "\n", "\u0000", "\u001f", "é", "\u{1F600}", "\u2028"]) {
      for (const length of [255, 256, 1024, 70000]) {
        const s = "y".repeat(length >> 1) + ch + "z".repeat(length >> 1);
        expect(canonicalize({ s })).toBe(`{"s":${JSON.stringify(s)}}`);
      }
    }
    expect(() => canonicalize(["w".repeat(300) + "\uD800"])).toThrow(/lone UTF-16 surrogate at \$\[0\]/);
  });
});
