/**
 * The engine: packs, planners, the plan gate, the coordinator and the executor (issue 4).
 * @module
 */
export { loadPack, readPackDocument, checkSpecVersion, deepFreeze, packTrust, PACK_FILE, SIGNATURE_FILE, WORKSPACE_DIR } from "./pack.ts";
export type { LoadedPack, LoadPackOptions, PackDocument, PackEntrypoint, PackTool, PackTrust } from "./pack.ts";
export { gatePlan, gatePlanAsync, checkPlanLock, DEFAULT_MAX_STEPS, MAX_RISK_LEVEL } from "./plan-gate.ts";
export type { GatedPlan, GateOptions } from "./plan-gate.ts";
export { makePlan, plannerContext, plannerInvocationId, PLANNER_TIMEOUT_MS } from "./planner.ts";
export type { PlannerRequest, ReplanContext } from "./planner.ts";
export { executeEnvelope, FUEL_PER_MS, invocationIdOf, STEP_MEMORY_BYTES, WATCHDOG_GRACE_MS } from "./executor.ts";
export type { ExecutorRunState, StepExecution } from "./executor.ts";
export { runPack, runSeed, DEFAULT_EPOCH, RESERVED_STEP_PREFIX } from "./coordinator.ts";
export { Run } from "./run.ts";
export type { AbortPoint, ReplayDirectives } from "./run.ts";
export { runRunners } from "./runners.ts";
export type { EngineEnvironment } from "./runners.ts";
export { runFiles, runResult } from "./run-files.ts";
export { resolveArguments, resolvePointer } from "./arguments.ts";
export { compileSchema, isLiteSchema, loadFullValidator } from "./schema-check.ts";
export type { SchemaCheck, SchemaValidator } from "./schema-check.ts";
export type { ExecutionHeader, RunPhase, RunProgress, RunRecord, RunRequest, RunStatus, SessionChain } from "./types.ts";
export { buildRunCapsule, capsuleFileName, capsuleRequest, stepRanges } from "./capsule.ts";
export type { CapsuleRequest } from "./capsule.ts";
export { replayCapsule } from "./replay.ts";
export type { Divergence, ReplayReport } from "./replay.ts";
export { loadPackFrom, readPackDeclaration, runEngine } from "./engine.ts";
export { MAX_PACK_BYTES, packArchiveFiles } from "./pack-archive.ts";
export type { EngineRun, EngineRunRequest, PackSource } from "./engine.ts";
export { chainAnnex } from "./annex.ts";
export type { AnnexEvent } from "./annex.ts";
export { verifyRunCapsule } from "./verify.ts";
export { checkPackSources } from "./source-check.ts";
export type { CapsuleVerification, VerifyCheck } from "./verify.ts";
export { openSession } from "./engine.ts";
export type { EngineSession } from "./engine.ts";
export { Session } from "./session.ts";
export type { SessionBudget, SessionCall, SessionScope, SessionSpent, SessionTool, WorkspaceFile } from "./session.ts";
export { checkSessionChain, checkSessionChainLinks, memoryDigest, SESSION_START, sessionLink } from "./session-chain.ts";
export type { SessionLink } from "./session-chain.ts";
export { infraTool, infraTools, INFRA_TOOL_NAMES, isInfraTool } from "./infra-tools.ts";
