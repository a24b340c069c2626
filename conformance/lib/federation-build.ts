/**
 * Builds the federation vectors of `conformance/vectors/federation/vectors.json` (seed 003 §6): fixed node keys and
 * ids, delegation chains and signed messages at a fixed time, each with the verdict a conforming node must reach.
 * Ed25519 signatures are deterministic, so the file is a pure function of this code; `federation-cases.ts` checks
 * both that the file is what this builds and that reach-wasm reaches every verdict. Regenerate with
 * `deno run --allow-read --allow-write scripts/gen-federation-vectors.ts`.
 *
 * Signing rule (for re-implementers): signature = Ed25519(node seed, UTF-8(JCS(document without "signature"))), key
 * and signature in padded base64 under `signature: {algorithm: "Ed25519", publicKey, signature}`.
 * @module
 */
import { bytesToBase64, bytesToHex } from "../../src/canonical/hex.ts";
import { signDelegation } from "../../src/federation/delegation.ts";
import type { DelegationDraft } from "../../src/federation/delegation.ts";
import { signMessage } from "../../src/federation/message.ts";
import { signRevocation } from "../../src/federation/revocation.ts";
import type { Delegation } from "../../src/protocol/delegation.ts";
import { publicKeyFromPrivateKey } from "../../src/trust/verify.ts";

/** A node of the vectors: id, seed (hex) and public key (base64). */
export type VectorNode = { nodeId: string; seed: string; publicKey: string };
/** A chain vector: validate `chain` at `executor` for `requester`. */
export type ChainVector = { name: string; requester: string; executor: string; registered: string[]; revoked: { delegationId: string; delegator: string }[]; chain: unknown[]; expect: string; scope?: string[] };
/** A message vector: open `messages` in order at `self`; one verdict each ("ok" or a code). */
export type MessageVector = { name: string; self: string; registered: string[]; now: string; messages: unknown[]; expect: string[] };
/** A scope vector. */
export type ScopeVector = { parent: string; child: string; covers: boolean };
/** A revocation vector. */
export type RevocationVector = { name: string; registered: string[]; revocation: unknown; genuine: boolean };
/** The whole file. */
export type FederationVectors = {
  description: string;
  now: string;
  nodes: Record<string, VectorNode>;
  scope: ScopeVector[];
  chains: ChainVector[];
  messages: MessageVector[];
  revocations: RevocationVector[];
};

/** The time every vector is evaluated at. */
export const VECTOR_NOW = "2026-01-01T00:00:00.000Z";
const NOW = Date.parse(VECTOR_NOW);
const MIN = 60_000;

function node(n: number): VectorNode & { key: Uint8Array } {
  const key = new Uint8Array(32).fill(n);
  const hex = n.toString(16).padStart(2, "0");
  return { nodeId: `${hex.repeat(4)}-0000-4000-8000-${hex.repeat(6)}`, seed: bytesToHex(key), publicKey: bytesToBase64(publicKeyFromPrivateKey(key)), key };
}

