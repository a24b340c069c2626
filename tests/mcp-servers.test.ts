// MCP servers as recorded tools, with real servers from npm that nobody here wrote: server-memory (stdio, draft-07
// schemas with outputSchema on every tool) and server-everything (stdio and Streamable HTTP; text, image and
// resource content, structuredContent, isError). Each run's capsule replays without starting a server and verifies.
import { readTapeJsonl } from "../src/record/tape-jsonl.ts";
import { readPackFiles } from "../src/host/pack-files.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gunzipSync } from "node:zlib";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliRuntimes } from "./support/service.ts";
import { runEngine } from "../src/engine/engine.ts";
import type { EngineRunRequest } from "../src/engine/engine.ts";
import { describeMcpServer } from "../src/engine/mcp-catalogue.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import type { EngineEnvironment } from "../src/engine/runners.ts";
import type { McpStdioLauncher } from "../src/protocol/mcp-client.ts";
import { launchMcpStdio, readQuickJsEngineWasm } from "./support/platform.ts";
import { buildRunView, renderReport, renderShow, showJson } from "../src/report/mod.ts";
import { EVERYTHING_SERVER, everythingOverHttp, MEMORY_SERVER, mcpPack, planOf } from "./support/mcp.ts";

/** The platform with a launcher that notes what it started. */
function platform(): { env: EngineEnvironment; started: { scratch: string; pid: number | undefined }[] } {
  const started: { scratch: string; pid: number | undefined }[] = [];
  const mcpStdio: McpStdioLauncher = async (launch) => {
    const p = await launchMcpStdio(launch);
    started.push({ scratch: p.scratch, pid: p.pid });
    return p;
  };
  return { env: { quickjsEngine: readQuickJsEngineWasm, mcpStdio }, started };
}

const root = new URL("../", import.meta.url).pathname;
const noServer: McpStdioLauncher = () => Promise.reject(new Error("a replay must not start an MCP server"));

