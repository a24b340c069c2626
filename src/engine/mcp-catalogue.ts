/**
 * What `reach-wasm pack add-mcp` writes into a pack (seed 002: the planner "loads manifests and output schemas"):
 * the tools an MCP server lists, as `tools` entries of kind `mcp` with the server's descriptions and its input and
 * output schemas as they are (each in the dialect its `$schema` names). Every schema is compiled first, so a schema
 * this validator cannot use is refused here, not at the first run.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import type { McpServer, ToolDefinition } from "../protocol/mod.ts";
import { TOOL_NAME_RE } from "../protocol/mod.ts";
import { McpSessions } from "../sandbox/mod.ts";
import type { McpListedTool } from "../sandbox/mod.ts";
import { isInfraTool } from "../sandbox/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import type { EngineEnvironment } from "./runners.ts";
import { compileSchema, loadFullValidator } from "./schema-check.ts";

/** One MCP server's tools as pack entries. */
export type McpCatalogue = {
  /** The server's `initialize` answer's serverInfo (name, version), when it gave one. */
  serverInfo: JsonObject | null;
  /** Pack tool name → its definition (kind `mcp`). */
  tools: Record<string, ToolDefinition>;
};

/** A pack tool name for an MCP tool: its own name where that is one, else with other characters as `_`. */
function packToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  let name = tool.replace(/[^a-zA-Z0-9._-]/g, "_").replace(/^[^a-zA-Z0-9]+/, "").slice(0, 128);
  if (name === "" || !TOOL_NAME_RE.test(name)) name = `${server}_tool`;
  if (isInfraTool(name) || taken.has(name)) name = `${server}.${name}`.slice(0, 128);
  let unique = name;
  for (let i = 2; taken.has(unique); i++) unique = `${name}_${i}`;
  return unique;
}

function definitionOf(server: string, t: McpListedTool): ToolDefinition {
  const def: ToolDefinition = { kind: "mcp", server, tool: t.name };
  if (typeof t.description === "string" && t.description !== "") def.description = t.description.slice(0, 4000);
  for (const which of ["inputSchema", "outputSchema"] as const) {
    const schema = t[which];
    if (schema === undefined || schema === null) continue;
    try {
      compileSchema(schema);
    } catch (err) {
      throw new ReachError("PACK_INVALID_MANIFEST", `the MCP server "${server}" lists tool ${t.name} with an ${which} this validator cannot use: ${(err as Error).message}`, { details: { server, mcpTool: t.name } });
    }
    def[which] = schema;
  }
  return def;
}

/**
 * Start (or connect to) an MCP server, list its tools and stop it again.
 * @param env the platform (its `mcpStdio` starts a stdio server)
 * @param name the server's name in the pack
 * @param server its entry
 * @param options the fetch of an HTTP server, names already taken in the pack, and the secrets of its env
 * @returns its tools as pack entries
 * @throws ReachError when it cannot be started, does not answer, or lists a schema that cannot be compiled
 * @example const { tools } = await describeMcpServer(env, "memory", { command: "mcp-server-memory", args: [], env: {} });
 */
export async function describeMcpServer(env: Pick<EngineEnvironment, "mcpStdio">, name: string, server: McpServer, options: { fetch?: FetchLike; taken?: ReadonlySet<string>; secret?: (name: string) => string | undefined } = {}): Promise<McpCatalogue> {
  await loadFullValidator();
  const sessions = new McpSessions({ [name]: server }, {
    ...(env.mcpStdio === undefined ? {} : { stdio: env.mcpStdio }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.secret === undefined ? {} : { secret: options.secret }),
  });
  try {
    const signal = AbortSignal.timeout(30_000);
    const client = await sessions.client(name, signal);
    const listed = await client.listTools(signal);
    const taken = new Set(options.taken ?? []);
    const tools: Record<string, ToolDefinition> = {};
    for (const t of listed) {
      const toolName = packToolName(name, t.name, taken);
      taken.add(toolName);
      tools[toolName] = definitionOf(name, t);
    }
    const info = client.initialized?.["serverInfo"];
    return { serverInfo: info !== null && typeof info === "object" && !Array.isArray(info) ? info : null, tools };
  } finally {
    await sessions.close();
  }
}
