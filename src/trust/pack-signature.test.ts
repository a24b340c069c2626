import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64, bytesToHex } from "../canonical/hex.ts";
import { canonicalize } from "../canonical/jcs.ts";
import { sha256Hex, utf8 } from "../canonical/sha256.ts";
import { ReachError } from "../protocol/errors.ts";
import { PackSignatureSchema } from "../protocol/pack.ts";
import { generateKeyPair } from "./keys.ts";
import {
  formatPackSignature,
  PACK_SIGNATURE_PATH,
  packDigest,
  packListing,
  packSignatureMessage,
  parsePackSignature,
  signPack,
  verifyPackSignature,
} from "./pack-signature.ts";
import type { PackSignatureDocument } from "./pack-signature.ts";
import { TrustStore } from "./trust-store.ts";
import { verifyEd25519 } from "./verify.ts";

const signer = generateKeyPair(new Uint8Array(32).fill(7));
const other = generateKeyPair(new Uint8Array(32).fill(8));
const pack = (): Map<string, Uint8Array> =>
  new Map([
    ["reach.json", utf8('{"id":"p"}')],
    ["tools/b.wasm", new Uint8Array([0, 97, 115, 109])],
    ["tools/a.js", utf8("export default 1;")],
    ["README", new Uint8Array(0)],
  ]);

function failure(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).code).toBe("PACK_INVALID_SIGNATURE");
    return err as ReachError;
  }
  throw new Error("expected PACK_INVALID_SIGNATURE, nothing was thrown");
}

describe("pack digest", () => {
  it("is SHA-256 of JCS({files}) with entries sorted by path, sizes and hashes", () => {
    const listing = packListing(pack());
    expect(listing.map((e) => e.path)).toEqual(["README", "reach.json", "tools/a.js", "tools/b.wasm"]);
    expect(listing[0]).toEqual({ path: "README", sha256: sha256Hex(new Uint8Array(0)), size: 0 });
    const expected = sha256Hex(
      '{"files":[' +
        listing.map((e) => `{"path":"${e.path}","sha256":"${e.sha256}","size":${e.size}}`).join(",") +
        "]}",
    );
    expect(packDigest(pack())).toBe(expected);
    expect(packDigest({})).toBe(sha256Hex('{"files":[]}'));
  });
  it("does not depend on insertion order or input kind, and excludes .reach/signature only", () => {
    const reversed = new Map([...pack()].reverse());
    expect(packDigest(reversed)).toBe(packDigest(pack()));
    expect(packDigest(Object.fromEntries(pack()))).toBe(packDigest(pack()));
    expect(packDigest(new Map(pack()).set(PACK_SIGNATURE_PATH, utf8("anything")))).toBe(packDigest(pack()));
    expect(packDigest(new Map(pack()).set(".reach/other", utf8("x")))).not.toBe(packDigest(pack()));
    expect(packDigest(new Map(pack()).set("tools/a.js", utf8("export default 2;")))).not.toBe(packDigest(pack()));
  });
  it.each(["/abs", "./reach.json", "a/../b", "a//b", "a\\b", "dir/", "é.txt", ""])("refuses the path %j", (path) => {
    try {
      packListing(new Map([[path, new Uint8Array(0)]]));
      throw new Error("not refused");
    } catch (err) {
      expect((err as ReachError).code).toBe("PACK_MALFORMED");
      expect((err as Error).message).toMatch(/rename the file/);
    }
  });
  it("refuses non-bytes contents with a TypeError", () => {
    expect(() => packListing({ "a.txt": "text" as unknown as Uint8Array })).toThrow(TypeError);
  });
});

