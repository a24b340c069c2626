// `reach-wasm mcp` as a process, driven by the MCP SDK's own Client, on Node (the CLI bundled from src/) and on Deno
// (src/ directly): over stdio and over Streamable HTTP — list tools, call the pack's tool and each infra tool, an
// argument schema error (isError, the run goes on), an undefined tool (ends the run; later calls name the capsule),
// close; SIGINT while a tool spins (ABORTED); malformed JSON-RPC; the token and loopback rules. Every capsule then
// passes `verify` and `replay` (exit 0). Time bounds are generous: the machine is shared.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INFRA_CALLS, writeMcpPack } from "../src/mcp/_test-mcp.ts";
import { cliRuntimes } from "../src/service/_test-service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-cli-"));
const pack = writeMcpPack(join(scratch, "pack"));
// The CLI bundled from src/ for this test (dist/ may be stale during development); Deno runs src/ directly.
const cli = cliRuntimes(scratch);
beforeAll(() => cli.setup(), 120_000);
afterAll(() => {
  cli.remove();
  rmSync(scratch, { recursive: true, force: true });
});
const RUNTIMES = cli.runtimes;
const TOKEN = "test-token-0123456789abcdef";
const text = (r: object): string => (("content" in r ? (r.content as { text: string }[]) : [])[0]?.text ?? "");

/** The capsules a server reported on stderr, with their statuses. */
function capsulesOf(stderr: string): { status: string; path: string }[] {
  const statuses = [...stderr.matchAll(/session run (COMPLETED|FAILED|ABORTED) ([0-9a-f]{64})/g)];
  const paths = [...stderr.matchAll(/capsule (\S+\.capsule\.tar\.gz)/g)].map((m) => m[1]!);
  return statuses.map((m) => ({ status: m[1]!, path: paths.find((p) => p.includes(m[2]!)) ?? "" }));
}

