/**
 * A delegated run, on the requesting node's side (seed 003 §6.2): send the pack and the request with the delegation
 * chain to the delegate, and accept the answer only when it authenticates and its capsule checks out
 * (`capsule-check.ts`). The caller writes the capsule and run files; a refusal writes nothing.
 * @module
 */
import { z } from "zod";
import { decodeBase64, encodeBase64 } from "./_base64.ts";
import type { Delegation, NodeIdentity } from "../protocol/mod.ts";
import { ENTRY_PATH_RE, SHA256_HEX_RE, UUID_RE } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import { checkDelegatedCapsule } from "./capsule-check.ts";
import { exchange, RUN_TIMEOUT_MS } from "./client.ts";
import type { ClientContext } from "./client.ts";
import { parseDelegation } from "./delegation.ts";
import { MAX_CHAIN_LENGTH } from "./chain.ts";

/** What to run where. */
export type DelegatedRunRequest = {
  /** The pack's `.tar.gz` bytes. */
  archive: Uint8Array;
  input: JsonValue;
  seed?: string;
  approve: boolean;
  restricted: boolean;
  maxSteps?: number;
  stepTimeoutMs?: number;
  /** The delegation chain, root (granted by this node) first, last link to the delegate. */
  chain: readonly Delegation[];
};

/** A verified delegated run. */
export type DelegatedRun = { runId: string; runHash: string; status: string; capsule: { name: string; bytes: Uint8Array }; files: Map<string, Uint8Array> };

const ResultBodySchema = z.strictObject({
  runId: z.string().regex(UUID_RE),
  runHash: z.string().regex(SHA256_HEX_RE),
  status: z.enum(["COMPLETED", "FAILED", "ABORTED"]),
  capsule: z.string(),
  files: z.record(z.string().max(1024).regex(ENTRY_PATH_RE), z.string()),
});

function bytesOf(text: string, what: string): Uint8Array {
  return decodeBase64(text, `the delegate's run result: ${what}`);
}

/**
 * Ask `delegate` to run a pack and return the verified result.
 * @param ctx this node, its clock and transport
 * @param delegate the registered node that executes (the chain's last delegate)
 * @param req the pack, the request and the chain
 * @returns the run with its capsule and run files, verified
 * @throws ReachError the delegate's refusal (`FED_*`, `POLICY_VIOLATION`, `PACK_*`), `FED_NODE_UNREACHABLE`, or
 *   `FED_TRUST_VIOLATION` for a result that does not check out
 * @example const run = await requestDelegatedRun(ctx, peer, { archive, input: {}, approve: false, restricted: true, chain });
 */
export async function requestDelegatedRun(ctx: ClientContext, delegate: NodeIdentity, req: DelegatedRunRequest): Promise<DelegatedRun> {
  const body: Record<string, unknown> = { pack: encodeBase64(req.archive), input: req.input, approve: req.approve, restricted: req.restricted, chain: req.chain };
  if (req.seed !== undefined) body["seed"] = req.seed;
  if (req.maxSteps !== undefined) body["maxSteps"] = req.maxSteps;
  if (req.stepTimeoutMs !== undefined) body["stepTimeoutMs"] = req.stepTimeoutMs;
  const reply = await exchange(ctx, delegate, "run.request", body, "run.result", RUN_TIMEOUT_MS);
  const result = parseOrThrow(ResultBodySchema, reply.body, "PROTO_INVALID_MESSAGE", "the delegate's run result");
  const capsule = bytesOf(result.capsule, "capsule");
  const files = new Map<string, Uint8Array>();
  for (const [path, text] of Object.entries(result.files)) files.set(path, bytesOf(text, path));
  checkDelegatedCapsule(capsule, files, { runId: result.runId, runHash: result.runHash, status: result.status, delegate, requester: ctx.self.identity.nodeId, chain: req.chain });
  return { runId: result.runId, runHash: result.runHash, status: result.status, capsule: { name: `${result.runHash}.capsule.tar.gz`, bytes: capsule }, files };
}

/**
 * Resolve a delegation chain from its last link by following `parent` ids.
 * @param leaf the delegation the run is to use
 * @param find looks a delegation up by id (this node's kept delegations, files beside the leaf, …)
 * @returns the chain, root first
 * @throws ReachError `FED_DELEGATION_INVALID` when a parent cannot be found or the chain is too long
 * @example const chain = await resolveChain(leaf, (id) => state.delegation(id));
 */
export async function resolveChain(leaf: Delegation, find: (id: string) => Promise<Delegation | undefined>): Promise<Delegation[]> {
  const chain = [leaf];
  while (chain[0]!.parent !== undefined) {
    const id = chain[0]!.parent;
    if (chain.length >= MAX_CHAIN_LENGTH) throw new ReachError("FED_DELEGATION_INVALID", `the delegation chain is longer than ${MAX_CHAIN_LENGTH} links`);
    const parent = await find(id);
    if (parent === undefined) {
      throw new ReachError("FED_DELEGATION_INVALID", `the parent delegation ${id} of ${chain[0]!.delegationId} is not known here; put its file beside the delegation file, or in the node directory's delegations/`, { details: { delegationId: id } });
    }
    chain.unshift(parseDelegation(parent, `delegation ${id}`));
  }
  return chain;
}
