/**
 * Ed25519 signatures over canonical JSON (RFC 8785), the one signing rule of every federation document and message
 * (seed 003 §6.1 "All federation messages MUST be signed", §6.2 rule 4): the signed bytes are the UTF-8 of the JCS
 * form of the document without its `signature` member; `signature` holds `{algorithm: "Ed25519", publicKey,
 * signature}` with the key and the signature in padded base64.
 * @module
 */
import { canonicalBytes } from "../canonical/mod.ts";
import { base64ToBytes, bytesToBase64 } from "../canonical/mod.ts";
import { publicKeyFromPrivateKey, signEd25519, verifyEd25519 } from "../trust/mod.ts";

/** The signature member of a signed federation document. */
export type Ed25519Signature = { algorithm: "Ed25519"; publicKey: string; signature: string };

/**
 * The bytes a signature covers: JCS of the document without `signature`.
 * @param doc the document (with or without `signature`)
 * @returns the canonical UTF-8 bytes
 * @throws TypeError when the document is not canonical JSON (e.g. holds `undefined` or a non-finite number)
 * @example signedBytes({ a: 1, signature: { algorithm: "Ed25519", publicKey: "…", signature: "…" } }) // utf8('{"a":1}')
 */
export function signedBytes(doc: Record<string, unknown>): Uint8Array {
  const { signature: _omit, ...rest } = doc;
  return canonicalBytes(rest);
}

/**
 * Sign a document: returns a copy with `signature` set.
 * @param doc the document without `signature`
 * @param privateKey the 32-byte Ed25519 seed
 * @returns the signed document
 * @throws TypeError / RangeError when the key is not 32 bytes or the document is not canonical JSON
 * @example const signed = signDocument({ hello: "world" }, seed);
 */
export function signDocument<T extends Record<string, unknown>>(doc: T, privateKey: Uint8Array): T & { signature: Ed25519Signature } {
  const signature = signEd25519(signedBytes(doc), privateKey);
  return { ...doc, signature: { algorithm: "Ed25519", publicKey: bytesToBase64(publicKeyFromPrivateKey(privateKey)), signature: bytesToBase64(signature) } };
}

/**
 * Whether `doc.signature` is a valid Ed25519 signature by `publicKey` (base64) over the document.
 * @param doc the signed document (already schema-checked)
 * @param publicKey the expected signer's key, padded base64
 * @returns true only when the signature's key is `publicKey` and the signature verifies
 * @throws never
 * @example verifyDocument(signDocument(doc, seed), keyBase64) // true
 */
export function verifyDocument(doc: Record<string, unknown> & { signature: Ed25519Signature }, publicKey: string): boolean {
  if (doc.signature.algorithm !== "Ed25519" || doc.signature.publicKey !== publicKey) return false;
  try {
    return verifyEd25519(base64ToBytes(doc.signature.signature), signedBytes(doc), base64ToBytes(publicKey));
  } catch {
    return false;
  }
}
