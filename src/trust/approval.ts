/**
 * Signed plan approvals (seed 001 §4: a risk-3 plan needs explicit approval). An approval is only worth something
 * when it comes from outside the plan's author: `--approve` on the command line, or a record signed by a key in the
 * trust store over the plan's hash. A planner can write any `approval` object into its plan, but it cannot sign one
 * with a trusted key.
 *
 * Record: `{type: "reach-wasm/plan-approval", version: 1, planHash, publicKey, signature}`; the signature is Ed25519
 * over JCS({type, planHash}), and `planHash` is the SHA-256 of the canonical plan without its `approval` field (so
 * a record can also travel inside the plan it approves).
 * @module
 */
import { z } from "zod";
import { bytesToHex, hexToBytes } from "../canonical/mod.ts";
import { canonicalBytes, hashCanonical } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { strictObject } from "./_schema.ts";
import type { TrustStore } from "./trust-store.ts";
import { publicKeyFromPrivateKey, signEd25519, verifyEd25519 } from "./verify.ts";
import { typedSchema } from "../protocol/mod.ts";
import type { StrictObject } from "../protocol/mod.ts";

/** The record type. */
export const APPROVAL_TYPE = "reach-wasm/plan-approval";

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/** A signed approval record. */
export const ApprovalRecordSchema: () => StrictObject<{
  type: z.ZodLiteral<typeof APPROVAL_TYPE>;
  version: z.ZodLiteral<1>;
  planHash: z.ZodString;
  publicKey: z.ZodString;
  signature: z.ZodString;
}> = typedSchema(() => strictObject("approval record", {
  type: z.literal(APPROVAL_TYPE),
  version: z.literal(1),
  planHash: z.string().regex(HEX64),
  publicKey: z.string().regex(HEX64),
  signature: z.string().regex(HEX128),
}));

/** A signed approval record. */
export type ApprovalRecord = z.output<ReturnType<typeof ApprovalRecordSchema>>;

/**
 * The hash an approval signs: the canonical plan without its `approval` field.
 * @param plan the plan document
 * @returns 64 lowercase hex digits
 * @example
 * ```ts
 * const hash: string = approvalPlanHash({ plan_id: "p1", steps: [], approval: { ignored: true } });
 * console.log(hash);
 * ```
 */
export function approvalPlanHash(plan: Record<string, unknown>): string {
  const { approval: _approval, ...rest } = plan;
  return hashCanonical(rest);
}

/**
 * Sign an approval of a plan hash.
 * @param planHash the plan's approval hash ({@link approvalPlanHash}; a refused run names it)
 * @param privateKey the approver's Ed25519 private key seed (32 bytes)
 * @returns the record
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a malformed hash
 * @example
 * ```ts
 * import { generateKeyPair } from "./keys.ts";
 * const record = signApproval(approvalPlanHash({ plan_id: "p1", steps: [] }), generateKeyPair().privateKey);
 * console.log(JSON.stringify(record)); // pass it to run with --approval FILE
 * ```
 */
export function signApproval(planHash: string, privateKey: Uint8Array): ApprovalRecord {
  if (!HEX64.test(planHash)) throw new ReachError("PROTO_INVALID_ARGUMENT", `the plan hash must be 64 lowercase hex digits, got ${JSON.stringify(planHash.slice(0, 80))}`);
  const signature = signEd25519(canonicalBytes({ type: APPROVAL_TYPE, planHash }), privateKey);
  return { type: APPROVAL_TYPE, version: 1, planHash, publicKey: bytesToHex(publicKeyFromPrivateKey(privateKey)), signature: bytesToHex(signature) };
}

/**
 * Whether a record approves this plan: well formed, for this hash, signed by its key, and (unless `anyKey`, used in
 * replay, where the trust decision was made and recorded at run time) that key is in the trust store.
 * @param record the untrusted record
 * @param planHash the plan's approval hash
 * @param store the trust store
 * @param anyKey accept any key whose signature verifies
 * @returns the approver's key (and its trust-store name), or null when the record does not approve the plan
 * @example approves(record, approvalPlanHash(plan), store)
 */
export function approves(record: unknown, planHash: string, store: TrustStore | null, anyKey = false): { publicKey: string; keyName: string | null } | null {
  const r = ApprovalRecordSchema().safeParse(record);
  if (!r.success || r.data.planHash !== planHash) return null;
  if (!verifyEd25519(hexToBytes(r.data.signature), canonicalBytes({ type: APPROVAL_TYPE, planHash }), hexToBytes(r.data.publicKey))) return null;
  if (anyKey) return { publicKey: r.data.publicKey, keyName: null };
  if (store === null || !store.isTrusted(r.data.publicKey)) return null;
  return { publicKey: r.data.publicKey, keyName: store.nameOf(r.data.publicKey) ?? null };
}
