/**
 * Node identity (seed 003 §6.1): a persistent UUID v4, an Ed25519 key, an HTTPS endpoint. `node.json` is the public
 * identity (`NodeIdentitySchema`, `conformance/schemas/node-identity.schema.json`); the key is a private key file of
 * `src/trust/keys.ts`. Plain `http:` endpoints are accepted only on a loopback address.
 * @module
 */
import { base64ToBytes, bytesToBase64, bytesToHex } from "../canonical/mod.ts";
import { NodeIdentitySchema } from "../protocol/mod.ts";
import type { NodeIdentity } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { generateKeyPair } from "../trust/mod.ts";
import { publicKeyProblem } from "../trust/mod.ts";
import type { KeyPair } from "../trust/mod.ts";

/** A node's own identity with its key pair. */
export type NodeSelf = { identity: NodeIdentity; keys: KeyPair };

/**
 * A random UUID version 4 (RFC 9562 §5.4) from `crypto.getRandomValues` (never on a hashed path).
 * @param random 16 bytes to use instead of fresh randomness (tests)
 * @returns the lowercase UUID
 * @throws RangeError when `random` is not 16 bytes
 * @example randomUuidV4() // "3b9f…-…-4…-[89ab]…-…"
 */
export function randomUuidV4(random?: Uint8Array): string {
  if (random !== undefined && random.length !== 16) throw new RangeError(`"random" expected 16 bytes, got length=${random.length}`);
  const b = random === undefined ? crypto.getRandomValues(new Uint8Array(16)) : random.slice();
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = bytesToHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Whether a host name (as in `URL.hostname`) is a loopback address: `localhost`, `127.0.0.0/8` or `::1`.
 * @param hostname the host, IPv6 with or without brackets
 * @returns true for loopback
 * @throws never
 * @example isLoopbackHost("127.0.0.1") // true
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
}

/**
 * Check and normalise an endpoint URL: `https://…`, or `http://…` on a loopback host only; no query, fragment or
 * credentials; no trailing slash.
 * @param endpoint the URL text
 * @returns the normalised URL
 * @throws ReachError `PROTO_INVALID_ARGUMENT` saying what to change
 * @example normalizeEndpoint("https://node-a.example:8443/") // "https://node-a.example:8443"
 */
export function normalizeEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `endpoint ${JSON.stringify(endpoint)} is not a URL; give one such as https://node-a.example:8443`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `endpoint ${JSON.stringify(endpoint)} must be https:// (plain http:// is allowed only on a loopback address such as 127.0.0.1)`);
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `endpoint ${JSON.stringify(endpoint)} must not carry credentials, a query or a fragment`);
  }
  return url.href.replace(/\/+$/, "");
}

/**
 * Create a new node: a random UUID v4 and a fresh Ed25519 key pair.
 * @param endpoint the node's endpoint URL (see {@link normalizeEndpoint})
 * @param random optional 16 + 32 bytes (UUID, key seed) for reproducible tests
 * @returns the identity (`node.json`) and its key pair
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad endpoint
 * @example const { identity, keys } = createNode("https://127.0.0.1:8443");
 */
export function createNode(endpoint: string, random?: Uint8Array): NodeSelf {
  const url = normalizeEndpoint(endpoint);
  if (random !== undefined && random.length !== 48) throw new RangeError(`"random" expected 48 bytes, got length=${random.length}`);
  const keys = generateKeyPair(random?.slice(16));
  const identity = parseNodeIdentity({ nodeId: randomUuidV4(random?.slice(0, 16)), publicKey: bytesToBase64(keys.publicKey), endpoint: url }, "the new node.json");
  return { identity, keys };
}

/**
 * Parse a node identity document (`node.json`) strictly.
 * @param value the parsed JSON
 * @param what how to name it in errors
 * @returns the identity, endpoint normalised
 * @throws ReachError `PROTO_SCHEMA_VIOLATION` for a document that is not a node identity, `PROTO_INVALID_ARGUMENT` for
 *   an endpoint that is plain http on a non-loopback host
 * @example parseNodeIdentity(JSON.parse(text), "peer.json")
 */
export function parseNodeIdentity(value: unknown, what: string): NodeIdentity {
  const doc = parseOrThrow(NodeIdentitySchema(), value, "PROTO_SCHEMA_VIOLATION", what);
  const problem = publicKeyProblem(base64ToBytes(doc.publicKey));
  if (problem !== undefined) throw new ReachError("PROTO_SCHEMA_VIOLATION", `${what}: publicKey ${problem}`);
  return { ...doc, endpoint: normalizeEndpoint(doc.endpoint) };
}

/**
 * The public key of an identity as hex (the form of key files and proofs).
 * @param identity a node identity
 * @returns 64 lowercase hex digits
 * @throws never for a parsed identity
 * @example publicKeyHex(peer) // "3b…"
 */
export function publicKeyHex(identity: NodeIdentity): string {
  return bytesToHex(base64ToBytes(identity.publicKey));
}
