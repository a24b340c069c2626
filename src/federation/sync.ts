/**
 * Spreading revocations (seed 003 §6.3 "Revoked delegations MUST be honored within 60 seconds"): `revoke` pushes a
 * new revocation to every registered peer; every serving node also pulls all revocations its peers know at least
 * every 30 s. A revocation is kept only when its signer is registered, its signature verifies and — when this node
 * knows the delegation — the signer is entitled to revoke it (`checkRevocation`); it is kept under its signer
 * (`revocation-store.ts`), so a node cannot be made to refuse a delegation, nor to ignore its real revocation, by
 * someone who did not grant it. A pulled list is taken item by item: what is refused is skipped and counted, and a
 * signer past its limit loses only its own.
 * @module
 */
import type { NodeIdentity } from "../protocol/mod.ts";
import { ReachError, toReachError } from "../protocol/mod.ts";
import { exchange } from "./client.ts";
import type { ClientContext } from "./client.ts";
import { checkRevocation, MAX_PULL_INTERVAL_MS, MAX_REVOCATIONS_PER_MESSAGE, parseRevocation } from "./revocation.ts";
import type { Revocation } from "./revocation.ts";
import type { NodeState } from "./state.ts";

/**
 * How long one pull may wait for a peer (ms). Rounds never overlap and the next starts at most 30 s after the last
 * ended, so two contacts with a reachable peer are at most 10 + 30 s apart: within the 60 s of seed 003 §6.3.
 */
export const PULL_TIMEOUT_MS = 10_000;

/** The outcome for one peer (`refused`: pulled revocations not kept, each for a reason `checkRevocation` or the limit gives). */
export type PeerOutcome = { nodeId: string; endpoint: string; ok: boolean; count: number; refused?: number; error?: { code: string; message: string } };

/**
 * Push revocations to every registered peer (failures are reported, not thrown: the peers' pull catches up).
 * @param ctx this node, its clock and transport
 * @param peers the registered peers
 * @param revocations what to push
 * @returns one outcome per peer, `count` = revocations the peer newly recorded
 * @throws never
 * @example const outcomes = await pushRevocations(ctx, await state.peers(), [r]);
 */
export async function pushRevocations(ctx: ClientContext, peers: readonly NodeIdentity[], revocations: readonly Revocation[]): Promise<PeerOutcome[]> {
  return await Promise.all(
    peers.map(async (p): Promise<PeerOutcome> => {
      try {
        const reply = await exchange(ctx, p, "revocation.push", { revocations }, "revocation.ack");
        const accepted = reply.body["accepted"];
        return { nodeId: p.nodeId, endpoint: p.endpoint, ok: true, count: typeof accepted === "number" ? accepted : 0 };
      } catch (err) {
        const e = toReachError(err, "FED_NODE_UNREACHABLE");
        return { nodeId: p.nodeId, endpoint: p.endpoint, ok: false, count: 0, error: { code: e.code, message: e.message } };
      }
    }),
  );
}

/** Keep what a peer's pull reply holds, item by item; returns how many were kept and how many refused. */
async function keepPulled(state: NodeState, self: string, keyOf: (id: string) => string | undefined, list: readonly unknown[], from: string): Promise<{ count: number; refused: number }> {
  const store = state.revocationStore;
  let count = 0;
  let refused = 0;
  for (const [i, raw] of list.slice(0, MAX_REVOCATIONS_PER_MESSAGE).entries()) {
    const r = parseRevocation(raw, `revocations[${i}] from ${from}`);
    if (await store.has(r.delegator, r.delegationId)) continue;
    const limit = r.delegator === self ? null : state.revocationLimit;
    if (limit !== null && (await store.room(r.delegator, limit)) === 0) {
      refused++; // its signer is at its limit: skipped before the signature is even checked
      continue;
    }
    try {
      await checkRevocation(r, keyOf, (id) => state.delegation(id));
      if (await store.add(r, limit)) count++;
    } catch (err) {
      if (!(err instanceof ReachError) || !/^(FED_|POLICY_RATE_LIMIT_EXCEEDED$)/.test(err.code)) throw err;
      refused++;
    }
  }
  return { count, refused };
}

/**
 * Pull every revocation the registered peers know, from all of them at once, and keep the genuine, entitled new ones.
 * @param ctx this node, its clock and transport
 * @param state the node directory (registry and revocations)
 * @returns one outcome per peer, `count` = revocations newly recorded from it, `refused` = those not kept
 * @throws never for a peer's failure; ReachError when the node directory cannot be read
 * @example await pullRevocations(ctx, state);
 */
export async function pullRevocations(ctx: ClientContext, state: NodeState): Promise<PeerOutcome[]> {
  const peers = await state.peers();
  const self = ctx.self.identity.nodeId;
  const keys = new Map(peers.map((p) => [p.nodeId, p.publicKey]));
  keys.set(self, ctx.self.identity.publicKey);
  return await Promise.all(peers.map(async (p): Promise<PeerOutcome> => {
    try {
      const reply = await exchange(ctx, p, "revocation.pull", {}, "revocation.list", PULL_TIMEOUT_MS);
      const list = reply.body["revocations"];
      const { count, refused } = Array.isArray(list) ? await keepPulled(state, self, (id) => keys.get(id), list, p.nodeId) : { count: 0, refused: 0 };
      return { nodeId: p.nodeId, endpoint: p.endpoint, ok: true, count, ...(refused === 0 ? {} : { refused }) };
    } catch (err) {
      const e = toReachError(err, "FED_NODE_UNREACHABLE");
      return { nodeId: p.nodeId, endpoint: p.endpoint, ok: false, count: 0, error: { code: e.code, message: e.message } };
    }
  }));
}

/**
 * Pull revocations every `intervalMs` until stopped (one round at a time, never overlapping).
 * @param intervalMs the interval, at most 30 s
 * @param round one pull round (e.g. `() => pullRevocations(ctx, state)`)
 * @returns `stop()`, which waits for a round in progress
 * @throws RangeError when `intervalMs` is not 1..30000
 * @example const sync = startRevocationSync(30_000, () => pullRevocations(ctx, state)); await sync.stop();
 */
export function startRevocationSync(intervalMs: number, round: () => Promise<unknown>): { stop(): Promise<void> } {
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1 || intervalMs > MAX_PULL_INTERVAL_MS) {
    throw new RangeError(`"intervalMs" expected 1..${MAX_PULL_INTERVAL_MS} (a revocation must be honoured within 60 s), got ${intervalMs}`);
  }
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = (): void => {
    running = round()
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
