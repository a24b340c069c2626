/**
 * Signed delegations (seed 003 §6.2): `delegator` lets `delegate` act within `scope` until `expiresAt`; `parent` names
 * the delegation the delegator itself holds. The document is `DelegationSchema` (`conformance/schemas/
 * delegation.schema.json`); the signature is the delegator's node key over its canonical JSON without `signature`
 * (`_signed.ts`). Rule 1 ("explicitly granted"): only a signed document grants anything.
 * @module
 */
import { DelegationSchema } from "../protocol/mod.ts";
import type { Delegation } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { signDocument, verifyDocument } from "./_signed.ts";
import { randomUuidV4 } from "./identity.ts";
import { assertScope } from "./scope.ts";

/** The most entries a scope may have. */
export const MAX_SCOPE_ENTRIES = 256;

/** What a delegator decides; the id and signature are added by {@link signDelegation}. */
export type DelegationDraft = {
  delegator: string;
  delegate: string;
  scope: readonly string[];
  issuedAt: string;
  expiresAt: string;
  parent?: string;
};

/**
 * Parse a delegation strictly: the schema, then every scope entry.
 * @param value the parsed JSON
 * @param what how to name it in errors (a file name, "chain[1]")
 * @returns the delegation
 * @throws ReachError `FED_DELEGATION_INVALID` saying which field is wrong
 * @example parseDelegation(JSON.parse(text), "a-to-b.json")
 */
export function parseDelegation(value: unknown, what: string): Delegation {
  const d = parseOrThrow(DelegationSchema(), value, "FED_DELEGATION_INVALID", what);
  if (d.scope.length > MAX_SCOPE_ENTRIES) throw new ReachError("FED_DELEGATION_INVALID", `${what}: scope has ${d.scope.length} entries; at most ${MAX_SCOPE_ENTRIES}`);
  assertScope(d.scope, `${what}: scope`);
  return d;
}

/**
 * Sign a delegation with the delegator's node key.
 * @param draft the grant
 * @param privateKey the delegator's 32-byte Ed25519 seed
 * @param delegationId the id (default: a random UUID v4)
 * @returns the signed, schema-valid delegation
 * @throws ReachError `FED_DELEGATION_INVALID` when the draft is not a valid delegation (bad scope, expiry before issue, …)
 * @example signDelegation({ delegator: a, delegate: b, scope: ["tool:wordcount"], issuedAt, expiresAt }, seed)
 */
export function signDelegation(draft: DelegationDraft, privateKey: Uint8Array, delegationId: string = randomUuidV4()): Delegation {
  const doc: Record<string, unknown> = {
    delegationId,
    delegator: draft.delegator,
    delegate: draft.delegate,
    scope: [...draft.scope],
    issuedAt: draft.issuedAt,
    expiresAt: draft.expiresAt,
  };
  if (draft.parent !== undefined) doc["parent"] = draft.parent;
  return parseDelegation(signDocument(doc, privateKey), "the new delegation");
}

/**
 * Whether a delegation is signed by `publicKey` (rule 4: "Signature MUST verify against delegator's public key").
 * @param d a parsed delegation
 * @param publicKey the delegator's registered key (padded base64)
 * @returns true only for a valid signature by that key
 * @throws never
 * @example verifyDelegation(d, peer.publicKey) // true
 */
export function verifyDelegation(d: Delegation, publicKey: string): boolean {
  return verifyDocument(d, publicKey);
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * An expiry from `--expires`: a duration (`90s`, `30m`, `12h`, `7d`) from `nowMs`, or an ISO 8601 UTC instant.
 * @param text the option value
 * @param nowMs the current time in ms since the epoch
 * @returns the expiry as ISO 8601 UTC with milliseconds
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for anything else, or an instant that is not in the future
 * @example expiryFrom("1h", Date.UTC(2026, 0, 1)) // "2026-01-01T01:00:00.000Z"
 */
export function expiryFrom(text: string, nowMs: number): string {
  const m = /^([1-9]\d{0,6})([smhd])$/.exec(text);
  let at: number;
  if (m !== null) at = nowMs + Number(m[1]) * UNIT_MS[m[2]!]!;
  else if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?Z$/.test(text) && Number.isFinite(Date.parse(text))) at = Date.parse(text);
  else throw new ReachError("PROTO_INVALID_ARGUMENT", `--expires ${JSON.stringify(text)}: expected a duration such as 90s, 30m, 12h or 7d, or an ISO 8601 UTC instant such as 2026-12-31T23:59:59Z`);
  if (at <= nowMs) throw new ReachError("PROTO_INVALID_ARGUMENT", `--expires ${JSON.stringify(text)} is not in the future; a delegation must expire later than now`);
  if (at > 253_402_300_799_999) throw new ReachError("PROTO_INVALID_ARGUMENT", `--expires ${JSON.stringify(text)} is too far in the future; the latest expiry is 9999-12-31T23:59:59.999Z`);
  return new Date(at).toISOString();
}
