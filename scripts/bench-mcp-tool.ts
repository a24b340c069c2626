/**
 * `npm run bench` (MCP tools part; `npx vite-node scripts/bench-mcp-tool.ts`, `deno run -A scripts/bench-mcp-tool.ts`):
 * a tool of a real MCP server (`@modelcontextprotocol/server-memory`'s `search_nodes`, over stdio) called through
 * reach-wasm — an engine session of a pack whose tool has kind `mcp`: input check, `mcp.call` on the tape, output check,
 * step events — against the same call made directly with the MCP SDK's client on its own stdio transport. Both servers
 * are started and warmed first; the two sides' calls alternate, so the load of this shared machine falls on both alike.
 * Prints the medians, their ratio and the target: through reach-wasm ≤ 1.5 × direct + 1 ms. Nothing here is asserted
 * by tests. `REACH_BENCH_SMOKE=1`: tiny counts.
 * @module
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { openSession } from "../src/engine/engine.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { n } from "./bench/smoke.ts";

const CALLS = n(200, 3);
const WARMUP = n(20, 1);
const root = new URL("../", import.meta.url).pathname;
const bin = join(root, "node_modules/.bin");
process.env["PATH"] = `${bin}:${process.env["PATH"] ?? ""}`;
const deno = "Deno" in globalThis;
const runtime = deno ? `deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}` : `node ${process.version}`;
const log = (line: string): void => console.log(`[mcp-tool ${runtime}] ${line}`);
const ARGS = { query: "Ada" };
const enc = new TextEncoder();

function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** A pack with one MCP tool, server-memory's search_nodes, and room for every call. */
function packFiles(): Map<string, Uint8Array> {
  const doc = {
    specVersion: "1.0.0", id: "bench-mcp-tool", version: "1.0.0", entrypoint: "plan.json",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "search_nodes" }] }, policies: { maxToolCalls: CALLS + WARMUP + 10, maxExecutionTime: 3_600_000 } },
    mcpServers: { memory: { command: "mcp-server-memory", args: [], env: { MEMORY_FILE_PATH: "{{scratch}}/memory.jsonl" } } },
    tools: { search_nodes: { kind: "mcp", server: "memory", tool: "search_nodes", inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } } },
  };
  const plan = { contract_version: "S2-B-05.v1", plan_id: "b", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "static", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["search_nodes"] }, steps: [], success_criteria: [] };
  return new Map([["reach.json", enc.encode(JSON.stringify(doc))], ["plan.json", enc.encode(JSON.stringify(plan))]]);
}

const session = await openSession(defaultEnvironment({ diskCache: false }), { pack: { files: packFiles() }, trust: { unrestricted: true } });
const direct = new Client({ name: "bench", version: "1" });
await direct.connect(new StdioClientTransport({ command: "mcp-server-memory", args: [], env: { PATH: process.env["PATH"] ?? "", MEMORY_FILE_PATH: join(root, "node_modules/.cache/bench-mcp-tool-memory.jsonl") } }));

const viaReach = async (): Promise<void> => {
  const r = await session.call("search_nodes", ARGS);
  if (!r.ok) throw new Error(`reach-wasm call failed: ${r.error.message}`);
};
const viaSdk = async (): Promise<void> => {
  const r = await direct.callTool({ name: "search_nodes", arguments: ARGS });
  if (r.isError === true) throw new Error("direct call failed");
};
for (let i = 0; i < WARMUP; i++) {
  await viaReach();
  await viaSdk();
}
const reach: number[] = [];
const sdk: number[] = [];
for (let i = 0; i < CALLS; i++) {
  for (const [fn, out] of (i % 2 === 0 ? [[viaReach, reach], [viaSdk, sdk]] : [[viaSdk, sdk], [viaReach, reach]]) as [() => Promise<void>, number[]][]) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
}
await session.close();
await direct.close();
const r = median(reach);
const d = median(sdk);
const target = 1.5 * d + 1;
log(`${CALLS} calls of server-memory search_nodes each, interleaved (load ${loadavg().map((x) => x.toFixed(2)).join(" ")})`);
log(`direct (SDK client, stdio): median ${d.toFixed(3)} ms`);
log(`through reach-wasm (engine session, kind mcp, recorded): median ${r.toFixed(3)} ms`);
log(`ratio ${(r / d).toFixed(2)}x; target <= 1.5x direct + 1 ms = ${target.toFixed(3)} ms: ${r <= target ? "met" : "NOT met"}`);
