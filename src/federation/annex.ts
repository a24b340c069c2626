/**
 * The federation annex of a delegated run's capsule (`federation.jsonl`, `src/engine/annex.ts`): one
 * `federation.delegation` event per link of the chain the run executed under, root first, then one `capsule.sync`
 * naming the requesting node the capsule goes to. The events depend only on the chain and the run, so the requesting
 * node can rebuild them byte for byte and compare.
 * @module
 */
import { deriveId } from "../canonical/mod.ts";
import type { AnnexEvent } from "../engine/mod.ts";
import type { Delegation } from "../protocol/mod.ts";

/**
 * The annex events of a delegated run.
 * @param chain the validated chain, root first
 * @param run the finished run's id and hash
 * @param requester the node the capsule is returned to
 * @returns the events for `runEngine`'s `annex`
 * @throws never
 * @example delegationAnnex(chain, { runId, runHash }, requesterId)
 */
export function delegationAnnex(chain: readonly Delegation[], run: { runId: string; runHash: string }, requester: string): AnnexEvent[] {
  return [
    ...chain.map((d): AnnexEvent => ({ type: "federation.delegation", payload: { delegator: d.delegator, delegate: d.delegate, scope: [...d.scope], expiresAt: d.expiresAt } })),
    { type: "capsule.sync", payload: { runId: run.runId, status: "success", runHash: run.runHash, capsuleId: deriveId("reach-wasm/capsule", run.runHash), peer: requester } },
  ];
}
