/**
 * What other rooms take from src/service/ (ARCHITECTURE.md "Layout"): every import from another folder comes
 * through this file.
 * @module
 */
export { ServiceClient } from "./client.ts";
export { jobRequest, outcomeOf, runOnEngine } from "./engine-adapter.ts";
export { migrate } from "./schema.ts";
export type { RunOptions, RunRecord, ServiceEvent } from "./schemas.ts";
export { DEFAULT_MAX_BODY_BYTES, startService, startingGate, tokensRequired } from "./service.ts";
export type { RunningService } from "./service.ts";
export { createToken } from "./tokens.ts";
export { WORKER_DEFAULTS, startWorker } from "./worker.ts";
