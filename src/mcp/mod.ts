/**
 * The MCP server face (ARCHITECTURE "Faces over one engine call"): one MCP session is one session run; its
 * `tools/call`s are recorded steps, its workspace files are resources. Web-standard: the CLI (`reach-wasm mcp`) hands
 * in the engine thread, the stdio streams or the HTTP server.
 * @module
 */
export { McpSessionRun } from "./session-run.ts";
export type { McpEnded, McpEngine, McpEngineSession, McpRunSink, McpSegment, McpSessionOptions } from "./session-run.ts";
export { answerMalformed, createMcpServer } from "./server.ts";
export type { McpServerInfo, McpServerOptions } from "./server.ts";
export { BoundedStdioTransport, LineReader } from "./stdio-transport.ts";
export type { StdioStreams } from "./stdio-transport.ts";
export { JsonRpcSniffer, MAX_MESSAGE_BYTES, oversizedAnswer } from "./limits.ts";
export { instructions, scopeText } from "./answers.ts";
export type { EndedRun, RunStanding } from "./answers.ts";
export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CLIENT, MCP_PATH, McpHttpHandler } from "./http.ts";
export type { McpHttpOptions } from "./http.ts";
export { listPage, mimeOf, pathOfUri, readContents, RESOURCE_NOT_FOUND, RESOURCES_PAGE, WORKSPACE_URI, workspaceUri } from "./resources.ts";
