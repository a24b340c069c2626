/**
 * Protocol schemas and types of reach-wasm (Reach Protocol v1.0.0): pack, plan, envelope and result, events,
 * evidence, errors, capsule index, federation documents, and their JSON Schema export.
 * @module
 */
export * from "./errors.ts";
export * from "./event-types.ts";
export * from "./error-details.ts";
export * from "./pack.ts";
export * from "./secrets.ts";
export * from "./plan.ts";
export * from "./evidence.ts";
export * from "./envelope.ts";
export * from "./event.ts";
export * from "./capsule.ts";
export * from "./delegation.ts";
export * from "./parse.ts";
export * from "./json-text.ts";
export type * from "./json.ts";
export type * from "./fetch.ts";
export * from "./json-schema.ts";
export { ENTRY_PATH_RE, SHA256_HEX_RE, TOOL_NAME_RE, UUID_RE, entryPath, isEntryPath, sha256Hex, strictObject, timestamp, uuid } from "./_common.ts";
export { lazySchema, typedSchema } from "./_lazy.ts";
export type { StrictObject } from "./_common.ts";
export { SCHEMA_REVISION } from "./_schema-revision.ts";
export { planDeprecations, upgradePackDocument } from "./deprecations.ts";
export type { DeprecationNotice } from "./deprecations.ts";
export type { McpStdioLaunch, McpStdioLauncher, McpStdioProcess, McpTransport } from "./mcp-client.ts";
export type { OtelSpan, OtelTrace, OtelValue } from "./otel.ts";
export { packTestFiles, parsePackTestCase } from "./pack-test.ts";
export type { PackTestCase } from "./pack-test.ts";
