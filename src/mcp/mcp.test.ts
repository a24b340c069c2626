// The MCP face in process: the SDK's own Client against createMcpServer (in-memory transport) and against the
// Streamable HTTP handler (served on loopback). Each call a recorded step; refused calls are isError with the
// ReachError code; the workspace is read-only resources; the capsule verifies and replays. (mistakes.test.ts: the
// session as a chain of runs; tests/mcp.test.ts spawns the CLI on Node and Deno.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { replayCapsule } from "../engine/replay.ts";
import { ErrorDocumentSchema } from "../protocol/error-details.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import type { EngineRun } from "../engine/engine.ts";
import { openIsolatedSession } from "../host/engine-thread.ts";
import { serveHttp, readPackFiles, readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { McpHttpHandler, MCP_PATH } from "./http.ts";
import { createMcpServer } from "./server.ts";
import { McpSessionRun } from "./session-run.ts";
import type { McpEngine } from "./session-run.ts";
import { SESSION_START } from "../engine/session-chain.ts";
import { INFRA_CALLS, PIXEL, writeMcpPack } from "./_test-mcp.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const files = await readPackFiles(writeMcpPack(join(scratch, "pack"), 12));
const engine: McpEngine = { openSession: ({ session, signal }) => openIsolatedSession({ pack: { files }, session }, signal === undefined ? {} : { signal }) };
/** The first run of an MCP session, and the session over it. */
async function sessionRun(sink: (run: EngineRun) => Promise<string>, signal?: AbortSignal): Promise<McpSessionRun> {
  const first = await engine.openSession({ session: SESSION_START, ...(signal === undefined ? {} : { signal }) });
  return new McpSessionRun(first, sink, { engine, ...(signal === undefined ? {} : { signal }) });
}
const INFO = { name: "reach-wasm", version: "test" };

/** A sink keeping the runs, answering a made-up location. */
function memorySink(): { runs: EngineRun[]; sink: (run: EngineRun) => Promise<string> } {
  const runs: EngineRun[] = [];
  return { runs, sink: async (run) => (runs.push(run), `mem/${run.capsule.name}`) };
}

async function checkCapsule(run: EngineRun): Promise<void> {
  const capsule = readRunCapsule(run.capsule.bytes);
  expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm });
  expect(replay.matches, replay.divergence?.message).toBe(true);
}

async function connected(run: McpSessionRun): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createMcpServer(run, INFO).connect(a);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(b);
  return client;
}

const text = (r: object): string => (("content" in r ? (r.content as { text: string }[]) : [])[0]?.text ?? "");

