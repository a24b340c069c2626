/**
 * Delegation chains (seed 003 §6.2 rules 1–4, §6.3 "Delegation chains MUST be validated at each hop"): the links
 * from the requesting node down to the node that executes, each checked on its own and against its parent.
 *
 * | check | refusal |
 * |---|---|
 * | every link is a schema-valid delegation with a well-formed scope | `FED_DELEGATION_INVALID` |
 * | every delegator is registered here | `FED_NODE_UNAUTHORIZED` |
 * | every link is signed by its delegator's registered key (rule 4) | `FED_SIGNATURE_INVALID` |
 * | no link is revoked by its delegator or by the delegator of a link above it (a revoked link breaks every chain through it) | `FED_DELEGATION_REVOKED` |
 * | no link has expired (rule 3); none is issued more than the clock window ahead | `FED_DELEGATION_EXPIRED` / `FED_DELEGATION_INVALID` |
 * | link *i* names link *i−1* as `parent`, and its delegator is link *i−1*'s delegate | `FED_DELEGATION_INVALID` |
 * | link *i*'s scope ⊆ link *i−1*'s (rule 2) and its expiry ≤ link *i−1*'s | `FED_DELEGATION_INVALID` |
 * | the first link is granted by the requesting node and has no parent; the last names this node as delegate | `FED_TRUST_VIOLATION` / `FED_DELEGATION_INVALID` |
 *
 * Pure: time, registry and revocations come from the caller.
 * @module
 */
import type { Delegation } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseDelegation, verifyDelegation } from "./delegation.ts";
import { scopeExcess } from "./scope.ts";

/** The longest chain accepted. */
export const MAX_CHAIN_LENGTH = 16;
/** How far a clock may be ahead of another (ms): message timestamps and `issuedAt` (seed 003 §6; ±120 s). */
export const CLOCK_WINDOW_MS = 120_000;

/** What the validating node knows. */
export type ChainContext = {
  /** The node that asks (the chain's root delegator). */
  requester: string;
  /** This node (the last link's delegate). */
  executor: string;
  /** Now, in ms since the epoch. */
  now: number;
  /** The registered public key (padded base64) of a node, this node included; undefined when unregistered. */
  keyOf(nodeId: string): string | undefined;
  /** Whether `by` has revoked a delegation (a revocation by a node not entitled to revoke it is never asked about). */
  isRevoked(delegationId: string, by: string): boolean;
};

/** A validated chain. */
export type ValidChain = { chain: Delegation[]; scope: readonly string[]; expiresAt: string };

function refuse(code: "FED_DELEGATION_INVALID" | "FED_TRUST_VIOLATION", i: number, message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError(code, `delegation chain link ${i}: ${message}`, { details: { link: i, ...details } });
}

function checkSigned(d: Delegation, i: number, ctx: ChainContext): void {
  const key = ctx.keyOf(d.delegator);
  if (key === undefined) {
    throw new ReachError("FED_NODE_UNAUTHORIZED", `delegation chain link ${i}: its delegator ${d.delegator} is not registered on node ${ctx.executor}; register it there with \`reach-wasm node trust\``, { details: { link: i, delegationId: d.delegationId, nodeId: d.delegator } });
  }
  if (!verifyDelegation(d, key)) {
    throw new ReachError("FED_SIGNATURE_INVALID", `delegation chain link ${i} (${d.delegationId}) is not signed by its delegator ${d.delegator}'s registered key; it was altered or forged`, { details: { link: i, delegationId: d.delegationId } });
  }
}

/**
 * The nodes entitled to revoke the last link of a chain (seed 003 §6.3): its delegator and the delegator of every
 * link above it — a node that granted a link may withdraw everything granted under it. Nobody else is.
 * @param chain the chain down to the link, root first (the link itself last)
 * @returns the entitled node ids, nearest first, each once
 * @throws never
 * @example entitledRevokers([ab, bc]) // [b, a]
 */
export function entitledRevokers(chain: readonly Pick<Delegation, "delegator">[]): string[] {
  return [...new Set(chain.map((d) => d.delegator).reverse())];
}