/** Run, then replay (with a platform that cannot start a server) and verify the capsule. */
async function runAndReplay(env: EngineEnvironment, request: EngineRunRequest) {
  const run = await runEngine(env, { trust: { unrestricted: true }, ...request });
  const capsule = readRunCapsule(run.capsule.bytes);
  const replay = await replayCapsule(capsule, { quickjsEngine: readQuickJsEngineWasm, mcpStdio: noServer });
  expect(replay.matches, replay.divergence?.message).toBe(true);
  expect(verifyRunCapsule(capsule).valid).toBe(true);
  // the tape's records with their values (a salted run stores each call's values in tape/<seq>.json)
  const tape = readTapeJsonl(capsule.entries.get("tape.jsonl")!, undefined, capsule.entries) as unknown as { op: string; request: Record<string, unknown>; response?: Record<string, unknown>; error?: Record<string, unknown> }[];
  return { run, capsule, tape: tape.filter((r) => r.op === "mcp.call"), text: new TextDecoder().decode(gunzipSync(run.capsule.bytes)) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("server-memory over stdio", () => {
  it("add-mcp lists its tools with draft-07 input and output schemas; a run calls them, records each whole answer, replays without the server", async () => {
    const { env, started } = platform();
    const cat = await describeMcpServer(env, "memory", MEMORY_SERVER);
    expect(Object.keys(cat.tools)).toEqual(expect.arrayContaining(["create_entities", "read_graph", "search_nodes"]));
    const create = cat.tools["create_entities"]!;
    expect(create).toMatchObject({ kind: "mcp", server: "memory", tool: "create_entities" });
    expect(create.description).toBeTruthy();
    expect(create.inputSchema?.["$schema"]).toBe("http://json-schema.org/draft-07/schema#");
    expect(create.outputSchema).toBeDefined();
    expect(started).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(alive(started[0]!.pid!)).toBe(false);

    const plan = planOf([
      { id: "add", tool: "create_entities", arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] } },
      { id: "find", tool: "search_nodes", arguments: { query: "Ada" }, depends_on: ["add"] },
    ]);
    const files = mcpPack({ memory: MEMORY_SERVER }, { create_entities: create, search_nodes: cat.tools["search_nodes"]! }, plan);
    const { run, tape, text, capsule } = await runAndReplay(env, { pack: { files } });
    expect(run.status, run.error?.message).toBe("COMPLETED");
    expect(started).toHaveLength(2); // one server for the whole run, both calls
    // show and report mark the steps recorded, not contained
    const view = buildRunView({ origin: "capsule", entries: capsule.entries, index: capsule.index });
    expect(view.steps.map((st) => st.kind)).toEqual(["mcp", "mcp"]);
    expect(renderShow(view)).toContain("recorded, not contained");
    expect(renderReport(view, null)).toContain("mcp · recorded, not contained");
    expect((showJson(view) as { steps: { contained?: boolean }[] }).steps.map((st) => st.contained)).toEqual([false, false]);
    const found = run.result.outputs as Record<string, { structuredContent: { entities: { name: string }[] } }>;
    expect(found["find"]!.structuredContent.entities.map((e) => e.name)).toEqual(["Ada"]);
    expect(tape.map((r) => r.request)).toEqual([
      { server: "memory", tool: "create_entities", arguments: plan["steps"] && (plan["steps"] as { arguments: unknown }[])[0]!.arguments },
      { server: "memory", tool: "search_nodes", arguments: { query: "Ada" } },
    ]);
    expect(tape[1]!.response).toMatchObject({ content: [{ type: "text" }], structuredContent: { entities: [{ name: "Ada" }] } });
    // stopped when the run ended: the process and its scratch directory are gone, and no host path is recorded
    expect(alive(started[1]!.pid!)).toBe(false);
    expect(text).not.toContain(started[1]!.scratch);
    // a second live run (a fresh server, a fresh scratch file) gives the same run hash
    const again = await runEngine(env, { pack: { files }, trust: { unrestricted: true } });
    expect(again.runHash).toBe(run.runHash);
  }, 60_000);

  it("a restricted executor may not call an MCP server (POLICY_VIOLATION), and none is started", async () => {
    const { env, started } = platform();
    const files = mcpPack({ memory: MEMORY_SERVER }, { read_graph: { kind: "mcp", server: "memory", tool: "read_graph" } }, planOf([{ id: "g", tool: "read_graph", arguments: {} }]));
    const run = await runEngine(env, { pack: { files } });
    expect(run.status).toBe("FAILED");
    expect(run.error?.code).toBe("POLICY_VIOLATION");
    expect(started).toHaveLength(0);
  });

  it("refuses a pack whose mcp tool names an undeclared server, or has a module", async () => {
    const { env } = platform();
    const plan = planOf([{ id: "g", tool: "read_graph", arguments: {} }]);
    await expect(runEngine(env, { pack: { files: mcpPack({}, { read_graph: { kind: "mcp", server: "memory", tool: "read_graph" } }, plan) } })).rejects.toMatchObject({ code: "PACK_INVALID_MANIFEST", message: expect.stringContaining("mcpServers does not declare") });
    await expect(runEngine(env, { pack: { files: mcpPack({ memory: MEMORY_SERVER }, { read_graph: { kind: "mcp", server: "memory", tool: "read_graph", module: "x.js" } }, plan) } })).rejects.toMatchObject({ code: "PACK_INVALID_MANIFEST" });
  });
});