describe("an MCP session is a session run", () => {
  it("lists the pack's and the infra tools; calls are recorded steps; a schema error is isError, not recorded, and the run goes on; resources; close → COMPLETED, verify and replay", async () => {
    const { runs, sink } = memorySink();
    const run = await sessionRun(sink);
    const client = await connected(run);
    const listed = await client.listTools();
    const { tools } = listed;
    expect(listed._meta?.["reach-wasm/run"]).toEqual({ segment: 1, callsLeft: 12, timeLeftMs: 600_000, budget: { maxToolCalls: 12, maxExecutionTimeMs: 600_000 } });
    expect(tools.map((t) => t.name)).toEqual(["wordcount", "spin", "write_memory", "read_memory", "write_temp", "read_lines", "exec_python"]);
    expect(tools[0]).toMatchObject({ inputSchema: { type: "object", required: ["text"] }, outputSchema: { type: "object", required: ["words", "chars", "lines"] } });
    const counted = await client.callTool({ name: "wordcount", arguments: { text: "one two three" } });
    expect(counted.isError).toBeFalsy();
    expect(counted.structuredContent).toMatchObject({ words: 3, chars: 13 });
    expect(JSON.parse(text(counted))).toEqual(counted.structuredContent);
    for (const c of INFRA_CALLS) {
      const r = await client.callTool({ name: c.name, arguments: c.args });
      expect(r.structuredContent, `${c.name}: ${text(r)}`).toMatchObject(c.expect);
    }
    const bad = await client.callTool({ name: "wordcount", arguments: { txt: "x" } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^PROTO_SCHEMA_VIOLATION: .*inputSchema.*nothing ran .* fix the arguments/);
    // the same error document as every face's (seed 003 §7.2, upstream error.schema.json)
    expect(ErrorDocumentSchema().parse(bad._meta?.["reach-wasm/error"]).error.code).toBe("PROTO_SCHEMA_VIOLATION");
    expect((await client.callTool({ name: "wordcount", arguments: { text: "still going" } })).structuredContent).toMatchObject({ words: 2 });

    const { resources } = await client.listResources();
    expect(resources.map((r) => [r.uri, r.mimeType, r.size])).toEqual([
      ["workspace:///data/pixel.png", "image/png", PIXEL.length],
      ["workspace:///data/readme.md", "text/markdown", 15],
      ["workspace:///temp/notes.txt", "text/plain", 17],
    ]);
    expect((await client.readResource({ uri: "workspace:///temp/notes.txt" })).contents[0]).toMatchObject({ text: "alpha\nbeta\ngamma\n" });
    const blob = (await client.readResource({ uri: "workspace:///data/pixel.png" })).contents[0] as { blob: string };
    expect(Uint8Array.from(atob(blob.blob), (ch) => ch.charCodeAt(0))).toEqual(PIXEL);
    await expect(client.readResource({ uri: "workspace:///temp/absent.txt" })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toMatchObject({ code: -32602 });

    const ended = await run.end();
    expect(ended).toMatchObject({ capsule: `mem/${runs[0]!.capsule.name}`, error: null });
    expect(runs.map((r) => r.status)).toEqual(["COMPLETED"]);
    const plan = JSON.parse(new TextDecoder().decode(readRunCapsule(runs[0]!.capsule.bytes).entries.get("plan.json")!)) as { steps: { tool: string }[] };
    expect(plan.steps.map((s) => s.tool)).toEqual(["wordcount", ...INFRA_CALLS.map((c) => c.name), "wordcount"]); // the refused call is not a step
    await checkCapsule(runs[0]!);
    await client.close();
  });

  // (a signal inside a call that never returns needs the engine thread: tests/mcp.test.ts)
  it("an abort ends the MCP session: its run ends ABORTED, the call is refused naming the capsule, and no run follows", async () => {
    const { runs, sink } = memorySink();
    const controller = new AbortController();
    const run = await sessionRun(sink, controller.signal);
    await run.call("wordcount", { text: "a" });
    controller.abort("SIGINT");
    expect(text(await run.call("wordcount", { text: "b" }))).toMatch(/^EXEC_ABORTED: .* ended ABORTED .* its capsule is mem\/.*The server is stopping: no further calls\.$/);
    expect(text(await run.call("wordcount", { text: "c" }))).toMatch(/^PROTO_SEQUENCE_ERROR: this MCP session has ended/);
    expect((await run.end(true)).run?.status).toBe("ABORTED");
    expect(runs.map((r) => r.status)).toEqual(["ABORTED"]);
    await checkCapsule(runs[0]!);
  });
});

describe("Streamable HTTP", () => {
  async function start(token: string | null): Promise<{ url: URL; handler: McpHttpHandler; runs: EngineRun[]; close(): Promise<void> }> {
    const { runs, sink } = memorySink();
    const handler = new McpHttpHandler({ engine, sink, info: INFO, token });
    const server = await serveHttp(handler.fetch, { hostname: "127.0.0.1", port: 0 });
    return { url: new URL(server.url + MCP_PATH), handler, runs, close: async () => void (await handler.close(true), await server.close()) };
  }
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
  const post = (url: URL, body: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(url, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } });

  it("each MCP session is its own session run, ended by DELETE (capsule handed over before the answer); the token is checked on every request", async () => {
    const token = "t0ken-0123456789abcdef";
    const t = await start(token);
    try {
      const clients = await Promise.all([0, 1].map(async () => {
        const transport = new StreamableHTTPClientTransport(t.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
        const client = new Client({ name: "test", version: "1" });
        await client.connect(transport);
        return { client, transport };
      }));
      expect(t.handler.size).toBe(2);
      const [a, b] = clients;
      expect((await a!.client.listTools()).tools).toHaveLength(7);
      expect((await a!.client.callTool({ name: "wordcount", arguments: { text: "a b" } })).structuredContent).toMatchObject({ words: 2 });
      expect((await b!.client.callTool({ name: "write_temp", arguments: { name: "b.txt", content: "b" } })).structuredContent).toEqual({ path: "temp/b.txt" });
      expect((await a!.client.listResources()).resources.map((r) => r.name)).toEqual(["data/pixel.png", "data/readme.md"]);
      // the token on every request: the same session without it is refused
      const refused = await post(t.url, JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }), { "mcp-session-id": a!.transport.sessionId!, "mcp-protocol-version": "2025-06-18" });
      expect(refused.status).toBe(401);
      expect((await post(t.url, JSON.stringify(init), { authorization: "Bearer wrong-token-0123456789" })).status).toBe(401);
      await a!.transport.terminateSession();
      expect(t.runs.map((r) => r.status)).toEqual(["COMPLETED"]);
      expect(t.handler.size).toBe(1);
      await b!.transport.terminateSession();
      expect(t.runs).toHaveLength(2);
      expect(t.runs[0]!.runHash).not.toBe(t.runs[1]!.runHash);
      for (const r of t.runs) await checkCapsule(r);
      for (const c of clients) await c.client.close();
    } finally {
      await t.close();
    }
  }, 60_000);

  it("without a token: loopback Host/Origin only; malformed JSON-RPC and messages over 4 MiB are answered, never fatal; closing the server ends open sessions ABORTED", async () => {
    const t = await start(null);
    try {
      const evil = await post(t.url, JSON.stringify(init), { origin: "http://evil.example" });
      expect(evil.status).toBe(403);
      const garbage = await post(t.url, "{not json");
      expect(garbage.status).toBe(400);
      expect(await garbage.json()).toMatchObject({ error: { code: -32700 } });
      const notRpc = await post(t.url, JSON.stringify({ hello: 1 }));
      expect(notRpc.status).toBe(400);
      expect((await post(t.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { "mcp-session-id": "nope" })).status).toBe(404);
      expect((await fetch(new URL("/other", t.url))).status).toBe(404);
      expect(t.handler.size).toBe(0);
      const client = new Client({ name: "test", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(t.url));
      const bad = await client.callTool({ name: "wordcount", arguments: { text: 5 } });
      expect(text(bad)).toMatch(/^PROTO_SCHEMA_VIOLATION/);
      expect((await client.callTool({ name: "wordcount", arguments: { text: "ok" } })).structuredContent).toMatchObject({ words: 1 });
      // a 20 MB argument: answered for its id (the SDK client writes the id last), and the session goes on
      await expect(client.callTool({ name: "wordcount", arguments: { text: "x ".repeat(10_000_000) } })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/Request too large: this tools\/call request is \d+ bytes; this server reads messages of at most 4194304 bytes/) });
      expect((await client.callTool({ name: "wordcount", arguments: { text: "still here" } })).structuredContent).toMatchObject({ words: 2 });
      const anonymous = await post(t.url, JSON.stringify({ pad: "y".repeat(5_000_000) }));
      expect(anonymous.status).toBe(413);
      expect(await anonymous.json()).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining("its id could not be read") } });
      expect(t.handler.size).toBe(1);
      await t.handler.close(true);
      expect(t.runs.map((r) => r.status)).toEqual(["ABORTED"]);
      await checkCapsule(t.runs[0]!);
      await client.close();
    } finally {
      await t.close();
    }
  }, 60_000);
});
