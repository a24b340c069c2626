import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { nativeSha256Backend } from "../../tests/support/platform.ts";
import { bytesToHex } from "./hex.ts";
import { getSha256Backend, nobleBackend, setSha256Backend, sha256, sha256Hex, utf8 } from "./sha256.ts";
import type { Sha256Backend } from "./sha256.ts";

// A fixed pseudo-random buffer (xorshift32 with a constant seed) — deterministic across runs and runtimes.
function fixedBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
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

const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

afterEach(() => setSha256Backend(nobleBackend));

describe("known answers (FIPS 180-4 examples)", () => {
  for (const backend of [nobleBackend, nativeSha256Backend]) {
    it(`${backend.name}: "" and "abc"`, () => {
      setSha256Backend(backend);
      expect(getSha256Backend().name).toBe(backend.name);
      expect(sha256Hex("")).toBe(EMPTY);
      expect(sha256Hex(new Uint8Array(0))).toBe(EMPTY);
      expect(sha256Hex("abc")).toBe(ABC);
      expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
      );
      expect(sha256("abc")).toBeInstanceOf(Uint8Array);
      expect(sha256("abc").length).toBe(32);
    });
  }
});

describe("noble and node:crypto backends agree", () => {
  const sizes = [0, 1, 55, 56, 63, 64, 65, 1000, 1 << 20];
  for (const n of sizes) {
    it(`on ${n} bytes`, () => {
      const data = fixedBytes(n, n + 1);
      const noble = bytesToHex(nobleBackend.digest(data));
      expect(bytesToHex(nativeSha256Backend.digest(data))).toBe(noble);
      expect(noble).toBe(createHash("sha256").update(data).digest("hex"));
    });
  }

  it("on fixed random buffers of odd sizes and on subarray views", () => {
    for (const [n, seed] of [[3, 7], [127, 11], [4097, 13], [65537, 17]] as const) {
      const big = fixedBytes(n + 10, seed);
      const view = big.subarray(5, 5 + n);
      const want = createHash("sha256").update(view).digest("hex");
      expect(bytesToHex(nobleBackend.digest(view))).toBe(want);
      expect(bytesToHex(nativeSha256Backend.digest(view))).toBe(want);
    }
  });

  it("hashes strings as UTF-8", () => {
    for (const backend of [nobleBackend, nativeSha256Backend]) {
      setSha256Backend(backend);
      expect(sha256Hex("é€😀")).toBe(createHash("sha256").update("é€😀", "utf8").digest("hex"));
      expect(sha256Hex("é€😀")).toBe(sha256Hex(utf8("é€😀")));
    }
  });

  it("gives the same hex through the native text fast path as through bytes, lone surrogates included", () => {
    const samples = ["", "abc", "é€😀", "x".repeat(1024), "lone \ud800 surrogate", "\udc00"];
    for (const s of samples) {
      const viaBytes = bytesToHex(nobleBackend.digest(utf8(s)));
      expect(nativeSha256Backend.hex!(s)).toBe(viaBytes);
      expect(nativeSha256Backend.hex!(utf8(s))).toBe(viaBytes);
    }
  });

  it("refuses a backend whose hex fast path disagrees with its digest", () => {
    const liar: Sha256Backend = { name: "liar", digest: nobleBackend.digest, hex: () => "0".repeat(64) };
    expect(() => setSha256Backend(liar)).toThrow(TypeError);
  });

  it("returns a plain Uint8Array from the native backend", () => {
    const d = nativeSha256Backend.digest(new Uint8Array(1));
    expect(Object.getPrototypeOf(d)).toBe(Uint8Array.prototype);
  });
});

describe("setSha256Backend", () => {
  it("rejects a backend that fails the known-answer test and keeps the old one", () => {
    const broken: Sha256Backend = { name: "broken", digest: () => new Uint8Array(32) };
    expect(() => setSha256Backend(broken)).toThrow(TypeError);
    expect(() => setSha256Backend(broken)).toThrow('"broken"');
    expect(getSha256Backend()).toBe(nobleBackend);
    const offByOne: Sha256Backend = { name: "off", digest: (d) => nobleBackend.digest(d.subarray(1)) };
    expect(() => setSha256Backend(offByOne)).toThrow(TypeError);
  });

  it("refuses non-bytes input", () => {
    expect(() => sha256(123 as unknown as string)).toThrow(/"data" expected Uint8Array or string/);
    expect(() => sha256Hex(null as unknown as string)).toThrow(TypeError);
  });
});
