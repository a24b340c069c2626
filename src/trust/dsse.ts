/**
 * DSSE, the Dead Simple Signing Envelope (github.com/secure-systems-lab/dsse: `protocol.md` v1, `envelope.md`
 * v1.0.2), signed with reach-wasm's Ed25519 keys. Web-standard only.
 *
 * - What is signed is the pre-authentication encoding, never the envelope:
 *   `PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, LEN the byte length in ASCII decimal
 *   without leading zeros, `type` the UTF-8 payload type.
 * - The JSON envelope is `{"payload": b64(body), "payloadType": type, "signatures": [{"keyid": id, "sig": b64(sig)}]}`.
 *   We write standard padded base64 and read standard or URL-safe base64, padded or not (the envelope allows both);
 *   unknown fields are ignored, `keyid` is a hint only (it never decides anything: every signature is tried against
 *   the key the caller trusts).
 * - The verifier hands back the payload bytes it verified, so the caller parses exactly what the signature covers.
 * @module
 */
import { bytesToBase64 } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { signEd25519, verifyEd25519 } from "./verify.ts";

/** The payload type of an in-toto Statement in a DSSE envelope. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

/** Longest envelope text accepted (a guard, not a format rule). */
export const MAX_ENVELOPE_CHARS = 8 * 1024 * 1024;

/** One signature of an envelope (`keyid` empty when unset: the spec treats both alike). */
export type DsseSignature = { readonly keyid: string; readonly sig: Uint8Array };

/** A parsed envelope: the payload bytes as carried, its type and the signatures. */
export type DsseEnvelope = { readonly payloadType: string; readonly payload: Uint8Array; readonly signatures: readonly DsseSignature[] };

const enc = new TextEncoder();

/**
 * The DSSE v1 pre-authentication encoding (protocol.md "Signature definition").
 * @param payloadType the payload type (encoded as UTF-8)
 * @param payload the serialized body
 * @returns the bytes a DSSE signature signs
 * @example new TextDecoder().decode(preAuthEncoding("http://example.com/HelloWorld", enc.encode("hello world")))
 * // "DSSEv1 29 http://example.com/HelloWorld 11 hello world"
 */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = enc.encode(payloadType);
  const head = enc.encode(`DSSEv1 ${type.length} `);
  const mid = enc.encode(` ${payload.length} `);
  const out = new Uint8Array(head.length + type.length + mid.length + payload.length);
  out.set(head, 0);
  out.set(type, head.length);
  out.set(mid, head.length + type.length);
  out.set(payload, head.length + type.length + mid.length);
  return out;
}

/**
 * Sign a payload into a JSON envelope (one Ed25519 signature; deterministic: the same key and payload give the same text).
 * @param payloadType the payload type
 * @param payload the serialized body
 * @param privateKey the 32-byte Ed25519 seed
 * @param keyid the hint a verifier may use to find the key (empty: none)
 * @returns the envelope as a JSON object
 * @example signEnvelope(IN_TOTO_PAYLOAD_TYPE, statementBytes, pair.privateKey, bytesToHex(pair.publicKey))
 */
export function signEnvelope(payloadType: string, payload: Uint8Array, privateKey: Uint8Array, keyid = ""): { payload: string; payloadType: string; signatures: { keyid?: string; sig: string }[] } {
  const sig = bytesToBase64(signEd25519(preAuthEncoding(payloadType, payload), privateKey));
  return { payload: bytesToBase64(payload), payloadType, signatures: [keyid === "" ? { sig } : { keyid, sig }] };
}

/**
 * Decode standard or URL-safe base64, padded or not (envelope.md "Either standard or URL-safe encoding is allowed").
 * @param text the base64 text
 * @returns the bytes, or null when the text is not base64
 */
export function decodeDsseBase64(text: string): Uint8Array | null {
  const std = text.replaceAll("-", "+").replaceAll("_", "/");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(std)) return null;
  const bare = std.replace(/=+$/, "");
  if (bare.length % 4 === 1 || (std.length !== bare.length && std.length % 4 !== 0)) return null;
  const bin = atob(bare + "=".repeat((4 - (bare.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function refuse(message: string): ReachError {
  return new ReachError("PROTO_SCHEMA_VIOLATION", `DSSE envelope: ${message}; an envelope is {"payload": "<base64>", "payloadType": "…", "signatures": [{"keyid": "…", "sig": "<base64>"}]} (reach-wasm attest writes one)`);
}

/**
 * Read a JSON envelope (unknown fields ignored, as envelope.md requires).
 * @param text the envelope text
 * @returns the envelope, payload and signatures decoded
 * @throws ReachError `PROTO_SCHEMA_VIOLATION` when the text is not JSON, a required field is missing or has the
 * wrong type, a base64 field does not decode, or there is no signature
 * @example parseEnvelope('{"payload":"aGVsbG8gd29ybGQ=","payloadType":"http://example.com/HelloWorld","signatures":[{"sig":"…"}]}')
 */
export function parseEnvelope(text: string): DsseEnvelope {
  if (text.length > MAX_ENVELOPE_CHARS) throw refuse(`${text.length} characters is over the limit of ${MAX_ENVELOPE_CHARS}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw refuse(`not JSON (${(err as Error).message})`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw refuse("expected a JSON object");
  const { payload, payloadType, signatures } = doc as Record<string, unknown>;
  if (typeof payloadType !== "string") throw refuse(`"payloadType" must be a string`);
  if (typeof payload !== "string") throw refuse(`"payload" must be a base64 string`);
  const body = decodeDsseBase64(payload);
  if (body === null) throw refuse(`"payload" is not base64`);
  if (!Array.isArray(signatures) || signatures.length === 0) throw refuse(`"signatures" must be a non-empty array`);
  const sigs = signatures.map((s, i): DsseSignature => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) throw refuse(`"signatures[${i}]" must be an object`);
    const { keyid, sig } = s as Record<string, unknown>;
    if (keyid !== undefined && typeof keyid !== "string") throw refuse(`"signatures[${i}].keyid" must be a string when set`);
    const bytes = typeof sig === "string" ? decodeDsseBase64(sig) : null;
    if (bytes === null) throw refuse(`"signatures[${i}].sig" must be base64`);
    return { keyid: keyid ?? "", sig: bytes };
  });
  return { payloadType, payload: body, signatures: sigs };
}

/**
 * Whether any signature of the envelope is a valid Ed25519 signature by `publicKey` over the PAE (strict RFC 8032,
 * see `verify.ts`). `keyid` is not consulted.
 * @param envelope the parsed envelope
 * @param publicKey the 32-byte key the caller trusts
 * @returns true when a signature verifies
 * @example verifyEnvelope(parseEnvelope(text), trustedKey) // true
 */
export function verifyEnvelope(envelope: DsseEnvelope, publicKey: Uint8Array): boolean {
  const pae = preAuthEncoding(envelope.payloadType, envelope.payload);
  return envelope.signatures.some((s) => verifyEd25519(s.sig, pae, publicKey));
}