describe("a server publishing JSON Schema 2020-12 with $schema (tests/support/mcp-2020-server.mjs)", () => {
  const SERVER = { command: process.execPath, args: [join(root, "tests/support/mcp-2020-server.mjs")], env: {} };

  it("add-mcp keeps the 2020-12 schemas; arguments and structured content are checked by 2020-12 rules; the capsule replays", async () => {
    const { env } = platform();
    const cat = await describeMcpServer(env, "s2020", SERVER);
    expect(cat.tools["pair"]!.inputSchema?.["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema");
    const pack = (args: Record<string, unknown>, tool = "pair") => mcpPack({ s2020: SERVER }, { [tool]: cat.tools[tool]! }, planOf([{ id: "p", tool, arguments: args }]));
    const good = await runAndReplay(env, { pack: { files: pack({ pair: ["apples", 3], scale: 2, unit: "kg" }) } });
    expect(good.run.status, good.run.error?.message).toBe("COMPLETED");
    expect(good.tape[0]!.response).toMatchObject({ structuredContent: { label: "apples", value: 3 } });
    // prefixItems with items: false (draft-07 would take `items: false` as "no items at all" and ignore prefixItems),
    // a $ref into $defs, and dependentRequired (unknown to draft-07) each refuse what 2020-12 refuses
    for (const args of [{ pair: ["apples", "3"] }, { pair: ["apples", 3, 4] }, { pair: ["", 3] }, { pair: ["apples", 3], scale: 2 }]) {
      const refused = await runAndReplay(env, { pack: { files: pack(args) } });
      expect(refused.run.status, JSON.stringify(args)).toBe("FAILED");
      expect(refused.tape, JSON.stringify(args)).toHaveLength(0); // refused before the server was called
    }
    const bad = await runAndReplay(env, { pack: { files: pack({}, "bad-output") } });
    expect(bad.run.error?.code).toBe("EXEC_OUTPUT_INVALID");
  }, 60_000);
});

describe("server-everything", () => {
  it("gets only its declared env plus PATH, a scratch directory scrubbed to {{scratch}}, and a secret substituted at spawn and scrubbed from its answers", async () => {
    const { env } = platform();
    const secret = "sk-test-0123456789abcdef";
    const server = { ...EVERYTHING_SERVER, env: { GREETING: "hello", WORK: "{{scratch}}/work", API_TOKEN: "{{secret:API_TOKEN}}" } };
    const files = mcpPack({ everything: server }, { env: { kind: "mcp", server: "everything", tool: "get-env" } }, planOf([{ id: "e", tool: "env", arguments: {} }]));
    const { run, tape, text } = await runAndReplay(env, { pack: { files }, secretValue: (n) => (n === "API_TOKEN" ? secret : undefined) });
    expect(run.status, run.error?.message).toBe("COMPLETED");
    const seen = JSON.parse(((tape[0]!.response!["content"] as { text: string }[])[0]!).text) as Record<string, string>;
    expect(Object.keys(seen).sort()).toEqual(["API_TOKEN", "GREETING", "PATH", "WORK"]);
    expect(seen).toMatchObject({ GREETING: "hello", WORK: "{{scratch}}/work", API_TOKEN: "{{secret:API_TOKEN}}" });
    expect(text).not.toContain(secret);
    // the same value through the run's `secrets` (what `--secret` gives), the pack declaring it
    const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json")!)) as Record<string, unknown>;
    doc["secrets"] = { API_TOKEN: { hosts: ["localhost"], description: "the server's token" } };
    const declared = new Map(files).set("reach.json", new TextEncoder().encode(JSON.stringify(doc)));
    const via = await runAndReplay(env, { pack: { files: declared }, secrets: { API_TOKEN: secret } });
    expect(via.run.status, via.run.error?.message).toBe("COMPLETED");
    expect(JSON.parse(((via.tape[0]!.response!["content"] as { text: string }[])[0]!).text)).toMatchObject({ API_TOKEN: "{{secret:API_TOKEN}}" });
    expect(via.text).not.toContain(secret);
    // no secret given: the server is not started, the step fails with a clear message
    const missing = await runEngine(env, { pack: { files }, trust: { unrestricted: true } });
    expect(missing.status).toBe("FAILED");
    expect(missing.error?.message).toContain("needs the secret API_TOKEN");
  }, 60_000);

  it("records every content type, structuredContent checked against the draft-07 outputSchema, and isError as the step's failure", async () => {
    const { env } = platform();
    const cat = await describeMcpServer(env, "everything", EVERYTHING_SERVER);
    expect(cat.tools["get-structured-content"]!.outputSchema?.["$schema"]).toBe("http://json-schema.org/draft-07/schema#");
    const tools = { "get-tiny-image": cat.tools["get-tiny-image"]!, "get-structured-content": cat.tools["get-structured-content"]!, "get-annotated-message": cat.tools["get-annotated-message"]! };
    const plan = planOf([
      { id: "img", tool: "get-tiny-image", arguments: {} },
      { id: "weather", tool: "get-structured-content", arguments: { location: "Chicago" } },
      { id: "note", tool: "get-annotated-message", arguments: { messageType: "error", includeImage: true } },
    ]);
    const { run, tape } = await runAndReplay(env, { pack: { files: mcpPack({ everything: EVERYTHING_SERVER }, tools, plan) } });
    expect(run.status, run.error?.message).toBe("COMPLETED");
    const types = tape.flatMap((r) => (r.response!["content"] as { type: string }[]).map((c) => c.type));
    expect(types).toEqual(expect.arrayContaining(["text", "image"]));
    expect(tape[1]!.response!["structuredContent"]).toMatchObject({ temperature: expect.any(Number) });

    // a structuredContent the declared outputSchema refuses: EXEC_OUTPUT_INVALID; a server's isError: EXEC_TOOL_FAILED
    const strict = { ...tools["get-structured-content"], outputSchema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object", required: ["pressure"] } };
    const bad = await runAndReplay(env, { pack: { files: mcpPack({ everything: EVERYTHING_SERVER }, { w: strict }, planOf([{ id: "w", tool: "w", arguments: { location: "Chicago" } }])) } });
    expect(bad.run.error?.code).toBe("EXEC_OUTPUT_INVALID");
    expect(bad.run.error?.message).toContain("structuredContent");
    const sum = { kind: "mcp", server: "everything", tool: "get-sum" }; // no inputSchema here: the server checks
    const failed = await runAndReplay(env, { pack: { files: mcpPack({ everything: EVERYTHING_SERVER }, { sum }, planOf([{ id: "s", tool: "sum", arguments: { a: "one", b: 2 } }])) } });
    expect(failed.run.error?.code).toBe("EXEC_TOOL_FAILED");
    expect(failed.tape[0]!.response).toMatchObject({ isError: true });
  }, 60_000);

  it("a call that outlasts the step timeout is stopped by the watchdog, recorded, and replays", async () => {
    const { env } = platform();
    const files = mcpPack({ everything: EVERYTHING_SERVER }, { slow: { kind: "mcp", server: "everything", tool: "trigger-long-running-operation" } }, planOf([{ id: "s", tool: "slow", arguments: { duration: 30, steps: 3 } }]));
    const { run, tape } = await runAndReplay(env, { pack: { files }, stepTimeoutMs: 100 });
    expect(run.error?.code).toBe("EXEC_TOOL_TIMEOUT");
    expect(tape[0]!.error).toMatchObject({ code: "EXEC_TOOL_TIMEOUT" });
  }, 60_000);

  describe("over Streamable HTTP", () => {
    let http: Awaited<ReturnType<typeof everythingOverHttp>>;
    beforeAll(async () => void (http = await everythingOverHttp()), 30_000);
    afterAll(async () => http?.close());

    it("lists and calls its tools through the url entry; the capsule replays with no server", async () => {
      const { env, started } = platform();
      const cat = await describeMcpServer(env, "everything", { url: http.url });
      expect(cat.tools["echo"]).toMatchObject({ kind: "mcp", server: "everything", tool: "echo" });
      const plan = planOf([{ id: "echo", tool: "echo", arguments: { message: "over http" } }, { id: "sum", tool: "get-sum", arguments: { a: 2, b: 40 } }]);
      const { run, tape } = await runAndReplay(env, { pack: { files: mcpPack({ everything: { url: http.url } }, { echo: cat.tools["echo"]!, "get-sum": cat.tools["get-sum"]! }, plan) } });
      expect(run.status, run.error?.message).toBe("COMPLETED");
      expect(JSON.stringify(tape[0]!.response)).toContain("over http");
      expect(JSON.stringify(tape[1]!.response)).toContain("42");
      expect(started).toHaveLength(0);
    }, 60_000);
  });
});

describe("on Deno (the CLI from the bundle)", () => {
  const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-deno-"));
  const cli = cliRuntimes(scratch);
  beforeAll(() => cli.setup(), 120_000);
  afterAll(() => {
    cli.remove();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("runs packs/mcp_memory (server-memory over stdio) to the run hash Node gives, stops the server, and replays it", async () => {
    const [, deno] = cli.runtimes.find(([name]) => name === "deno")!;
    // the committed capsule is in the previous commitment format; a new run is salted, so Node's own run is the reference
    const node = await runEngine(platform().env, { pack: { files: await readPackFiles(join(root, "packs/mcp_memory")) }, trust: { unrestricted: true } });
    expect(node.status, node.error?.message).toBe("COMPLETED");
    // the run's own temporary folder (other tests make reach-mcp-* folders in the shared one meanwhile)
    const tmp = join(scratch, "tmp");
    mkdirSync(tmp);
    const run = spawnSync(deno[0]!, [...deno.slice(1), "run", join(root, "packs/mcp_memory"), "--unrestricted", "--json", "--out", join(scratch, "out")], { cwd: scratch, encoding: "utf8", env: { ...process.env, TMPDIR: tmp } });
    expect(run.status, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout) as { runHash: string; capsule: string };
    expect(r.runHash).toBe(node.runHash);
    expect(readdirSync(tmp).filter((n) => n.startsWith("reach-mcp-"))).toEqual([]);
    // replay where no server can be found (PATH without node_modules/.bin): served from the tape
    const replay = spawnSync(deno[0]!, [...deno.slice(1), "replay", r.capsule, "--json"], { cwd: scratch, encoding: "utf8", env: { ...process.env, PATH: "/usr/bin:/bin" } });
    expect(replay.status, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, runHash: r.runHash });
  }, 120_000);
});