const iso = (ms: number): string => new Date(ms).toISOString();
const uuid = (n: number): string => `d0000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

function scopeVectors(): ScopeVector[] {
  const pairs: [string, string, boolean][] = [
    ["tool:wordcount", "tool:wordcount", true],
    ["tool:wordcount", "tool:stats", false],
    ["resource:workspace:///data/", "resource:workspace:///data/in/", true],
    ["resource:workspace:///data/", "resource:workspace:///database/", false],
    ["resource:workspace:///data", "resource:workspace:///data/in/", false],
    ["permission:network", "permission:network", true],
    ["permission:network", "permission:filesystem", false],
    ["host:*.example.com", "host:api.example.com", true],
    ["host:*.example.com", "host:*.api.example.com", true],
    ["host:*.example.com", "host:example.com", false],
    ["host:api.example.com", "host:*.example.com", false],
    ["tool:network", "permission:network", false],
  ];
  return pairs.map(([parent, child, covers]) => ({ parent, child, covers }));
}

/**
 * Build every federation vector.
 * @returns the vectors document
 * @example JSON.stringify(buildFederationVectors(), null, 2)
 */
export function buildFederationVectors(): FederationVectors {
  const [A, B, C, D] = [node(1), node(2), node(3), node(4)];
  const all = [A.nodeId, B.nodeId, C.nodeId];
  const sign = (who: { key: Uint8Array }, d: DelegationDraft, id: number): Delegation => signDelegation(d, who.key, uuid(id));
  const base = { issuedAt: iso(NOW - MIN), expiresAt: iso(NOW + 60 * MIN) };
  const ab = sign(A, { delegator: A.nodeId, delegate: B.nodeId, scope: ["tool:wordcount", "tool:stats", "resource:workspace:///data/"], ...base }, 1);
  const bc = sign(B, { delegator: B.nodeId, delegate: C.nodeId, scope: ["tool:wordcount", "resource:workspace:///data/in/"], ...base, parent: ab.delegationId }, 2);
  const ac = sign(A, { delegator: A.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], ...base }, 3);
  const chain = (name: string, links: unknown[], expect: string, extra: Partial<ChainVector> = {}): ChainVector => ({ name, requester: A.nodeId, executor: C.nodeId, registered: all, revoked: [], chain: links, expect, ...extra });
  const chains: ChainVector[] = [
    chain("valid: A→B→C, C executes for A under the narrowed scope", [ab, bc], "valid", { scope: bc.scope }),
    chain("valid: A→C", [ac], "valid", { scope: ac.scope }),
    chain("widened scope at link 1", [ab, sign(B, { delegator: B.nodeId, delegate: C.nodeId, scope: ["tool:wordcount", "tool:slugify"], ...base, parent: ab.delegationId }, 4)], "FED_DELEGATION_INVALID"),
    chain("link 1 expires after its parent", [ab, sign(B, { delegator: B.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], issuedAt: base.issuedAt, expiresAt: iso(NOW + 120 * MIN), parent: ab.delegationId }, 5)], "FED_DELEGATION_INVALID"),
    chain("expired link 0", [sign(A, { delegator: A.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], issuedAt: iso(NOW - 120 * MIN), expiresAt: iso(NOW - MIN) }, 6)], "FED_DELEGATION_EXPIRED"),
    chain("forged: link 1's scope edited after signing", [ab, { ...bc, scope: ["tool:wordcount", "tool:stats"] }], "FED_SIGNATURE_INVALID"),
    chain("forged: link 1 signed by C's key in B's name", [ab, sign(C, { delegator: B.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], ...base, parent: ab.delegationId }, 7)], "FED_SIGNATURE_INVALID"),
    chain("delegator B is not registered at C", [ab, bc], "FED_NODE_UNAUTHORIZED", { registered: [A.nodeId, C.nodeId] }),
    chain("link 0 revoked by A (every chain through it is refused)", [ab, bc], "FED_DELEGATION_REVOKED", { revoked: [{ delegationId: ab.delegationId, delegator: A.nodeId }] }),
    chain("link 1 revoked by B", [ab, bc], "FED_DELEGATION_REVOKED", { revoked: [{ delegationId: bc.delegationId, delegator: B.nodeId }] }),
    chain("a revocation by someone other than the delegator does not count", [ab, bc], "valid", { revoked: [{ delegationId: ab.delegationId, delegator: D.nodeId }], scope: bc.scope }),
    chain("not rooted at the requesting node (B asks with A's chain)", [ab, bc], "FED_TRUST_VIOLATION", { requester: B.nodeId }),
    chain("the last link does not delegate to the executing node", [ab], "FED_TRUST_VIOLATION"),
    chain("link 1 names another parent", [ab, sign(B, { delegator: B.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], ...base, parent: uuid(99) }, 8)], "FED_DELEGATION_INVALID"),
    chain("incomplete: the root has a parent", [bc], "FED_DELEGATION_INVALID", { requester: B.nodeId }),
    chain("malformed scope entry", [sign(A, { delegator: A.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], ...base }, 9)].map((d) => ({ ...d, scope: ["wordcount"] })), "FED_DELEGATION_INVALID"),
    chain("issued more than 120 s in the future", [sign(A, { delegator: A.nodeId, delegate: C.nodeId, scope: ["tool:wordcount"], issuedAt: iso(NOW + 10 * MIN), expiresAt: iso(NOW + 60 * MIN) }, 10)], "FED_DELEGATION_INVALID"),
    chain("empty chain", [], "FED_DELEGATION_INVALID"),
  ];
  const msg = (from: VectorNode & { key: Uint8Array }, to: string, at: number, nonce: string, body: Record<string, unknown> = { hello: "world" }) => signMessage({ type: "revocation.pull", from: from.nodeId, to, body }, from.key, at, nonce);
  const n = (i: number): string => i.toString(16).padStart(32, "0");
  const ok = msg(A, C.nodeId, NOW, n(1));
  const { signature: _s, ...unsigned } = msg(A, C.nodeId, NOW, n(2));
  const mv = (name: string, messages: unknown[], expect: string[], registered = all): MessageVector => ({ name, self: C.nodeId, registered, now: VECTOR_NOW, messages, expect });
  const messages: MessageVector[] = [
    mv("a signed message from a registered node", [ok], ["ok"]),
    mv("unsigned", [unsigned], ["FED_SIGNATURE_MISSING"]),
    mv("body altered after signing", [{ ...msg(A, C.nodeId, NOW, n(3)), body: { hello: "mallory" } }], ["FED_SIGNATURE_INVALID"]),
    mv("signed by another key than the sender's registered one", [{ ...msg(D, C.nodeId, NOW, n(4)), from: A.nodeId }], ["FED_SIGNATURE_INVALID"]),
    mv("from an unregistered node", [msg(D, C.nodeId, NOW, n(5))], ["FED_NODE_UNAUTHORIZED"]),
    mv("replayed: the same message twice", [msg(A, C.nodeId, NOW, n(6)), msg(A, C.nodeId, NOW, n(6))], ["ok", "FED_MESSAGE_REPLAYED"]),
    mv("121 s in the past", [msg(A, C.nodeId, NOW - 121_000, n(7))], ["FED_MESSAGE_STALE"]),
    mv("121 s in the future", [msg(A, C.nodeId, NOW + 121_000, n(8))], ["FED_MESSAGE_STALE"]),
    mv("119 s in the past and in the future", [msg(A, C.nodeId, NOW - 119_000, n(9)), msg(A, C.nodeId, NOW + 119_000, n(10))], ["ok", "ok"]),
    mv("addressed to another node", [msg(A, B.nodeId, NOW, n(11))], ["FED_TRUST_VIOLATION"]),
    mv("not an envelope (nonce missing)", [(({ nonce: _n, ...rest }) => rest)(msg(A, C.nodeId, NOW, n(12)))], ["PROTO_INVALID_MESSAGE"]),
  ];
  const rev = signRevocation(ab, A.nodeId, A.key, NOW);
  const revocations: RevocationVector[] = [
    { name: "signed by the delegator", registered: all, revocation: rev, genuine: true },
    { name: "delegator not registered", registered: [B.nodeId, C.nodeId], revocation: rev, genuine: false },
    { name: "edited after signing", registered: all, revocation: { ...rev, delegationId: bc.delegationId }, genuine: false },
  ];
  const nodes = Object.fromEntries([A, B, C, D].map((x, i) => [["A", "B", "C", "D"][i]!, { nodeId: x.nodeId, seed: x.seed, publicKey: x.publicKey }]));
  return { description: "reach-wasm federation vectors (seed 003 §6): delegation chains, signed messages, scopes, revocations; see conformance/lib/federation-build.ts", now: VECTOR_NOW, nodes, scope: scopeVectors(), chains, messages, revocations };
}
