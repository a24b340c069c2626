/**
 * reach-wasm: deterministic, auditable execution of agentic tool calls (Reach Protocol v1.0.0).
 *
 * The library face: the engine call and what a host needs around it. Web-standard and side-effect free —
 * importing it changes nothing. The platform (files, the QuickJS and Python engines, native SHA-256, engine
 * threads) comes from `reach-wasm/node` (Node and Deno):
 *
 * ```ts
 * import { readRunCapsule, runEngine, verifyRunCapsule } from "./mod.ts";
 * import { defaultEnvironment, readPackFiles } from "./host/node.ts";
 *
 * const env = defaultEnvironment();
 * const run = await runEngine(env, { pack: { files: await readPackFiles("packs/hello") }, input: { text: "a b c" } });
 * const check = verifyRunCapsule(readRunCapsule(run.capsule.bytes));
 * console.log(run.status, run.runHash, check.valid);
 * ```
 * @module
 */

// The engine call: runs, sessions, replay and verification.
export { loadPackFrom, openSession, runEngine } from "./engine/engine.ts";
export { MAX_PACK_BYTES } from "./engine/pack-archive.ts";
export type { EngineRun, EngineRunRequest, EngineSession, PackSource } from "./engine/engine.ts";
export type { SessionBudget, SessionCall, SessionScope, SessionSpent, SessionTool } from "./engine/session.ts";
export { checkSessionChainLinks, SESSION_START, sessionLink } from "./engine/session-chain.ts";
export type { SessionLink } from "./engine/session-chain.ts";
export type { SessionChain } from "./engine/types.ts";
export { replayCapsule } from "./engine/replay.ts";
export type { Divergence, ReplayOptions, ReplayReport } from "./engine/replay.ts";
export { replayedStates } from "./engine/replay-states.ts";
export type { ReplayedStates } from "./engine/replay-states.ts";
export { verifyRunCapsule } from "./engine/verify.ts";
export { forkCapsule, resumeCapsule } from "./engine/fork.ts";
export type { BranchedRun, BranchOptions, ForkChanges } from "./engine/fork.ts";
export type { ForkedFrom, ResumedFrom } from "./engine/branch.ts";
export type { CapsuleVerification, VerifyCheck } from "./engine/verify.ts";
export { runWasi } from "./engine/wasi-command.ts";
export type { WasiDir, WasiOutcome, WasiRequest } from "./engine/wasi-command.ts";
export type { EngineEnvironment } from "./engine/runners.ts";
export type { ObservedStep, RunProgress, RunStatus } from "./engine/types.ts";
export type { AnnexEvent } from "./engine/annex.ts";
export { INFRA_TOOL_NAMES } from "./engine/infra-tools.ts";

// Capsules, keys, signatures and the trust store (through the engine's facade for hosts).
export {
  approvalPlanHash,
  bytesToHex,
  canonicalize,
  formatKeyFiles,
  formatPackSignature,
  formatTrustStore,
  generateKeyPair,
  hashCanonical,
  hexToBytes,
  packDigest,
  PACK_SIGNATURE_PATH,
  parsePrivateKeyFile,
  parsePublicKeyFile,
  parseTrustStore,
  readArchive,
  readRunCapsule,
  signApproval,
  signPack,
  TrustStore,
  verifyPackSignature,
  writeArchive,
} from "./engine/host-api.ts";
export type { ApprovalRecord, KeyPair, RunCapsule, TrustedKey, TrustStoreDocument } from "./engine/host-api.ts";
export type { JsonObject, JsonValue } from "./protocol/json.ts";

// Errors (seed 003 §7) and the protocol version.
export { isErrorCode, ReachError } from "./protocol/errors.ts";
export type { ErrorCode, ErrorDetails } from "./protocol/errors.ts";
export { PROTOCOL_SPEC_VERSION } from "./protocol/pack.ts";