function expectVerifiesAndReplays(cmd: string[], capsule: string): void {
  for (const command of ["verify", "replay"]) {
    const r = spawnSync(cmd[0]!, [...cmd.slice(1), command, capsule, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(r.status, `${command}: ${r.stdout}${r.stderr}`).toBe(0);
  }
}

/** Drive one session with the SDK client: tools, the pack tool, every infra tool, a schema error, an undefined tool. */
async function driveSession(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(["wordcount", "spin", ...INFRA_CALLS.map((c) => c.name)]);
  expect((await client.callTool({ name: "wordcount", arguments: { text: "one two three" } })).structuredContent).toMatchObject({ words: 3 });
  for (const c of INFRA_CALLS) {
    const r = await client.callTool({ name: c.name, arguments: c.args });
    expect(r.structuredContent, `${c.name}: ${text(r)}`).toMatchObject(c.expect);
  }
  const bad = await client.callTool({ name: "read_lines", arguments: { path: 7 } });
  expect(bad.isError).toBe(true);
  expect(text(bad)).toMatch(/^PROTO_SCHEMA_VIOLATION: /);
  expect((await client.readResource({ uri: "workspace:///temp/notes.txt" })).contents[0]).toMatchObject({ text: "alpha\nbeta\ngamma\n" });
  const denied = await client.callTool({ name: "rm_rf", arguments: {} });
  expect(text(denied)).toMatch(/^POLICY_VIOLATION: .* ended FAILED .* its capsule is \S+\.capsule\.tar\.gz/);
  const later = await client.callTool({ name: "wordcount", arguments: { text: "x" } });
  expect(later.isError).toBe(true);
  expect(text(later)).toMatch(/its capsule is \S+\.capsule\.tar\.gz/);
}

/** Start `mcp --http` and wait for its address on stderr. */
async function httpServer(cmd: string[], out: string, extra: string[]): Promise<{ child: ChildProcess; url: URL; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(cmd[0]!, [...cmd.slice(1), "mcp", pack, "--out", out, "--http", "127.0.0.1:0", ...extra], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const url = await new Promise<URL>((resolve, reject) => {
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d;
      const m = /at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m !== null) resolve(new URL(m[1]!));
    });
    void exited.then(() => reject(new Error(`mcp --http exited: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr, exited };
}

describe.each(RUNTIMES)("reach-wasm mcp on %s", (_runtime, cmd) => {
  it("stdio: the SDK client drives a session; an undefined tool ends it FAILED with its capsule; close; verify and replay pass", async () => {
    const out = join(scratch, `out-stdio-${_runtime}`);
    const transport = new StdioClientTransport({ command: cmd[0]!, args: [...cmd.slice(1), "mcp", pack, "--out", out], cwd: root, stderr: "pipe" });
    let stderr = "";
    transport.stderr!.on("data", (d: Buffer) => (stderr += d));
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    await driveSession(client);
    await client.close();
    const capsules = capsulesOf(stderr);
    expect(capsules.map((c) => c.status), stderr).toEqual(["FAILED"]);
    expectVerifiesAndReplays(cmd, capsules[0]!.path);
  }, 180_000);

  it("stdio: malformed JSON-RPC is answered and the server goes on; stdin's end → COMPLETED, exit 0", async () => {
    const out = join(scratch, `out-raw-${_runtime}`);
    const child = spawn(cmd[0]!, [...cmd.slice(1), "mcp", pack, "--out", out], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const lines = [
      "this is not json",
      JSON.stringify([1, 2, 3]),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { arguments: {} } }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "no/such/method" }),
      JSON.stringify({ jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: 42 } }),
      JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "wordcount", arguments: { text: "still alive" } } }),
    ];
    child.stdin.end(lines.join("\n") + "\n");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const answers = stdout.trim().split("\n").map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number }; result?: { structuredContent?: unknown } });
    expect(answers.filter((a) => a.id === null).map((a) => a.error?.code)).toEqual([-32700, -32600]);
    expect(answers.find((a) => a.id === 2)?.error?.code).toBe(-32602);
    expect(answers.find((a) => a.id === 3)?.error?.code).toBe(-32601);
    expect(answers.find((a) => a.id === 5)?.error?.code).toBe(-32602);
    expect(answers.find((a) => a.id === 4)?.result?.structuredContent).toMatchObject({ words: 2 });
    expect(code, stderr).toBe(0);
    const capsules = capsulesOf(stderr);
    expect(capsules.map((c) => c.status)).toEqual(["COMPLETED"]);
    expectVerifiesAndReplays(cmd, capsules[0]!.path);
  }, 180_000);

  it("stdio: SIGINT while a tool spins ends the run ABORTED at once; its capsule verifies and replays", async () => {
    const out = join(scratch, `out-sigint-${_runtime}`);
    const transport = new StdioClientTransport({ command: cmd[0]!, args: [...cmd.slice(1), "mcp", pack, "--out", out], cwd: root, stderr: "pipe" });
    let stderr = "";
    transport.stderr!.on("data", (d: Buffer) => (stderr += d));
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    expect((await client.callTool({ name: "wordcount", arguments: { text: "a b" } })).structuredContent).toMatchObject({ words: 2 });
    const spinning = client.callTool({ name: "spin", arguments: {} }, undefined, { timeout: 120_000 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const sentAt = performance.now();
    process.kill(transport.pid!, "SIGINT");
    expect(text(await spinning)).toMatch(/^EXEC_ABORTED: .* ended ABORTED/);
    expect(performance.now() - sentAt).toBeLessThan(20_000);
    await client.close();
    const capsules = capsulesOf(stderr);
    expect(capsules.map((c) => c.status), stderr).toEqual(["ABORTED"]);
    expectVerifiesAndReplays(cmd, capsules[0]!.path);
  }, 180_000);

  it("HTTP: the token on every request; each MCP session its own run (DELETE → capsule); SIGTERM ends open sessions ABORTED; verify and replay pass", async () => {
    const out = join(scratch, `out-http-${_runtime}`);
    const server = await httpServer(cmd, out, ["--token", TOKEN]);
    try {
      const headers = { authorization: `Bearer ${TOKEN}` };
      const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
      const raw = (h: Record<string, string>, body = JSON.stringify(init)): Promise<Response> => fetch(server.url, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...h } });
      expect((await raw({})).status).toBe(401);
      expect((await raw({ authorization: "Bearer not-the-token-at-all" })).status).toBe(401);
      const garbage = await raw(headers, "{nope");
      expect(garbage.status).toBe(400);
      expect(await garbage.json()).toMatchObject({ error: { code: -32700 } });

      const first = new StreamableHTTPClientTransport(server.url, { requestInit: { headers } });
      const a = new Client({ name: "a", version: "1" });
      await a.connect(first);
      await driveSession(a);
      await first.terminateSession();
      await a.close();
      const b = new Client({ name: "b", version: "1" });
      await b.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers } }));
      expect((await b.callTool({ name: "wordcount", arguments: { text: "left open" } })).structuredContent).toMatchObject({ words: 2 });
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(1);
      await b.close();
      const capsules = capsulesOf(server.stderr());
      expect(capsules.map((c) => c.status), server.stderr()).toEqual(["FAILED", "ABORTED"]);
      for (const c of capsules) expectVerifiesAndReplays(cmd, c.path);
    } finally {
      server.child.kill("SIGKILL");
    }
  }, 240_000);

  it("HTTP: a non-loopback address without a token is refused (exit 2); so is --token on stdio", () => {
    for (const args of [["--http", "0.0.0.0:0"], ["--token", TOKEN]]) {
      const r = spawnSync(cmd[0]!, [...cmd.slice(1), "mcp", pack, "--out", join(scratch, "never"), ...args], { cwd: root, encoding: "utf8", timeout: 60_000, env: { ...process.env, REACH_WASM_MCP_TOKEN: "" } });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/PROTO_INVALID_ARGUMENT: mcp: .*(token|loopback)/);
    }
  }, 120_000);
});
