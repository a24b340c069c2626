/**
 * MCP tools (kind `mcp`): the tool `tool` of the pack's MCP server `server`. They are recorded, not contained: the
 * server is a process (or an HTTP endpoint) outside the sandbox; what the run records is the call and the server's
 * whole answer, through the host op `mcp.call`, so replay serves it from the tape and starts no server.
 *
 * {@link McpSessions} holds a run's connections: each server is started (or connected to) on its first call and
 * kept for the rest of the run, then closed (a stdio server's whole process group is stopped) when the run ends.
 * @module
 */
import { ReachError, toReachError } from "../../protocol/mod.ts";
import type { FetchLike } from "../../protocol/mod.ts";
import type { McpStdioLauncher } from "../../protocol/mod.ts";
import type { JsonObject } from "../../protocol/mod.ts";
import type { McpServer } from "../../protocol/mod.ts";
import { FuelMeter as Meter } from "../fuel/fuel-meter.ts";
import type { ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import { McpClient } from "./client.ts";
import { McpHttpTransport } from "./http-transport.ts";
import { makeScrub } from "./scrub.ts";

/** The placeholder of a secret in a server's `env` or `headers` values. */
const SECRET_RE = /\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** How a run reaches its MCP servers. */
export type McpSessionOptions = {
  /** Starts stdio servers (the platform's; without it a stdio server is EXEC_RESOURCE_UNAVAILABLE). */
  stdio?: McpStdioLauncher;
  /** The fetch of Streamable HTTP servers (default: the global one). */
  fetch?: FetchLike;
  /**
   * The value of a declared secret, for `{{secret:NAME}}` in a server's `env` (or `headers`) values: substituted when
   * the server starts, and scrubbed from everything it answers. Absent, or undefined for a name: the placeholder
   * cannot be filled and the server is not started.
   */
  secret?: (name: string) => string | undefined;
};

/** The MCP connections of one run (see the module notes). */
export class McpSessions {
  readonly #servers: Readonly<Record<string, McpServer>>;
  readonly #options: McpSessionOptions;
  readonly #clients = new Map<string, Promise<McpClient>>();
  #closed = false;
  /** Servers started (or connected to) so far. */
  started = 0;

  /**
   * @param servers the pack's `mcpServers`
   * @param options how to reach them
   */
  constructor(servers: Readonly<Record<string, McpServer>> | undefined, options: McpSessionOptions = {}) {
    this.#servers = servers ?? {};
    this.#options = options;
  }

  /**
   * Call a tool (connecting to its server first if this run has not yet).
   * @param server the server's name in the pack
   * @param tool the server's tool name
   * @param args the arguments
   * @param signal stops waiting
   * @returns the CallToolResult, scrubbed
   */
  async call(server: string, tool: string, args: JsonObject, signal?: AbortSignal): Promise<JsonObject> {
    const client = await this.client(server, signal);
    return await client.callTool(tool, args, signal);
  }

  /**
   * The connected client of a server.
   * @param server the server's name in the pack
   * @param signal stops waiting for it to start
   * @returns the client
   */
  client(server: string, signal?: AbortSignal): Promise<McpClient> {
    if (this.#closed) return Promise.reject(new ReachError("EXEC_TOOL_FAILED", `the run's MCP connections are closed (server "${server}")`));
    let c = this.#clients.get(server);
    if (c === undefined) {
      c = this.#connect(server, signal);
      this.#clients.set(server, c);
      c.catch(() => this.#clients.delete(server));
    }
    return c;
  }

  async #connect(name: string, signal?: AbortSignal): Promise<McpClient> {
    const spec = Object.prototype.hasOwnProperty.call(this.#servers, name) ? this.#servers[name] : undefined;
    if (spec === undefined) throw new ReachError("EXEC_TOOL_NOT_FOUND", `the pack declares no MCP server "${name}" in mcpServers`, { details: { server: name } });
    const secrets = new Map<string, string>();
    const fill = (v: string): string => v.replace(SECRET_RE, (_m, n: string) => {
      const value = this.#options.secret?.(n);
      if (value === undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `the MCP server "${name}" needs the secret ${n}, which this run was not given; supply it (--secret ${n})`, { details: { server: name, secret: n } });
      secrets.set(value, `{{secret:${n}}}`);
      return value;
    });
    this.started++;
    let client: McpClient;
    if ("url" in spec) {
      const headers = Object.fromEntries(Object.entries(spec.headers ?? {}).map(([k, v]) => [k, fill(v)]));
      client = new McpClient(name, new McpHttpTransport(spec.url, headers, this.#options.fetch), makeScrub(secrets));
    } else {
      const launch = this.#options.stdio;
      if (launch === undefined) throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the MCP server "${name}" is a stdio server and this platform starts no processes; use a platform that does (reach-wasm/node) or give it a url`, { details: { server: name } });
      const env = Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, fill(v)]));
      const proc = await launch({ name, command: spec.command, args: spec.args, env });
      client = new McpClient(name, proc.transport, makeScrub([...secrets, [proc.scratch, "{{scratch}}"]]), proc.stderrTail);
    }
    if (this.#closed) {
      await client.close();
      throw new ReachError("EXEC_TOOL_FAILED", `the run ended while the MCP server "${name}" started`);
    }
    try {
      return await client.initialize(signal);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  /** Close every connection (idempotent); waits for the servers to stop. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(all.map((c) => c.then((x) => x.close(), () => undefined)));
  }
}

/** The text of a result's text content blocks (an error message). */
function textOf(result: JsonObject): string {
  const content = Array.isArray(result["content"]) ? result["content"] : [];
  return content.map((c) => (c !== null && typeof c === "object" && !Array.isArray(c) && c["type"] === "text" && typeof c["text"] === "string" ? c["text"] : "")).filter((t) => t !== "").join(" ").slice(0, 2000);
}

/** The runner of one MCP tool: one `mcp.call` host call; its answer is the step's output. */
export class McpRunner implements ToolRunner {
  readonly kind = "mcp" as const;
  readonly #server: string;
  readonly #tool: string;

  /**
   * @param server the tool's server in the pack
   * @param tool the server's tool name
   */
  constructor(server: string, tool: string) {
    this.#server = server;
    this.#tool = tool;
  }

  /**
   * Call the tool. A result with `isError: true` is the step's failure (`EXEC_TOOL_FAILED`); the whole result is on the
   * tape either way.
   * @param invocation the invocation (`input` is the arguments)
   * @returns the outcome; never throws
   */
  async run(invocation: ToolInvocation): Promise<ToolOutcome> {
    const meter = invocation.meter ?? new Meter({ budget: invocation.fuel });
    meter.start();
    const input = invocation.input;
    const args = input !== null && typeof input === "object" && !Array.isArray(input) ? input : {};
    try {
      const result = await invocation.host.invoke("mcp.call", { server: this.#server, tool: this.#tool, arguments: args });
      if (result["isError"] === true) {
        const error = new ReachError("EXEC_TOOL_FAILED", `the MCP tool ${this.#tool} of server "${this.#server}" answered with isError: ${textOf(result) || "(no text)"}`, { details: { server: this.#server, mcpTool: this.#tool } });
        return { status: "error", error, log: "", fuelUsed: meter.release() };
      }
      return { status: "success", output: result, log: "", fuelUsed: meter.release() };
    } catch (err) {
      return { status: "error", error: toReachError(err, "EXEC_TOOL_FAILED"), log: "", fuelUsed: meter.release() };
    }
  }
}
