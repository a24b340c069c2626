import { describe, expect, it } from "vitest";
import { bytesToHex } from "../canonical/hex.ts";
import { ReachError } from "../protocol/errors.ts";
import { generateKeyPair } from "./keys.ts";
import { formatTrustStore, parseTrustStore, TrustStore } from "./trust-store.ts";

const alice = bytesToHex(generateKeyPair(new Uint8Array(32).fill(1)).publicKey);
const bob = bytesToHex(generateKeyPair(new Uint8Array(32).fill(2)).publicKey);
const carol = generateKeyPair(new Uint8Array(32).fill(3)).publicKey;
const text = JSON.stringify({
  version: 1,
  keys: [{ publicKey: alice, name: "alice" }, { publicKey: bob, name: "bob" }],
});

function refusal(input: string): ReachError {
  try {
    parseTrustStore(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).code).toBe("PROTO_INVALID_ARGUMENT");
    return err as ReachError;
  }
  throw new Error("expected a ReachError, nothing was thrown");
}

describe("trust store", () => {
  const store = parseTrustStore(text);
  it("trusts exactly the listed keys, by hex or bytes", () => {
    expect(store.isTrusted(alice)).toBe(true);
    expect(store.isTrusted(bob)).toBe(true);
    expect(store.isTrusted(carol)).toBe(false);
    expect(store.isTrusted(bytesToHex(carol))).toBe(false);
    expect(store.nameOf(alice)).toBe("alice");
    expect(store.nameOf(carol)).toBeUndefined();
  });
  it("refuses a malformed key argument to isTrusted", () => {
    expect(() => store.isTrusted(alice.toUpperCase())).toThrow(TypeError);
    expect(() => store.isTrusted(new Uint8Array(31))).toThrow(TypeError);
  });
  it("round-trips through its file format, and an empty store trusts nothing", () => {
    expect(JSON.parse(formatTrustStore(store))).toEqual(JSON.parse(text));
    const empty = new TrustStore({ version: 1, keys: [] });
    expect(empty.isTrusted(alice)).toBe(false);
    expect(formatTrustStore(empty)).toBe('{\n  "version": 1,\n  "keys": []\n}\n');
  });
  it("is immutable", () => {
    expect(() => (store.keys as { publicKey: string; name: string }[]).push({ publicKey: bob, name: "x" })).toThrow();
  });
});

describe("parseTrustStore refuses", () => {
  const doc = (keys: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ version: 1, keys, ...extra });
  const cases: [string, string, RegExp][] = [
    ["non-JSON", "{,}", /trust store is not valid JSON/],
    ["a missing keys field", JSON.stringify({ version: 1 }), /at keys/],
    ["a wrong version", JSON.stringify({ version: 2, keys: [] }), /version 1 only/],
    ["an unknown top-level field", doc([], { trustAll: true }), /unknown field "trustAll"/],
    ["an unknown key field", doc([{ publicKey: alice, name: "a", role: "admin" }]), /unknown field "role"/],
    ["a key without a name", doc([{ publicKey: alice }]), /at keys\[0\]\.name/],
    ["an empty name", doc([{ publicKey: alice, name: "" }]), /give the key a name/],
    ["a base64 key", doc([{ publicKey: "A".repeat(43) + "=", name: "a" }]), /64 lowercase hex digits/],
    ["a small-order key", doc([{ publicKey: "01" + "00".repeat(31), name: "a" }]), /small order/],
    [
      "a duplicate key",
      doc([{ publicKey: alice, name: "a" }, { publicKey: alice, name: "b" }]),
      /already listed at keys\[0\]/,
    ],
  ];
  it.each(cases)("%s", (_name, input, message) => {
    const err = refusal(input);
    expect(err.message).toMatch(message);
    expect(err.message).toMatch(/a trust store is \{"version": 1/);
  });
});
