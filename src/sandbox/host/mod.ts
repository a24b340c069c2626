/**
 * The host API of tool invocations: `createHost` over a workspace transaction, the run's memory store, artifact
 * sink, clock, random stream, log and tape, the same for every tool kind (seed 002 infrastructure tools).
 * @module
 */
export { createHost, DEFAULT_MAX_CALLS, MAX_REQUEST_CHARS } from "./host.ts";
export type { Host, HostContext, HostLimits } from "./host.ts";
export { DEFAULT_HTTP_LIMITS, performFetch, validateFetch } from "./http.ts";
export type { FetchRequest, HttpLimits } from "./http.ts";
export { DEFAULT_OP_LIMITS, MAX_LINES_PER_READ, MAX_RANDOM_BYTES } from "./_ops.ts";
export type { OpLimits } from "./_ops.ts";
export {
  assertMemoryKey,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_MAX_MEMORY_ENTRIES,
  MAX_MEMORY_KEY_LENGTH,
  MAX_MEMORY_VALUE_BYTES,
  MemoryStore,
  MemoryTransaction,
  memoryValueText,
} from "./memory-store.ts";
export type { MemoryRead, MemoryStoreOptions } from "./memory-store.ts";
export { ArtifactSink, ArtifactStage, artifactType, DEFAULT_MAX_ARTIFACT_BYTES, DEFAULT_MAX_ARTIFACTS } from "./artifact-sink.ts";
export type { StoredArtifact } from "./artifact-sink.ts";
export { DEFAULT_MAX_LOG_CHARS, DEFAULT_MAX_LOG_ENTRIES, LogSink } from "./log-sink.ts";
export type { LogEntry, LogLevel } from "./log-sink.ts";
export { binaryToBytes, bytesToBinary, checkSecretValues, isSecretName, MAX_SECRET_BYTES, MIN_SECRET_BYTES, placeholderNames, secretPlaceholder, SecretBox, substituteSecrets } from "./secrets.ts";
export type { HopRequest, SecretSpec, SecretValues } from "./secrets.ts";
