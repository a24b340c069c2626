import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64, bytesToHex, describe as describeValue, hexToBytes, isSha256Hex } from "./hex.ts";

// A fixed pseudo-random buffer (xorshift32 with a constant seed) — deterministic across runs and runtimes.
function fixedBytes(n: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

describe("hex", () => {
  it("encodes known bytes in lowercase", () => {
    expect(bytesToHex(new Uint8Array([]))).toBe("");
    expect(bytesToHex(new Uint8Array([0, 1, 0x0f, 0x10, 0xab, 0xff]))).toBe("00010f10abff");
  });

  it("round-trips every byte value and fixed random buffers", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(hexToBytes(bytesToHex(all))).toEqual(all);
    for (const n of [1, 2, 31, 32, 33, 1000]) {
      const b = fixedBytes(n, n);
      expect(hexToBytes(bytesToHex(b))).toEqual(b);
    }
  });

  it("decodes uppercase and mixed case", () => {
    expect(hexToBytes("ABcd0F")).toEqual(new Uint8Array([0xab, 0xcd, 0x0f]));
  });

  it("refuses odd length, non-hex characters and non-strings", () => {
    expect(() => hexToBytes("abc")).toThrow(TypeError);
    expect(() => hexToBytes("zz")).toThrow(/"hex" expected an even-length string of hex digits/);
    expect(() => hexToBytes("0x00")).toThrow(TypeError);
    expect(() => hexToBytes(" 00")).toThrow(TypeError);
    expect(() => hexToBytes(12 as unknown as string)).toThrow(TypeError);
  });

  it("recognises SHA-256 hex", () => {
    expect(isSha256Hex("a".repeat(64))).toBe(true);
    expect(isSha256Hex("A".repeat(64))).toBe(false);
    expect(isSha256Hex("a".repeat(63))).toBe(false);
    expect(isSha256Hex(null)).toBe(false);
  });
});

describe("base64", () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

  it("matches the RFC 4648 §10 test vectors", () => {
    const vectors: [string, string][] = [
      ["", ""], ["f", "Zg=="], ["fo", "Zm8="], ["foo", "Zm9v"],
      ["foob", "Zm9vYg=="], ["fooba", "Zm9vYmE="], ["foobar", "Zm9vYmFy"],
    ];
    for (const [plain, b64] of vectors) {
      expect(bytesToBase64(enc(plain))).toBe(b64);
      expect(base64ToBytes(b64)).toEqual(enc(plain));
    }
  });

  it("round-trips every byte value and fixed random buffers of every length mod 3", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(base64ToBytes(bytesToBase64(all))).toEqual(all);
    for (const n of [1, 2, 3, 4, 5, 100, 1001]) {
      const b = fixedBytes(n, n * 31);
      expect(base64ToBytes(bytesToBase64(b))).toEqual(b);
    }
    expect(bytesToBase64(new Uint8Array([0xfb, 0xff]))).toBe("+/8=");
  });

  it("refuses unpadded, URL-safe, whitespace and non-canonical input", () => {
    expect(() => base64ToBytes("Zg")).toThrow(TypeError);
    expect(() => base64ToBytes("-_8=")).toThrow(TypeError);
    expect(() => base64ToBytes("Zm9v\n")).toThrow(TypeError);
    expect(() => base64ToBytes("Zh==")).toThrow(/non-canonical padding bits/);
    expect(() => base64ToBytes("Z===")).toThrow(TypeError);
    expect(() => base64ToBytes(null as unknown as string)).toThrow(/"base64" expected/);
  });
});

describe("describe", () => {
  it("never echoes the value itself", () => {
    expect(describeValue("secret-token")).toBe("string of length 12");
    expect(describeValue(new Uint8Array(3))).toBe("Uint8Array of length 3");
    expect(describeValue(null)).toBe("null");
    expect(describeValue(1)).toBe("number");
  });
});
