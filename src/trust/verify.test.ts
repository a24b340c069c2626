import { readdirSync, readFileSync } from "node:fs";
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { agrees, RFC8032_VECTORS, trustCases, wycheproofVerdicts } from "../../conformance/lib/trust-cases.ts";
import type { ConformanceIO } from "../../conformance/lib/types.ts";
import { bytesToHex, hexToBytes } from "../canonical/hex.ts";
import { utf8 } from "../canonical/sha256.ts";
import { isValidPublicKey, publicKeyFromPrivateKey, publicKeyProblem, signEd25519, verifyEd25519 } from "./verify.ts";

const root = new URL("../../conformance/", import.meta.url);
const io: ConformanceIO = {
  readBytes: (p) => new Uint8Array(readFileSync(new URL(p, root))),
  readText: (p) => readFileSync(new URL(p, root), "utf8"),
  list: (p) => readdirSync(new URL(p, root)).sort(),
};

const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const P = (1n << 255n) - 19n;
function le32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 255n);
  return out;
}
function readLe(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

const seed = Uint8Array.from({ length: 32 }, (_, i) => 200 - i);
const pk = publicKeyFromPrivateKey(seed);
const msg = utf8("reach-wasm");
const sig = signEd25519(msg, seed);

describe("Wycheproof ed25519_test.json", () => {
  const verdicts = wycheproofVerdicts(io);
  it("covers all 151 tests, valid and invalid", () => {
    expect(verdicts).toHaveLength(151);
    expect(verdicts.filter((v) => v.result === "valid")).toHaveLength(88);
    expect(verdicts.filter((v) => v.result === "invalid")).toHaveLength(63);
  });
  it.each(verdicts.map((v) => [v.tcId, v] as const))("tcId %i agrees with its result", (_id, v) => {
    expect(v.accepted, `${v.result} ${v.flags.join(",")}`).toBe(v.result === "valid");
  });
  it("treats a future 'acceptable' result as must-reject", () => {
    expect(agrees({ tcId: 0, flags: [], result: "acceptable", accepted: false })).toBe(true);
    expect(agrees({ tcId: 0, flags: [], result: "acceptable", accepted: true })).toBe(false);
  });
});

describe("RFC 8032 §7.1", () => {
  it.each(RFC8032_VECTORS.map((v, i) => [i + 1, v] as const))("TEST %i signs and verifies", (_n, v) => {
    expect(bytesToHex(publicKeyFromPrivateKey(hexToBytes(v.seed)))).toBe(v.publicKey);
    expect(bytesToHex(signEd25519(hexToBytes(v.message), hexToBytes(v.seed)))).toBe(v.signature);
    expect(verifyEd25519(hexToBytes(v.signature), hexToBytes(v.message), hexToBytes(v.publicKey))).toBe(true);
  });
});

describe("verifyEd25519 is strict", () => {
  it("accepts a good signature and rejects a changed message, signature or key", () => {
    expect(verifyEd25519(sig, msg, pk)).toBe(true);
    expect(verifyEd25519(sig, utf8("reach-wasn"), pk)).toBe(false);
    const flipped = sig.slice();
    flipped[10]! ^= 1;
    expect(verifyEd25519(flipped, msg, pk)).toBe(false);
    expect(verifyEd25519(sig, msg, publicKeyFromPrivateKey(new Uint8Array(32)))).toBe(false);
  });

  it("rejects S + L (malleability) that a verifier without the S < L check would accept", () => {
    const s = readLe(sig.subarray(32));
    const malleable = new Uint8Array(64);
    malleable.set(sig.subarray(0, 32));
    malleable.set(le32(s + L), 32);
    expect(s + L < 1n << 256n).toBe(true);
    expect(verifyEd25519(malleable, msg, pk)).toBe(false);
  });

  it("rejects the small-order identity key forgery that ZIP-215 accepts", () => {
    const identity = le32(1n); // y = 1, x = 0: the neutral element
    const forged = new Uint8Array(64);
    forged.set(identity, 0); // R = identity, S = 0
    expect(verifyEd25519(forged, msg, identity)).toBe(false); // (first: it gives the library its SHA-512)
    expect(ed.verify(forged, msg, identity, { zip215: true })).toBe(true); // the attack is real under ZIP-215
    expect(verifyEd25519(forged, utf8("any other message"), identity)).toBe(false);
  });

  it("rejects every small-order and non-canonical key encoding", () => {
    const identityWithSign = le32(1n);
    identityWithSign[31]! |= 0x80; // x = 0 with sign bit 1 (RFC 8032 §5.1.3 step 4)
    const yAboveP = le32(P + 1n); // y = p + 1 ≡ 1: non-canonical
    expect(publicKeyProblem(le32(1n))).toMatch(/small order/);
    expect(publicKeyProblem(identityWithSign)).toMatch(/canonical/);
    expect(publicKeyProblem(yAboveP)).toMatch(/canonical/);
    expect(publicKeyProblem(new Uint8Array(31))).toMatch(/31 bytes/);
    // every non-canonical y (p <= y < 2^255) that decodes leniently is refused
    for (let k = 0n; k < 19n; k++) {
      expect(isValidPublicKey(le32(P + k)), `y = p + ${k}`).toBe(false);
    }
    expect(isValidPublicKey(pk)).toBe(true);
  });

  it("returns false (does not throw) for wrong lengths, and throws TypeError for non-bytes", () => {
    expect(verifyEd25519(sig.subarray(0, 63), msg, pk)).toBe(false);
    expect(verifyEd25519(new Uint8Array([...sig, 0]), msg, pk)).toBe(false);
    expect(verifyEd25519(sig, msg, pk.subarray(0, 31))).toBe(false);
    expect(() => verifyEd25519("00" as unknown as Uint8Array, msg, pk)).toThrow(TypeError);
    expect(() => signEd25519(msg, new Uint8Array(31))).toThrow(RangeError);
    expect(() => publicKeyFromPrivateKey(new Uint8Array(64))).toThrow(/length 32/);
  });
});

describe("conformance/lib/trust-cases.ts (the cases the Deno runner can import)", () => {
  for (const c of trustCases(io)) {
    it(c.name, async () => {
      expect(String(await c.run())).toMatch(/^(ok|[0-9a-f]{64})$/);
    });
  }
});
