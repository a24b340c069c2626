import { describe, expect, it } from "vitest";
import { hexToBytes } from "./hex.ts";
import { deriveId, uuidFromDigest, uuidFromHex } from "./ids.ts";
import { sha256, sha256Hex } from "./sha256.ts";

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("uuidFromDigest", () => {
  it("formats the first 16 bytes with version 8 and variant 10", () => {
    // SHA-256("abc") = ba7816bf 8f01 cfea 4141 40de5dae2223 …; byte 6 0xcf -> 0x8f, byte 8 0x41 -> 0x81
    expect(uuidFromDigest(sha256("abc"))).toBe("ba7816bf-8f01-8fea-8141-40de5dae2223");
  });

  it("forces the version nibble and variant bits whatever the input", () => {
    expect(uuidFromDigest(new Uint8Array(16))).toBe("00000000-0000-8000-8000-000000000000");
    expect(uuidFromDigest(new Uint8Array(16).fill(0xff))).toBe("ffffffff-ffff-8fff-bfff-ffffffffffff");
    expect(uuidFromDigest(hexToBytes("000102030405060708090a0b0c0d0e0f1011"))).toBe(
      "00010203-0405-8607-8809-0a0b0c0d0e0f",
    );
  });

  it("does not modify the digest it is given", () => {
    const d = new Uint8Array(32).fill(0xff);
    uuidFromDigest(d);
    expect(d.every((b) => b === 0xff)).toBe(true);
  });

  it("refuses bad digests", () => {
    expect(() => uuidFromDigest(new Uint8Array(15))).toThrow(RangeError);
    expect(() => uuidFromDigest(new Uint8Array(15))).toThrow('"digest"');
    expect(() => uuidFromDigest("ba7816bf8f01cfea414140de5dae2223" as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe("deriveId", () => {
  it("is UUID(SHA-256(JCS([namespace, ...parts]))) — pinned known answers", () => {
    // SHA-256('["reach/test","a","bc"]') = d835e1268411d523e54326fd2d1e9a8e…
    expect(deriveId("reach/test", "a", "bc")).toBe("d835e126-8411-8523-a543-26fd2d1e9a8e");
    // SHA-256('["reach/test"]') = 7732b3a5a5883076d9a19f57f715bbc6…
    expect(deriveId("reach/test")).toBe("7732b3a5-a588-8076-99a1-9f57f715bbc6");
    expect(deriveId("reach/test", "a", "bc")).toBe(uuidFromDigest(sha256('["reach/test","a","bc"]')));
  });

  it("is deterministic and well-formed", () => {
    const id = deriveId("reach/event", "run-1", "7");
    expect(id).toMatch(UUID_V8);
    expect(deriveId("reach/event", "run-1", "7")).toBe(id);
  });

  it("gives different ids for different inputs, including re-split parts", () => {
    const ids = [
      deriveId("reach/test", "a", "bc"),
      deriveId("reach/test", "ab", "c"),
      deriveId("reach/test", "abc"),
      deriveId("reach/test", "a", "bc", ""),
      deriveId("reach/other", "a", "bc"),
      deriveId("reach/test"),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V8);
  });

  it("refuses bad arguments, naming them", () => {
    expect(() => deriveId("")).toThrow(/"namespace" expected a non-empty string/);
    expect(() => deriveId(1 as unknown as string)).toThrow(TypeError);
    expect(() => deriveId("ns", "a", 7 as unknown as string)).toThrow(/"parts\[1\]" expected a string/);
    expect(() => deriveId("ns", "ok", "\uD800")).toThrow(/"parts\[1\]" contains a lone UTF-16 surrogate/);
    expect(() => deriveId("n\uDC00s")).toThrow(/"namespace" contains a lone UTF-16 surrogate/);
  });
});

describe("uuidFromHex", () => {
  it("agrees with uuidFromDigest on many digests", () => {
    for (let i = 0; i < 500; i++) {
      const hex = sha256Hex(`sample ${i}`);
      expect(uuidFromHex(hex)).toBe(uuidFromDigest(hexToBytes(hex)));
    }
  });

  it("refuses what is not lowercase hex", () => {
    expect(() => uuidFromHex("ABC")).toThrow(TypeError);
    expect(() => uuidFromHex("A".repeat(64))).toThrow(TypeError);
    expect(() => uuidFromHex(1 as unknown as string)).toThrow(TypeError);
  });
});