function checkCurrent(chain: readonly Delegation[], i: number, ctx: ChainContext): void {
  const d = chain[i]!;
  const by = entitledRevokers(chain.slice(0, i + 1)).find((node) => ctx.isRevoked(d.delegationId, node));
  if (by !== undefined) {
    const who = by === d.delegator ? "its delegator" : `${by}, the delegator of a link above it`;
    throw new ReachError("FED_DELEGATION_REVOKED", `delegation ${d.delegationId} (link ${i}, ${d.delegator} → ${d.delegate}) has been revoked by ${who}; ask for a new delegation`, { details: { link: i, delegationId: d.delegationId, revokedBy: by } });
  }
  if (Date.parse(d.expiresAt) <= ctx.now) {
    throw new ReachError("FED_DELEGATION_EXPIRED", `delegation ${d.delegationId} (link ${i}) expired at ${d.expiresAt}; ask for a new delegation`, { details: { link: i, delegationId: d.delegationId, expiresAt: d.expiresAt } });
  }
  if (Date.parse(d.issuedAt) > ctx.now + CLOCK_WINDOW_MS) {
    throw refuse("FED_DELEGATION_INVALID", i, `issued at ${d.issuedAt}, more than ${CLOCK_WINDOW_MS / 1000} s in the future; check the delegator's clock`, { delegationId: d.delegationId });
  }
}

function checkHop(d: Delegation, up: Delegation, i: number): void {
  if (d.parent !== up.delegationId || d.delegator !== up.delegate) {
    throw refuse("FED_DELEGATION_INVALID", i, `does not continue link ${i - 1}: its parent must be ${up.delegationId} and its delegator ${up.delegate}`, { delegationId: d.delegationId });
  }
  const excess = scopeExcess(d.scope, up.scope);
  if (excess.length > 0) {
    throw refuse("FED_DELEGATION_INVALID", i, `widens the scope of its parent by ${excess.join(", ")} (a re-delegation may only narrow it)`, { delegationId: d.delegationId, excess });
  }
  if (d.expiresAt > up.expiresAt) {
    throw refuse("FED_DELEGATION_INVALID", i, `expires at ${d.expiresAt}, after its parent (${up.expiresAt})`, { delegationId: d.delegationId });
  }
}

/**
 * Validate a delegation chain at this hop.
 * @param links the chain, root first (untrusted JSON)
 * @param ctx who asks, who executes, the time, the registry and the revocations
 * @returns the parsed chain with the scope and expiry the run may use (the last link's)
 * @throws ReachError `FED_*` as listed in the module notes
 * @example const { scope } = validateChain(body.chain, { requester, executor, now, keyOf, isRevoked });
 */
export function validateChain(links: unknown, ctx: ChainContext): ValidChain {
  if (!Array.isArray(links) || links.length === 0 || links.length > MAX_CHAIN_LENGTH) {
    throw new ReachError("FED_DELEGATION_INVALID", `the delegation chain must be a list of 1..${MAX_CHAIN_LENGTH} delegations, root first`);
  }
  const chain = links.map((l, i) => parseDelegation(l, `delegation chain link ${i}`));
  if (new Set(chain.map((d) => d.delegationId)).size !== chain.length) throw refuse("FED_DELEGATION_INVALID", 0, "the same delegation appears twice");
  chain.forEach((d, i) => {
    checkSigned(d, i, ctx);
    if (i === 0) {
      if (d.delegator !== ctx.requester) throw refuse("FED_TRUST_VIOLATION", 0, `is granted by ${d.delegator}, but the request comes from ${ctx.requester}: a chain must be rooted at the requesting node`);
      if (d.parent !== undefined) throw refuse("FED_DELEGATION_INVALID", 0, `has a parent (${d.parent}) that is not in the chain; send the whole chain, root first`);
    } else checkHop(d, chain[i - 1]!, i);
    checkCurrent(chain, i, ctx);
  });
  const last = chain[chain.length - 1]!;
  if (last.delegate !== ctx.executor) {
    throw refuse("FED_TRUST_VIOLATION", chain.length - 1, `delegates to ${last.delegate}, not to this node (${ctx.executor})`);
  }
  return { chain, scope: last.scope, expiresAt: last.expiresAt };
}
