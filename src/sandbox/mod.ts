/**
 * What other rooms take from src/sandbox/ (ARCHITECTURE.md "Layout"): every import from another folder comes
 * through this file.
 * @module
 */
export type { ComponentGlueStore } from "./component/store.ts";
export type { TranspiledComponent } from "./component/transpiled.ts";
export type { MeteredModuleStore } from "./fuel/cache.ts";
export { FuelMeter, STEP_TIMEOUT_HINT } from "./fuel/mod.ts";
export type { StopPoint, StopReason } from "./fuel/mod.ts";
export { ArtifactSink } from "./host/artifact-sink.ts";
export type { StoredArtifact } from "./host/artifact-sink.ts";
export { createHost } from "./host/host.ts";
export type { HostContext } from "./host/host.ts";
export { DEFAULT_MAX_MEMORY_BYTES, DEFAULT_MAX_MEMORY_ENTRIES, MAX_MEMORY_VALUE_BYTES, MemoryStore, assertMemoryKey } from "./host/memory-store.ts";
export { SecretBox, checkSecretValues } from "./host/secrets.ts";
export type { SecretSpec, SecretValues } from "./host/secrets.ts";
export { INFRA_TOOL_NAMES, INFRA_TOOL_SCHEMAS, InfraRunner, isInfraTool } from "./infra/runner.ts";
export type { InfraToolName } from "./infra/runner.ts";
export type { McpListedTool } from "./mcp/client.ts";
export { McpRunner, McpSessions } from "./mcp/runner.ts";
export type { McpSessionOptions } from "./mcp/runner.ts";
export { PythonRunner } from "./python/mod.ts";
export type { PythonWasmSource } from "./python/mod.ts";
export { QuickJsRunner } from "./quickjs/runner.ts";
export type { QuickJsRunnerOptions } from "./quickjs/runner.ts";
export { moduleSyntaxErrors } from "./quickjs/syntax.ts";
export { invocationStops } from "./stops.ts";
export { DEFAULT_TIMEOUT_MS, SANDBOX_API_LEVEL, SANDBOX_API_LEVELS } from "./types.ts";
export type { HostOp, ModuleIdentity, SandboxApiLevel, ToolOutcome, ToolRunner } from "./types.ts";
export { WasiExit, WasiHalt, virtualSources } from "./wasi/context.ts";
export type { Preopen } from "./wasi/context.ts";
export { WasiPreview1 } from "./wasi/preview1.ts";
export { WasmToolRunner } from "./wasi/runner.ts";
export { normalizeWorkspacePath } from "./workspace/path.ts";
export { StepTransaction, TEMP_ROOT, Workspace, applyWorkspaceDelta, mergeWorkspaceChanges, snapshotDigest, workspaceDelta } from "./workspace/workspace.ts";
export type { SnapshotEntry, WorkspaceDelta, WorkspaceImage } from "./workspace/workspace.ts";