describe("signPack", () => {
  const doc = signPack(pack(), signer.privateKey);
  it("writes the upstream Signature fields plus the digest and listing, and no signedAt unless given", () => {
    expect(Object.keys(doc)).toEqual([
      "algorithm",
      "digest",
      "signature",
      "publicKey",
      "type",
      "version",
      "packDigest",
      "files",
    ]);
    expect(doc.algorithm).toBe("Ed25519");
    expect(doc.digest).toBe("SHA-256");
    expect(base64ToBytes(doc.publicKey)).toEqual(signer.publicKey);
    expect(doc.packDigest).toBe(packDigest(pack()));
    const upstream = PackSignatureSchema().safeParse({
      algorithm: doc.algorithm,
      digest: doc.digest,
      signature: doc.signature,
      publicKey: doc.publicKey,
    });
    expect(upstream.success).toBe(true);
    expect(signPack(pack(), signer.privateKey, "2026-01-01T00:00:00.000Z").signedAt).toBe("2026-01-01T00:00:00.000Z");
  });
  it("signs JCS({type, version, packDigest, signedAt?}) and is deterministic", () => {
    const message = utf8(canonicalize({ type: "reach-wasm/pack-signature", version: 1, packDigest: doc.packDigest }));
    expect(packSignatureMessage(doc.packDigest)).toEqual(message);
    expect(verifyEd25519(base64ToBytes(doc.signature), message, signer.publicKey)).toBe(true);
    expect(signPack(pack(), signer.privateKey)).toEqual(doc);
  });
  it("refuses a bad signedAt or key", () => {
    expect(() => signPack(pack(), signer.privateKey, "2026-01-01")).toThrow(RangeError);
    expect(() => signPack(pack(), new Uint8Array(31))).toThrow(RangeError);
  });
  it("matches the upstream Signature schema's documented fields (base64)", () => {
    const upstream = JSON.parse(
      readFileSync(new URL("../../conformance/upstream-schemas/pack.schema.json", import.meta.url), "utf8"),
    );
    const sig = (upstream.$defs ?? upstream.definitions).Signature;
    expect(sig.required.every((k: string) => k in doc)).toBe(true);
    expect(sig.properties.signature.description).toMatch(/Base64/);
  });
});

