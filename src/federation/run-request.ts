/**
 * A delegated run, on the delegate's side (seed 003 §6.2, §6.3): the request is authenticated (`message.ts`), then
 * the chain is validated at this hop, the pack's signature checked when it is signed, and everything the pack
 * declares must lie within the delegated scope; only then does the engine run it (`engine-adapter.ts`), signing the
 * run proof with this node's key and chaining the federation annex onto the run. The engine gets only the
 * infrastructure tools the scope names (`tool:exec_python`, …): a plan that calls another is refused with
 * `POLICY_VIOLATION` before any of it runs, and no capsule is returned.
 *
 * Request body (`run.request`): `{pack: <base64 .tar.gz>, input, seed?, approve, restricted, maxSteps?,
 * stepTimeoutMs?, chain: [delegation, …]}`. Reply body (`run.result`): `{runId, runHash, status, capsule: <base64>,
 * files: {<path>: <base64>}}` (the run files, laid out as a local run writes them).
 * @module
 */
import { z } from "zod";
import { decodeBase64, encodeBase64 } from "./_base64.ts";
import { parseSeed } from "../determinism/mod.ts";
import { packArchiveFiles } from "../engine/mod.ts";
import { PACK_FILE, readPackDocument } from "../engine/mod.ts";
import { policyViolation, ReachError } from "../protocol/mod.ts";
import type { ViolationType } from "../protocol/mod.ts";
import type { Pack } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import { PACK_SIGNATURE_PATH, verifyPackSignature } from "../trust/mod.ts";
import { delegationAnnex } from "./annex.ts";
import { MAX_CHAIN_LENGTH, validateChain } from "./chain.ts";
import type { ChainContext } from "./chain.ts";
import { INFRA_TOOLS, runDelegatedPack } from "./engine-adapter.ts";
import type { EngineHost } from "./engine-adapter.ts";
import type { NodeSelf } from "./identity.ts";
import type { Message } from "./message.ts";
import { grantedInfraTools, packExcess } from "./scope.ts";

/** The largest pack archive a node accepts (compressed bytes). */
export const MAX_PACK_ARCHIVE_BYTES = 64 * 1024 * 1024;

/** The body of `run.request`. */
export const RunRequestBodySchema = z.strictObject({
  pack: z.string().min(4).max(Math.ceil(MAX_PACK_ARCHIVE_BYTES / 3) * 4),
  input: z.unknown().optional(),
  seed: z.string().max(20).optional(),
  approve: z.boolean(),
  restricted: z.boolean(),
  maxSteps: z.int().min(1).max(100).optional(),
  stepTimeoutMs: z.int().min(1).max(3_600_000).optional(),
  chain: z.array(z.unknown()).min(1).max(MAX_CHAIN_LENGTH),
});
/** The body of `run.request`. */
export type RunRequestBody = z.output<typeof RunRequestBodySchema>;

/** What the delegate knows when it executes. */
export type DelegateContext = Omit<ChainContext, "requester" | "executor"> & { self: NodeSelf; host: EngineHost };

async function packDocument(archive: Uint8Array): Promise<{ files: Map<string, Uint8Array>; pack: Pack }> {
  const files = await packArchiveFiles(archive, "the pack archive cannot be read", { maxCompressedBytes: MAX_PACK_ARCHIVE_BYTES });
  if (!files.has(PACK_FILE)) throw new ReachError("PACK_MALFORMED", "the pack archive has no reach.json at its root; send an archive made by `reach-wasm pack build`");
  return { files, pack: (await readPackDocument(files)).pack }; // as a run reads it (deprecated forms, specVersion, schema)
}

const VIOLATION: Readonly<Record<string, ViolationType>> = { tool: "UNDEFINED_TOOL", resource: "RESOURCE_ACCESS", host: "RESOURCE_ACCESS", permission: "PERMISSION_DENIED" };

