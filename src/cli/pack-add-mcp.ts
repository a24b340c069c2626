/**
 * `reach-wasm pack add-mcp <dir> --name NAME [--env K=V]... -- COMMAND ARGS...` (or `--url URL`): start the MCP
 * server, list its tools, and write them into the pack's `reach.json` (seed 002: the planner "loads manifests and
 * output schemas"): `mcpServers.NAME`, a `tools` entry of kind `mcp` per listed tool with the server's description
 * and schemas, and its name in `manifest.capabilities.tools`. Running it again for the same NAME replaces that
 * server's entries. The document is checked against the pack schema before it is written (atomically).
 * @module
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { describeMcpServer } from "../engine/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseJsonText } from "../protocol/mod.ts";
import { McpServerSchema, PackSchema } from "../protocol/mod.ts";
import type { McpServer } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { launchMcpStdio } from "../platform/mcp-stdio.ts";
import { writeFileAtomic } from "../platform/write.ts";
import type { CliIO } from "./io.ts";
import { parseCommand, usageError } from "./options.ts";
import { PACK_ADD_MCP } from "./specs-pack.ts";

type Doc = Record<string, unknown> & { tools?: Record<string, Record<string, unknown>>; mcpServers?: Record<string, unknown>; manifest?: { capabilities?: { tools?: { name: string }[] } } };

/** The server entry the arguments describe. */
function serverOf(url: string | undefined, env: readonly string[], rest: readonly string[]): McpServer {
  if ((url === undefined) === (rest.length === 0)) throw usageError(PACK_ADD_MCP, "give the server as -- COMMAND ARGS... (stdio) or as --url URL, one of the two");
  const raw: Record<string, unknown> = url !== undefined ? { url } : { command: rest[0], args: rest.slice(1), env: Object.fromEntries(env.map((e) => {
    const eq = e.indexOf("=");
    if (eq <= 0) throw usageError(PACK_ADD_MCP, `--env ${JSON.stringify(e)}: expected NAME=VALUE`);
    return [e.slice(0, eq), e.slice(eq + 1)];
  })) };
  if (url !== undefined && env.length > 0) throw usageError(PACK_ADD_MCP, "--env is for a stdio server (COMMAND), not --url");
  return parseOrThrow(McpServerSchema(), raw, "PROTO_INVALID_ARGUMENT", "the MCP server");
}

/** Drop a server's old tools from the document (running add-mcp again replaces them). */
function dropServer(doc: Doc, name: string): void {
  const tools = doc.tools ?? {};
  const old = Object.keys(tools).filter((t) => tools[t]?.["kind"] === "mcp" && tools[t]?.["server"] === name);
  for (const t of old) delete tools[t];
  const caps = doc.manifest?.capabilities;
  if (caps?.tools !== undefined) caps.tools = caps.tools.filter((t) => !old.includes(t.name));
}

/**
 * The `pack add-mcp` command.
 * @param argv arguments after `pack add-mcp`
 * @param io output streams
 * @returns 0
 * @throws ReachError for a bad invocation, a pack that cannot be read, or a server that cannot be listed
 */
export async function packAddMcp(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals, rest } = parseCommand(PACK_ADD_MCP, argv);
  const dir = positionals[0]!;
  const name = values.name;
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) throw usageError(PACK_ADD_MCP, `--name ${JSON.stringify(name)}: letters, digits, . _ - only`);
  const server = serverOf(values.url, values.env, rest);
  const path = join(dir, "reach.json");
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ReachError("PACK_NOT_FOUND", `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); create the pack first (reach-wasm pack init)`);
  }
  const doc = parseJsonText(text, { what: path, code: "PACK_MALFORMED" }) as Doc;
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new ReachError("PACK_MALFORMED", `${path} must hold a JSON object`);
  dropServer(doc, name);
  const taken = new Set(Object.keys(doc.tools ?? {}));
  const secret = (n: string): string | undefined => process.env[n];
  const cat = await describeMcpServer({ mcpStdio: launchMcpStdio }, name, server, { taken, secret });
  doc.mcpServers = { ...(doc.mcpServers ?? {}), [name]: server };
  doc.tools = { ...(doc.tools ?? {}), ...cat.tools };
  const manifest = (doc.manifest ??= {});
  const caps = (manifest.capabilities ??= {});
  caps.tools = [...(caps.tools ?? []), ...Object.keys(cat.tools).map((t) => ({ name: t }))];
  parseOrThrow(PackSchema(), doc, "PACK_INVALID_MANIFEST", path); // what is written is a pack
  await writeFileAtomic(path, new TextEncoder().encode(`${JSON.stringify(doc, null, 2)}\n`));
  const names = Object.keys(cat.tools);
  const info = cat.serverInfo === null ? "" : ` (${String(cat.serverInfo["name"] ?? "?")} ${String(cat.serverInfo["version"] ?? "")})`.replace(/ \)$/, ")");
  io.stderr(`reach-wasm: added ${names.length} tool${names.length === 1 ? "" : "s"} of MCP server ${name}${info} to ${path}: ${names.join(", ")}\n`);
  if (values.json) io.stdout(`${JSON.stringify({ dir, server: name, serverInfo: cat.serverInfo, tools: names })}\n`);
  return 0;
}
