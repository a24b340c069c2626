/**
 * Revocations (seed 003 §6.3 "Revoked delegations MUST be honored within 60 seconds"): a delegator withdraws a
 * delegation with a signed document; every node that holds it refuses the delegation and every chain through it.
 * Revocations spread by push (`reach-wasm revoke` sends them to every registered peer) and by pull (each serving node
 * asks every registered peer at least every 30 s), so one lost push delays nothing beyond 60 s.
 * ```
 * {"type":"reach-wasm/revocation","version":1,"delegationId":"<uuid>","delegator":"<node id>",
 *  "revokedAt":"<ISO>","signature":{"algorithm":"Ed25519","publicKey":"<base64>","signature":"<base64>"}}
 * ```
 * signed by `delegator`'s node key over the canonical JSON without `signature`. `delegator` is the node that revokes:
 * the link's own delegator, or the delegator of a link above it in the chain (§6.2: a node that granted a link may
 * withdraw everything granted under it). Nobody else is entitled ({@link entitledRevokers}): a node refuses such a
 * revocation when it knows the delegation, and a chain ignores it when it is presented later, so a revocation signed
 * by the wrong node can neither revoke a delegation nor stand in the way of the real revocation — they are kept
 * apart, by (`delegator`, `delegationId`), in `revocation-store.ts`.
 * @module
 */
import { z } from "zod";
import { strictObject, timestamp, uuid } from "../protocol/mod.ts";
import { entitledRevokers, MAX_CHAIN_LENGTH } from "./chain.ts";
import type { Delegation } from "../protocol/mod.ts";
import { DelegationSignatureSchema } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { signDocument, verifyDocument } from "./_signed.ts";

/** `type` of a revocation. */
export const REVOCATION_TYPE = "reach-wasm/revocation";
/** Pull interval a serving node uses by default (ms); with one lost push a revocation arrives within 2 × 30 s. */
export const DEFAULT_PULL_INTERVAL_MS = 30_000;
/** The longest pull interval allowed, so that a revocation is honoured within 60 s. */
export const MAX_PULL_INTERVAL_MS = 30_000;
/** The most revocations one message carries. */
export const MAX_REVOCATIONS_PER_MESSAGE = 10_000;
/**
 * The most revocations a node keeps signed by one other node (its own are not limited). Beyond it that node's
 * revocations are refused with `POLICY_RATE_LIMIT_EXCEEDED`; every other node's still land.
 */
export const MAX_REVOCATIONS_PER_NODE = 10_000;
/**
 * The most revocations signed by one other node that a pull reply relays (a window that moves on at each pull): the
 * signer itself serves all of its own, so one node's many revocations cannot make every reply, and every node that
 * pulls it, carry them.
 */
export const MAX_RELAYED_PER_NODE = 1_000;

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
 * Revoke a delegation this node granted, or one granted under a delegation it granted.
 * @param delegation the delegation to withdraw
 * @param self this node's id (the delegation's delegator, or the delegator of a link of `above`)
 * @param privateKey this node's key
 * @param nowMs the time of revocation
 * @param above the links above `delegation`, root first (needed only when this node is not its delegator)
 * @returns the signed revocation
 * @throws ReachError `FED_TRUST_VIOLATION` when this node is not entitled to revoke it
 * @example const r = signRevocation(d, self.identity.nodeId, self.keys.privateKey, Date.now());
 */
export function signRevocation(delegation: Delegation, self: string, privateKey: Uint8Array, nowMs: number, above: readonly Delegation[] = []): Revocation {
  if (!entitledRevokers([...above, delegation]).includes(self)) {
    throw new ReachError("FED_TRUST_VIOLATION", `delegation ${delegation.delegationId} was granted by ${delegation.delegator}, not by this node (${self}), and this node granted no link above it; only its delegator or the delegator of a link above it can revoke it`);
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
 * Check that a revocation is genuine and that its signer may revoke the delegation, as far as this node knows it: the
 * delegation and the links above it are looked up with `find` (this node's kept delegations). When the delegation is
 * unknown here, or a link above it is, the revocation is kept under its signer and a chain decides later.
 * @param r the revocation
 * @param keyOf the registry (padded base64 key per node id)
 * @param find a kept delegation by id, or undefined
 * @returns nothing
 * @throws ReachError `FED_NODE_UNAUTHORIZED` (signer not registered), `FED_SIGNATURE_INVALID` (not its signature),
 *   `FED_TRUST_VIOLATION` (the signer is neither the delegator nor one above it)
 * @example await checkRevocation(r, view.keyOf, (id) => state.delegation(id));
 */
export async function checkRevocation(r: Revocation, keyOf: (nodeId: string) => string | undefined, find: (id: string) => Promise<Delegation | undefined>): Promise<void> {
  const what = `the revocation of delegation ${r.delegationId} by ${r.delegator}`;
  if (keyOf(r.delegator) === undefined) throw new ReachError("FED_NODE_UNAUTHORIZED", `${what}: ${r.delegator} is not registered on this node; only registered nodes' revocations are kept`, { details: { delegationId: r.delegationId, nodeId: r.delegator } });
  if (!isGenuine(r, keyOf)) throw new ReachError("FED_SIGNATURE_INVALID", `${what} is not signed by ${r.delegator}'s registered key; it was altered or forged`, { details: { delegationId: r.delegationId, nodeId: r.delegator } });
  const lookup = async (id: string): Promise<Delegation | undefined> => await find(id).catch(() => undefined);
  const leaf = await lookup(r.delegationId);
  if (leaf === undefined) return;
  const chain: Delegation[] = [leaf];
  for (let parent = leaf.parent; parent !== undefined; parent = chain[0]!.parent) {
    const up: Delegation | undefined = chain.length < MAX_CHAIN_LENGTH ? await lookup(parent) : undefined;
    if (up === undefined) return; // the chain above is not known here: a presented chain decides
    chain.unshift(up);
  }
  const entitled = entitledRevokers(chain);
  if (!entitled.includes(r.delegator)) {
    throw new ReachError("FED_TRUST_VIOLATION", `${what}: ${r.delegator} is neither the delegation's delegator nor the delegator of a link above it (${entitled.join(", ")}); only they can revoke it`, { details: { delegationId: r.delegationId, nodeId: r.delegator, entitled } });
  }
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
