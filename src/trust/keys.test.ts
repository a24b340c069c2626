import { describe, expect, it } from "vitest";
import { bytesToHex } from "../canonical/hex.ts";
import { ReachError } from "../protocol/errors.ts";
import {
  formatKeyFiles,
  formatPublicKeyFile,
  generateKeyPair,
  parsePrivateKeyFile,
  parsePublicKeyFile,
  PRIVATE_KEY_FILE_TYPE,
  PUBLIC_KEY_FILE_TYPE,
} from "./keys.ts";

const SEED = Uint8Array.from({ length: 32 }, (_, i) => i);
const pair = generateKeyPair(SEED);
const { privateKeyFile, publicKeyFile } = formatKeyFiles(pair);
const priv = JSON.parse(privateKeyFile) as Record<string, unknown>;
const pub = JSON.parse(publicKeyFile) as Record<string, unknown>;

function refusal(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    return err as ReachError;
  }
  throw new Error("expected a ReachError, nothing was thrown");
}

describe("generateKeyPair", () => {
  it("derives the RFC 8032 public key from a given seed and copies the seed", () => {
    const seed = SEED.slice();
    const p = generateKeyPair(seed);
    seed[0] = 99;
    expect(p.privateKey[0]).toBe(0);
    expect(bytesToHex(p.publicKey)).toBe("03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8");
  });
  it("uses crypto.getRandomValues when no seed is given", () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    expect(a.privateKey).toHaveLength(32);
    expect(bytesToHex(a.privateKey)).not.toBe(bytesToHex(b.privateKey));
  });
  it("refuses a seed that is not 32 bytes", () => {
    expect(() => generateKeyPair(new Uint8Array(16))).toThrow(RangeError);
    expect(() => generateKeyPair("seed" as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe("key files", () => {
  it("have the documented format", () => {
    expect(priv).toEqual({
      type: PRIVATE_KEY_FILE_TYPE,
      version: 1,
      publicKey: bytesToHex(pair.publicKey),
      privateKey: bytesToHex(SEED),
    });
    expect(pub).toEqual({ type: PUBLIC_KEY_FILE_TYPE, version: 1, publicKey: bytesToHex(pair.publicKey) });
    expect(privateKeyFile.endsWith("}\n")).toBe(true);
    expect(publicKeyFile).toBe(formatPublicKeyFile(pair.publicKey));
  });
  it("round-trip", () => {
    const back = parsePrivateKeyFile(privateKeyFile);
    expect(bytesToHex(back.privateKey)).toBe(bytesToHex(SEED));
    expect(bytesToHex(back.publicKey)).toBe(bytesToHex(pair.publicKey));
    expect(bytesToHex(parsePublicKeyFile(publicKeyFile))).toBe(bytesToHex(pair.publicKey));
    // any key order and whitespace
    expect(bytesToHex(parsePublicKeyFile(JSON.stringify({ publicKey: pub.publicKey, version: 1, type: pub.type }))))
      .toBe(
        pub.publicKey,
      );
  });
  it("formatKeyFiles refuses a pair whose public key is not the seed's", () => {
    expect(() => formatKeyFiles({ privateKey: SEED, publicKey: generateKeyPair(new Uint8Array(32)).publicKey }))
      .toThrow(
        /not the public key/,
      );
  });
});

describe("parsePrivateKeyFile refuses", () => {
  const cases: [string, string, RegExp][] = [
    ["non-JSON text", "not json", /not valid JSON.*reach-wasm keygen/],
    ["a JSON array", "[]", /private key file is invalid/],
    ["a public key file", publicKeyFile, /this is a public key file/],
    [
      "a wrong type",
      JSON.stringify({ ...priv, type: "ssh-ed25519" }),
      /expected "type": "reach-wasm\/ed25519-private-key"/,
    ],
    ["a wrong version", JSON.stringify({ ...priv, version: 2 }), /version 1 only/],
    ["a missing privateKey", JSON.stringify({ ...priv, privateKey: undefined }), /at privateKey/],
    ["an unknown field", JSON.stringify({ ...priv, comment: "mine" }), /unknown field "comment"; remove it/],
    ["non-hex", JSON.stringify({ ...priv, privateKey: "zz".repeat(32) }), /64 lowercase hex digits/],
    ["uppercase hex", JSON.stringify({ ...priv, privateKey: bytesToHex(SEED).toUpperCase() }), /lowercase hex/],
    ["a short key", JSON.stringify({ ...priv, privateKey: "00".repeat(31) }), /at privateKey/],
    ["a 64-byte expanded key", JSON.stringify({ ...priv, privateKey: "00".repeat(64) }), /at privateKey/],
    [
      "a publicKey that is not the seed's",
      JSON.stringify({ ...priv, publicKey: "11".repeat(32) }),
      /is not the public key of "privateKey"/,
    ],
  ];
  it.each(cases)("%s", (_name, text, message) => {
    const err = refusal(() => parsePrivateKeyFile(text));
    expect(err.code).toBe("PROTO_INVALID_ARGUMENT");
    expect(err.message).toMatch(message);
  });
  it("non-string input", () => {
    expect(refusal(() => parsePrivateKeyFile(42 as unknown as string)).message).toMatch(/expected JSON text/);
  });
});

describe("parsePublicKeyFile refuses", () => {
  const identity = "01" + "00".repeat(31);
  const cases: [string, string, RegExp][] = [
    ["non-JSON text", "{", /not valid JSON/],
    ["a private key file", privateKeyFile, /this is a PRIVATE key file/],
    ["a wrong type", JSON.stringify({ ...pub, type: "x" }), /expected "type": "reach-wasm\/ed25519-public-key"/],
    ["a wrong version", JSON.stringify({ ...pub, version: "1" }), /version 1 only/],
    ["an unknown field", JSON.stringify({ ...pub, privateKey: "00".repeat(32) }), /unknown field "privateKey"/],
    ["non-hex", JSON.stringify({ ...pub, publicKey: "g".repeat(64) }), /64 lowercase hex digits/],
    ["a base64 key", JSON.stringify({ ...pub, publicKey: "A".repeat(43) + "=" }), /64 lowercase hex digits/],
    ["a small-order key", JSON.stringify({ ...pub, publicKey: identity }), /small order/],
    [
      "a key that is not a curve point",
      JSON.stringify({ ...pub, publicKey: "02" + "00".repeat(31) }),
      /not a valid curve point/,
    ],
  ];
  it.each(cases)("%s", (_name, text, message) => {
    const err = refusal(() => parsePublicKeyFile(text));
    expect(err.code).toBe("PROTO_INVALID_ARGUMENT");
    expect(err.message).toMatch(message);
  });
});
