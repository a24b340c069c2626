/**
 * Revocations (seed 003 §6.3 "Revoked delegations MUST be honored within 60 seconds"): a delegator withdraws a
 * delegation it granted with a signed document; every node that holds it refuses the delegation and every chain
 * through it. Revocations spread by push (`reach-wasm revoke` sends them to every registered peer) and by pull (each
 * serving node asks every registered peer at least every 30 s), so one lost push delays nothing beyond 60 s.
 * ```
 * {"type":"reach-wasm/revocation","version":1,"delegationId":"<uuid>","delegator":"<node id>",
 *  "revokedAt":"<ISO>","signature":{"algorithm":"Ed25519","publicKey":"<base64>","signature":"<base64>"}}
 * ```
 * signed by the delegator's node key over the canonical JSON without `signature`.
 * @module
 */
import { z } from "zod";
import { strictObject, timestamp, uuid } from "../protocol/_common.ts";
import type { Delegation } from "../protocol/delegation.ts";
import { DelegationSignatureSchema } from "../protocol/delegation.ts";
import { ReachError } from "../protocol/errors.ts";
import { parseOrThrow } from "../protocol/parse.ts";
import { signDocument, verifyDocument } from "./_signed.ts";

/** `type` of a revocation. */
export const REVOCATION_TYPE = "reach-wasm/revocation";
/** Pull interval a serving node uses by default (ms); with one lost push a revocation arrives within 2 × 30 s. */
export const DEFAULT_PULL_INTERVAL_MS = 30_000;
/** The longest pull interval allowed, so that a revocation is honoured within 60 s. */
export const MAX_PULL_INTERVAL_MS = 30_000;
/** The most revocations one message carries. */
export const MAX_REVOCATIONS_PER_MESSAGE = 10_000;

/** A revocation document. */
export const RevocationSchema = strictObject("revocation", {
  type: z.literal(REVOCATION_TYPE, { error: `expected "type": "${REVOCATION_TYPE}"` }),
  version: z.literal(1),
  delegationId: uuid(),
  delegator: uuid(),
  revokedAt: timestamp(),
  signature: DelegationSignatureSchema(),
});
/** A revocation. */
export type Revocation = z.output<typeof RevocationSchema>;

/**
 * Revoke a delegation this node granted.
 * @param delegation the delegation to withdraw
 * @param self this node's id (must be the delegation's delegator)
 * @param privateKey this node's key
 * @param nowMs the time of revocation
 * @returns the signed revocation
 * @throws ReachError `FED_TRUST_VIOLATION` when this node is not the delegator
 * @example const r = signRevocation(d, self.identity.nodeId, self.keys.privateKey, Date.now());
 */
export function signRevocation(delegation: Delegation, self: string, privateKey: Uint8Array, nowMs: number): Revocation {
  if (delegation.delegator !== self) {
    throw new ReachError("FED_TRUST_VIOLATION", `delegation ${delegation.delegationId} was granted by ${delegation.delegator}, not by this node (${self}); only its delegator can revoke it`);
  }
  const doc = { type: REVOCATION_TYPE, version: 1, delegationId: delegation.delegationId, delegator: self, revokedAt: new Date(nowMs).toISOString() };
  return parseRevocation(signDocument(doc, privateKey), "the new revocation");
}

/**
 * Parse a revocation strictly.
 * @param value parsed JSON
 * @param what how to name it in errors
 * @returns the revocation
 * @throws ReachError `PROTO_INVALID_MESSAGE` for anything else
 * @example parseRevocation(JSON.parse(text), "revocations/….json")
 */
export function parseRevocation(value: unknown, what: string): Revocation {
  return parseOrThrow(RevocationSchema, value, "PROTO_INVALID_MESSAGE", what);
}

/**
 * Whether a revocation is genuine: signed by its delegator's registered key.
 * @param r the revocation
 * @param keyOf the registry (padded base64 key per node id)
 * @returns true when the delegator is registered and the signature verifies
 * @throws never
 * @example isGenuine(r, (id) => peers.get(id)?.publicKey)
 */
export function isGenuine(r: Revocation, keyOf: (nodeId: string) => string | undefined): boolean {
  const key = keyOf(r.delegator);
  return key !== undefined && verifyDocument(r, key);
}
