/**
 * The hash rules of seed 003 §3.3, exactly as `ARCHITECTURE.md` "Hashing" and `conformance/HASHING.md` state them:
 *
 * - `payloadHash = hex(SHA256(JCS(payload)))`
 * - `eventHash   = hex(SHA256(utf8(type + timestamp + payloadHash + prevEventHash)))`, first `prevEventHash` = 64 zeros
 * - `runHash     = hex(SHA256(utf8(eventHash₁ + … + eventHashₙ)))`
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";

/** `prevEventHash` of the first event: 64 zeros. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * Hash of a payload: SHA-256 of its RFC 8785 canonical form, lowercase hex.
 * @param payload a JSON value (refused with TypeError if JCS cannot represent it)
 * @returns 64 lowercase hex digits
 * @throws TypeError when the payload is not representable in JCS
 * @example payloadHash({}) // "44136fa3…" (SHA-256 of "{}")
 */
export function payloadHash(payload: unknown): string {
  return sha256Hex(canonicalize(payload));
}

/** Per event type, the committed value fields (conformance/HASHING.md "Value commitments"): value, salt. */
const COMMITTED_FIELDS: Readonly<Record<string, readonly [string, string]>> = {
  "tool.invoked": ["arguments", "argumentsSalt"],
  "tool.completed": ["result", "resultSalt"],
};

/**
 * The form of a payload the chain hashes: a value committed with a salt (`argumentsSalt` beside `arguments` in
 * `tool.invoked`, `resultSalt` beside `result` in `tool.completed`) is left out with its salt, since its commitment
 * (`argumentsCommit`, `outputHash`) is in the payload; any other payload is hashed whole. A redacted payload is
 * therefore already in this form, and hashes the same.
 * @param type the event type
 * @param payload the payload as stored
 * @returns the payload to hash
 */
export function hashedPayload(type: string, payload: Record<string, unknown>): Record<string, unknown> {
  const fields = COMMITTED_FIELDS[type];
  if (fields === undefined || !(fields[1] in payload)) return payload;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload)) if (k !== fields[0] && k !== fields[1]) out[k] = v;
  return out;
}

/**
 * The payloadHash of an event: {@link payloadHash} of its {@link hashedPayload}.
 * @param type the event type
 * @param payload the payload as stored
 * @returns 64 lowercase hex digits
 */
export function eventPayloadHash(type: string, payload: Record<string, unknown>): string {
  return payloadHash(hashedPayload(type, payload));
}

/**
 * Hash of one event, chained to the previous one.
 * @param type event type, e.g. "run.started"
 * @param timestamp ISO 8601 UTC with milliseconds
 * @param payloadHashHex the event's payloadHash
 * @param prevEventHash the previous event's eventHash, or GENESIS_HASH
 * @returns 64 lowercase hex digits
 * @example eventHash("run.started", "1970-01-01T00:00:00.000Z", payloadHash({}), GENESIS_HASH)
 */
export function eventHash(type: string, timestamp: string, payloadHashHex: string, prevEventHash: string): string {
  return sha256Hex(type + timestamp + payloadHashHex + prevEventHash);
}

/**
 * Hash of a whole run: SHA-256 over the concatenated hex event hashes, in order.
 * @param eventHashes every eventHash of the run, first to last
 * @returns 64 lowercase hex digits (for an empty run: SHA-256 of the empty string)
 * @example runHash([]) // "e3b0c442…b855"
 */
export function runHash(eventHashes: readonly string[]): string {
  return sha256Hex(eventHashes.join(""));
}
