/**
 * The port between the engine's MCP client and the platform that starts MCP servers (docs/authoring.md "MCP
 * servers"): a JSON-RPC message connection ({@link McpTransport}) and the stdio launcher the platform implements
 * ({@link McpStdioLauncher}, `src/platform/mcp-stdio.ts`), handed to the engine in its environment. Types only.
 * @module
 */

/** One JSON-RPC connection to an MCP server: a stdio child process, or Streamable HTTP. */
export interface McpTransport {
  /** Send one JSON-RPC message. */
  send(message: Record<string, unknown>): Promise<void>;
  /** Receives each message the server sends (a parsed JSON value; the client checks its shape). */
  onmessage: ((message: unknown) => void) | null;
  /** Called once when the connection ends on its own (the process exited, the stream broke). */
  onclose: ((reason: Error) => void) | null;
  /** End the connection (a stdio server's whole process group is stopped); idempotent. */
  close(): Promise<void>;
}

/** What the platform needs to start a stdio MCP server. */
export type McpStdioLaunch = {
  /** The server's name in the pack (messages). */
  name: string;
  command: string;
  args: readonly string[];
  /** The environment it gets, besides PATH (secret placeholders already substituted; `{{scratch}}` not yet). */
  env: Readonly<Record<string, string>>;
};

/** A started stdio MCP server. */
export type McpStdioProcess = {
  transport: McpTransport;
  /** The absolute path of its scratch working directory (`{{scratch}}`; scrubbed from what it answers). */
  scratch: string;
  /** The last bytes it wrote to stderr (for an error message when it exits). */
  stderrTail(): string;
  /** Its process id (the leader of its process group), when known. */
  pid?: number;
};

/**
 * Start a stdio MCP server: a child process in its own process group, with only `env` plus PATH, its working
 * directory a fresh scratch directory (removed when the transport closes), `{{scratch}}` in `args` and `env` values
 * replaced with that directory's path.
 */
export type McpStdioLauncher = (launch: McpStdioLaunch) => Promise<McpStdioProcess>;
