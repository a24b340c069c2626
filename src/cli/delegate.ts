/**
 * `reach-wasm delegate` and `reach-wasm revoke` (seed 003 §6.2, §6.3): grant a peer a signed, scoped, expiring
 * delegation (optionally re-delegating part of one this node holds), and withdraw one, pushing the revocation to
 * every registered peer.
 * @module
 */
import { resolve } from "node:path";
import { entitledRevokers } from "../federation/mod.ts";
import { expiryFrom, signDelegation, verifyDelegation } from "../federation/mod.ts";
import { signRevocation } from "../federation/mod.ts";
import { assertScope, scopeExcess } from "../federation/mod.ts";
import type { NodeState } from "../federation/mod.ts";
import { pushRevocations } from "../federation/mod.ts";
import { refuseOutputOverInput } from "../platform/files.ts";
import { writeFileAtomic } from "../platform/write.ts";
import type { Delegation } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { chainOf, nodeState, peerFetch, readDelegationFile, wallClock } from "./federation-host.ts";
import { parseCommand, usageError } from "./options.ts";
import { DELEGATE, REVOKE } from "./specs-federation.ts";


async function checkNotRevoked(state: NodeState, chain: readonly Delegation[]): Promise<void> {
  const isRevoked = await state.revocationStore.revokedIn(chain);
  for (const [i, link] of chain.entries()) {
    const by = entitledRevokers(chain.slice(0, i + 1)).find((node) => isRevoked(link.delegationId, node));
    if (by !== undefined) throw new ReachError("FED_DELEGATION_REVOKED", `--parent: delegation ${link.delegationId}${i === chain.length - 1 ? "" : ", above it,"} has been revoked by ${by}`);
  }
}

async function checkParent(state: NodeState, self: string, chain: readonly Delegation[], scope: readonly string[], expiresAt: string): Promise<void> {
  const parent = chain[chain.length - 1]!;
  if (parent.delegate !== self) throw new ReachError("FED_TRUST_VIOLATION", `--parent: delegation ${parent.delegationId} was granted to ${parent.delegate}, not to this node (${self}); only its delegate can re-delegate it`);
  const key = (await state.peers()).find((p) => p.nodeId === parent.delegator)?.publicKey;
  if (key === undefined) throw new ReachError("FED_NODE_UNAUTHORIZED", `--parent: its delegator ${parent.delegator} is not registered here; register it with \`reach-wasm node trust\``);
  if (!verifyDelegation(parent, key)) throw new ReachError("FED_SIGNATURE_INVALID", `--parent: delegation ${parent.delegationId} is not signed by its delegator's registered key`);
  await checkNotRevoked(state, chain);
  if (Date.parse(parent.expiresAt) <= wallClock()) throw new ReachError("FED_DELEGATION_EXPIRED", `--parent: delegation ${parent.delegationId} expired at ${parent.expiresAt}`);
  const excess = scopeExcess(scope, parent.scope);
  if (excess.length > 0) throw new ReachError("FED_DELEGATION_INVALID", `--scope ${excess.join(", ")} is not within the parent's scope [${parent.scope.join(", ")}]; a re-delegation may only narrow it (seed 003 §6.2 rule 2)`, { details: { excess } });
  if (expiresAt > parent.expiresAt) throw new ReachError("FED_DELEGATION_INVALID", `--expires ${expiresAt} is after the parent's expiry ${parent.expiresAt}; choose an earlier expiry`);
}

/**
 * The `delegate` command.
 * @param argv arguments after `delegate`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError for a bad invocation or a delegation that may not be granted
 * @example await runDelegateCommand(["--dir", "a", "--to", id, "--scope", "tool:wordcount", "--expires", "1h", "--out", "a-b.json"], io)
 */
export async function runDelegateCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: o } = parseCommand(DELEGATE, argv);
  await refuseOutputOverInput(o.out, [o.parent], "write the new delegation to another file");
  const state = nodeState(o.dir);
  const self = await state.self();
  const to = o.to;
  if (!(await state.peers()).some((p) => p.nodeId === to)) throw new ReachError("FED_NODE_UNAUTHORIZED", `--to ${to} is not a registered peer; register it first with \`reach-wasm node trust --dir DIR PEER_NODE_JSON\``);
  const scope = assertScope(o.scope.split(",").map((s) => s.trim()).filter((s) => s !== ""), "--scope");
  if (scope.length === 0) throw usageError(DELEGATE, "--scope needs at least one capability");
  const now = wallClock();
  const expiresAt = expiryFrom(o.expires, now);
  const parentFile = o.parent;
  let parent: Delegation | undefined;
  if (parentFile !== undefined) {
    const leaf = await readDelegationFile(parentFile);
    const chain = await chainOf(state, leaf, parentFile).catch(() => [leaf]);
    await checkParent(state, self.identity.nodeId, chain, scope, expiresAt);
    for (const d of chain) await state.storeDelegation(d);
    parent = leaf;
  }
  const d = signDelegation({ delegator: self.identity.nodeId, delegate: to, scope, issuedAt: new Date(now).toISOString(), expiresAt, ...(parent === undefined ? {} : { parent: parent.delegationId }) }, self.keys.privateKey);
  const out = o.out;
  await writeFileAtomic(out, new TextEncoder().encode(JSON.stringify(d, null, 2) + "\n"));
  await state.storeDelegation(d);
  io.stderr(`reach-wasm: delegation ${d.delegationId}: ${self.identity.nodeId} → ${to}, scope [${scope.join(", ")}], until ${expiresAt}${parent === undefined ? "" : `, under ${parent.delegationId}`}; written to ${resolve(out)}\n`);
  if (o.json) io.stdout(JSON.stringify({ delegation: d, out: resolve(out) }) + "\n");
  return 0;
}

/**
 * The `revoke` command: record a signed revocation and push it to every registered peer. This node must be the
 * delegation's delegator or the delegator of a link above it (seed 003 §6.3); the links above are found as for
 * `delegate --parent`.
 * @param argv arguments after `revoke`
 * @param io output streams
 * @returns 0 once recorded (failed pushes are reported; peers pull within 30 s)
 * @throws ReachError `FED_TRUST_VIOLATION` when this node is not entitled to revoke the delegation
 * @example await runRevokeCommand(["--dir", "a", "a-b.json"], io)
 */
export async function runRevokeCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: o, positionals } = parseCommand(REVOKE, argv);
  const state = nodeState(o.dir);
  const self = await state.self();
  const file = positionals[0]!;
  const d = await readDelegationFile(file);
  const above = d.delegator === self.identity.nodeId ? [] : (await chainOf(state, d, file).catch(() => [d])).slice(0, -1);
  const r = signRevocation(d, self.identity.nodeId, self.keys.privateKey, wallClock(), above);
  const fresh = await state.addRevocation(r);
  io.stderr(`reach-wasm: delegation ${d.delegationId} ${fresh ? "revoked" : "was already revoked"}\n`);
  const peers = o["no-push"] ? [] : await state.peers();
  const pushed = await pushRevocations({ self, now: wallClock, fetch: await peerFetch(o.ca) }, peers, [r]);
  for (const p of pushed) io.stderr(`reach-wasm:   ${p.ok ? "pushed to" : "could not push to"} ${p.nodeId} (${p.endpoint})${p.error === undefined ? "" : `: ${p.error.code}: ${p.error.message}`}\n`);
  if (pushed.some((p) => !p.ok) || o["no-push"]) io.stderr("reach-wasm: peers that missed the push pull it within 30 s while they serve\n");
  if (o.json) io.stdout(JSON.stringify({ revocation: r, pushed }) + "\n");
  return 0;
}
