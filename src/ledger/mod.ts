/**
 * The run event ledger: append-only log with seed 003 §3.2 ordering, the §3.3 hash chain and runHash,
 * JSONL read/write, and chain verification.
 * @module
 */
export { eventHash, eventPayloadHash, GENESIS_HASH, hashedPayload, payloadHash, runHash } from "./hash-chain.ts";
export { OrderingState } from "./ordering.ts";
export { EventLog } from "./event-log.ts";
export type { EventLogOptions, Payload, RecordedEvent } from "./event-log.ts";
export { readJsonl, toJsonl, toJsonlBytes, verifyJsonl } from "./jsonl.ts";
export type { JsonlRead } from "./jsonl.ts";
export { verifyChain } from "./verify.ts";
export type { ChainReport } from "./verify.ts";