describe("verifyPackSignature", () => {
  const signedAt = "2026-01-01T00:00:00.000Z";
  const doc = signPack(pack(), signer.privateKey, signedAt);
  const text = formatPackSignature(doc);
  const withSig = () => new Map(pack()).set(PACK_SIGNATURE_PATH, utf8(text));

  it("accepts the signed pack (text, bytes or object), untrusted without a store", () => {
    const result = verifyPackSignature(withSig(), text);
    expect(result).toEqual({
      valid: true,
      digest: doc.packDigest,
      publicKey: bytesToHex(signer.publicKey),
      trusted: false,
      signedAt,
    });
    expect(verifyPackSignature(pack(), utf8(text)).valid).toBe(true);
    expect(verifyPackSignature(pack(), JSON.parse(text)).valid).toBe(true);
  });
  it("reports trust from the trust store", () => {
    const store = new TrustStore({ version: 1, keys: [{ publicKey: bytesToHex(signer.publicKey), name: "release" }] });
    expect(verifyPackSignature(pack(), text, store)).toMatchObject({ trusted: true, keyName: "release" });
    const otherStore = new TrustStore({ version: 1, keys: [{ publicKey: bytesToHex(other.publicKey), name: "x" }] });
    expect(verifyPackSignature(pack(), text, otherStore).trusted).toBe(false);
  });
  it("names a tampered file", () => {
    const err = failure(() =>
      verifyPackSignature(new Map(pack()).set("tools/a.js", utf8("export default 666;")), text)
    );
    expect(err.details).toMatchObject({ check: "files", changed: ["tools/a.js"], added: [], removed: [] });
    expect(err.message).toMatch(/changed: tools\/a\.js; re-sign the pack/);
  });
  it("names an added file", () => {
    const err = failure(() => verifyPackSignature(new Map(pack()).set("tools/evil.js", utf8("x")), text));
    expect(err.details).toMatchObject({ check: "files", added: ["tools/evil.js"] });
    expect(err.message).toMatch(/added: tools\/evil\.js/);
  });
  it("names a removed file", () => {
    const files = pack();
    files.delete("README");
    const err = failure(() => verifyPackSignature(files, text));
    expect(err.details).toMatchObject({ check: "files", removed: ["README"] });
    expect(err.message).toMatch(/removed: README/);
  });
  it("refuses a signature made with another key than the one it names", () => {
    const forged = signPack(pack(), other.privateKey, signedAt);
    const err = failure(() => verifyPackSignature(pack(), { ...forged, publicKey: doc.publicKey }));
    expect(err.details).toMatchObject({ check: "signature" });
    expect(err.message).toMatch(/does not verify with "publicKey"/);
  });
  it("accepts a re-signature by another key, but it is not trusted", () => {
    const store = new TrustStore({ version: 1, keys: [{ publicKey: bytesToHex(signer.publicKey), name: "release" }] });
    expect(verifyPackSignature(pack(), signPack(pack(), other.privateKey), store).trusted).toBe(false);
  });
  it("refuses a changed signedAt (it is signed)", () => {
    const err = failure(() => verifyPackSignature(pack(), { ...doc, signedAt: "2027-01-01T00:00:00.000Z" }));
    expect(err.details["check"]).toBe("signature");
    expect(failure(() => verifyPackSignature(pack(), (({ signedAt: _, ...rest }) => rest)(doc))).details["check"]).toBe(
      "signature",
    );
  });
  it("refuses a listing altered together with the files but not the digest", () => {
    const files = new Map(pack()).set("tools/a.js", utf8("evil"));
    const listing = doc.files.map((e) => (e.path === "tools/a.js" ? { ...e, sha256: sha256Hex("evil"), size: 4 } : e));
    const err = failure(() => verifyPackSignature(files, { ...doc, files: listing }));
    expect(err.details["check"]).toBe("listing");
  });
  it("refuses a re-digested listing (the signature covers the digest)", () => {
    const files = new Map(pack()).set("tools/a.js", utf8("evil"));
    const forged = { ...doc, files: packListing(files), packDigest: packDigest(files) };
    expect(failure(() => verifyPackSignature(files, forged)).details["check"]).toBe("signature");
  });
  it("refuses a small-order publicKey", () => {
    const identity = new Uint8Array(32);
    identity[0] = 1;
    const err = failure(() => verifyPackSignature(pack(), { ...doc, publicKey: bytesToBase64(identity) }));
    expect(err.message).toMatch(/small order/);
  });

  const malformed: [string, unknown, RegExp][] = [
    ["non-JSON text", "{", /not valid JSON/],
    ["non-UTF-8 bytes", new Uint8Array([0xff, 0xfe]), /not UTF-8/],
    ["a wrong algorithm", { ...doc, algorithm: "RSA" }, /at algorithm/],
    ["a wrong digest", { ...doc, digest: "SHA-512" }, /at digest/],
    ["a hex signature", { ...doc, signature: "00".repeat(64) }, /88 chars/],
    ["a truncated signature", { ...doc, signature: doc.signature.slice(0, 84) + "==" }, /at signature/],
    ["a missing publicKey", { ...doc, publicKey: undefined }, /at publicKey/],
    ["an unknown field", { ...doc, keyId: "x" }, /unknown field "keyId"/],
    ["a wrong version", { ...doc, version: 2 }, /version 1 only/],
    ["a wrong type", { ...doc, type: "x" }, /expected "type"/],
    ["an unsorted listing", { ...doc, files: [...doc.files].reverse() }, /ascending order/],
    ["a bad signedAt", { ...doc, signedAt: "yesterday" }, /at signedAt/],
    ["an array", [], /expected object/],
  ];
  it.each(malformed)("refuses a malformed document: %s", (_name, input, message) => {
    const err = failure(() => verifyPackSignature(pack(), input as PackSignatureDocument));
    expect(err.details["check"]).toBe("format");
    expect(err.message).toMatch(message);
    expect(err.message).toMatch(/sign the pack again/);
    expect(() => parsePackSignature(input)).toThrow(ReachError);
  });
});
