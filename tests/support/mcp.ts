/**
 * Test helpers for MCP tools: packs over real MCP servers from npm that nobody here wrote
 * (`@modelcontextprotocol/server-memory`, `@modelcontextprotocol/server-everything`, pinned in devDependencies), and
 * server-everything over Streamable HTTP on a free local port.
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { delimiter, dirname, join } from "node:path";
import { createRequire } from "node:module";

const enc = new TextEncoder();
const require = createRequire(import.meta.url);
/** The project's `node_modules/.bin`, where the servers' commands are (a pack names them, not a host path). */
export const NPM_BIN = new URL("../../node_modules/.bin", import.meta.url).pathname;
if (!(process.env["PATH"] ?? "").split(delimiter).includes(NPM_BIN)) process.env["PATH"] = `${NPM_BIN}${delimiter}${process.env["PATH"] ?? ""}`;

/** A static plan of tool steps (each `{id, tool, arguments, depends_on?}`). */
export function planOf(steps: { id: string; tool: string; arguments: Record<string, unknown>; depends_on?: string[] }[]): Record<string, unknown> {
  return {
    contract_version: "S2-B-05.v1", plan_id: "mcp", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "static", status: "APPROVED",
    risk: { level: 0, rationale: "calls MCP tools" }, scope: { allowed: [...new Set(steps.map((s) => s.tool))] },
    steps: steps.map((s) => ({ ...s, return_spec: { type: "object" } })), success_criteria: ["each step answers"],
  };
}

/**
 * A pack of MCP tools.
 * @param servers its `mcpServers`
 * @param tools its `tools` (kind mcp)
 * @param plan its static plan
 * @returns the pack's files
 */
export function mcpPack(servers: Record<string, unknown>, tools: Record<string, unknown>, plan: Record<string, unknown>, id = "mcp-tools"): Map<string, Uint8Array> {
  const doc = {
    specVersion: "1.0.0", id, version: "1.0.0", entrypoint: "plan.json",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: Object.keys(tools).map((name) => ({ name })) }, policies: { maxExecutionTime: 60000, maxToolCalls: 16 } },
    mcpServers: servers, tools,
  };
  return new Map([["reach.json", enc.encode(JSON.stringify(doc, null, 2))], ["plan.json", enc.encode(JSON.stringify(plan, null, 2))]]);
}

/** server-memory over stdio, its graph in a file of the server's scratch directory. */
export const MEMORY_SERVER = { command: "mcp-server-memory", args: [], env: { MEMORY_FILE_PATH: "{{scratch}}/memory.jsonl" } };
/** server-everything over stdio. */
export const EVERYTHING_SERVER = { command: "mcp-server-everything", args: ["stdio"], env: {} };

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * server-everything over Streamable HTTP on a free port (its own process; stop it with `close`).
 * @returns its endpoint URL and `close`
 */
export async function everythingOverHttp(): Promise<{ url: string; close: () => Promise<void> }> {
  const port = await freePort();
  const script = join(dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");
  const child: ChildProcess = spawn(process.execPath, [script, "streamableHttp"], { env: { PATH: process.env["PATH"] ?? "", PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      if (err.includes("listening on port")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    }),
  };
}