function checkWithinScope(pack: Pack, scope: readonly string[]): void {
  const excess = packExcess(pack, scope);
  if (excess.length === 0) return;
  const first = excess[0]!;
  throw policyViolation(VIOLATION[first.slice(0, first.indexOf(":"))] ?? "PERMISSION_DENIED", first, `pack ${pack.id}@${pack.version} declares ${excess.join(", ")}, outside the delegated scope [${scope.join(", ")}]; ask for a delegation that covers it, or remove it from the pack`, { excess, scope: [...scope] });
}

/** A plan's call of an infrastructure tool the scope does not name, said in the scope's terms; anything else as is. */
function inScopeTerms(err: unknown, pack: Pack, scope: readonly string[]): unknown {
  const tool = err instanceof ReachError && err.code === "POLICY_VIOLATION" ? err.details?.["infraTool"] : undefined;
  if (typeof tool !== "string") return err;
  const entry = `tool:${tool}`;
  return policyViolation("UNDEFINED_TOOL", entry, `pack ${pack.id}@${pack.version} plans a call of the infrastructure tool ${tool} (step "${String(err instanceof ReachError ? err.details?.["stepId"] : "")}"), outside the delegated scope [${scope.join(", ")}]; infrastructure tools are granted only by name — ask for a delegation that also names ${entry}. Nothing of that plan ran.`, { excess: [entry], scope: [...scope] });
}

function parseBody(msg: Message): RunRequestBody & { archive: Uint8Array; seedText?: string } {
  const body = parseOrThrow(RunRequestBodySchema, msg.body, "PROTO_INVALID_MESSAGE", "the run request");
  const archive = decodeBase64(body.pack, "the run request: pack");
  let seedText: string | undefined;
  if (body.seed !== undefined) {
    try {
      seedText = parseSeed(body.seed);
    } catch {
      throw new ReachError("PROTO_INVALID_MESSAGE", `the run request: seed ${JSON.stringify(body.seed)} is not a decimal integer 0..2^64-1`);
    }
  }
  return { ...body, archive, ...(seedText === undefined ? {} : { seedText }) };
}

/**
 * Execute an authenticated `run.request`.
 * @param ctx this node, its clock, registry, revocations and engine
 * @param msg the authenticated request
 * @returns the `run.result` body
 * @throws ReachError `FED_*` for the chain, `POLICY_VIOLATION` for a pack beyond the scope or a plan calling an
 *   infrastructure tool the scope does not name, `PACK_*` for a pack that cannot run, `PROTO_INVALID_MESSAGE` for a
 *   malformed body
 * @example const body = await executeRunRequest(ctx, msg);
 */
export async function executeRunRequest(ctx: DelegateContext, msg: Message): Promise<Record<string, unknown>> {
  const req = parseBody(msg);
  const { chain, scope } = validateChain(req.chain, { ...ctx, requester: msg.from, executor: ctx.self.identity.nodeId });
  const { files, pack } = await packDocument(req.archive);
  const signature = files.get(PACK_SIGNATURE_PATH);
  if (signature !== undefined) verifyPackSignature(files, signature);
  checkWithinScope(pack, scope);
  const run = await runDelegatedPack(ctx.host, {
    infraTools: grantedInfraTools(scope, INFRA_TOOLS),
    archive: req.archive,
    input: (req.input ?? {}) as JsonValue,
    ...(req.seedText === undefined ? {} : { seed: req.seedText }),
    approve: req.approve,
    restricted: req.restricted,
    ...(req.maxSteps === undefined ? {} : { maxSteps: req.maxSteps }),
    ...(req.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: req.stepTimeoutMs }),
    key: ctx.self.keys.privateKey,
    annex: (r) => delegationAnnex(chain, r, msg.from),
  }).catch((err: unknown) => {
    throw inScopeTerms(err, pack, scope);
  });
  const out: Record<string, string> = {};
  for (const [path, bytes] of run.files) out[path] = encodeBase64(bytes);
  return { runId: run.runId, runHash: run.runHash, status: run.status, capsule: encodeBase64(run.capsule.bytes), files: out };
}
