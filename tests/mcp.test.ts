// `reach-wasm mcp` as a process, driven by the MCP SDK's own Client, on Node (the CLI bundled from src/) and on Deno
// (src/ directly): over stdio and over Streamable HTTP, one session makes the mistakes agents make between good calls —
// an unknown tool (-32602), bad arguments, a 20 MB argument, a spent budget, a hanging tool, a path and a memory key
// outside the pack's resources — and every call after a mistake succeeds: a hard failure ends the run it happened in and
// the session goes on in the next run of its chain, from the same workspace and memory. SIGINT while a tool spins
// (ABORTED); malformed JSON-RPC; the token and loopback rules. Every capsule verifies and replays (the chain's last
// through the CLI, all of them in process) and the capsules link up; the session index lists them. Time bounds are
// generous: the machine is shared.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { checkSessionChainLinks } from "../src/engine/session-chain.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { INFRA_CALLS, writeMcpPack } from "../src/mcp/_test-mcp.ts";
import { readPythonWasm } from "../src/platform/python-engine.ts";
import { readQuickJsEngineWasm } from "../src/platform/quickjs-engine.ts";
import { cliRuntimes } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-cli-"));
const pack = writeMcpPack(join(scratch, "pack"));
/** Six calls per run: the infra calls after the first spend a run's budget. */
const small = writeMcpPack(join(scratch, "small"), 6);
// The CLI bundled from src/ for this test (dist/ may be stale during development); Deno runs src/ directly.
const cli = cliRuntimes(scratch);
beforeAll(() => cli.setup(), 120_000);
afterAll(() => {
  cli.remove();
  rmSync(scratch, { recursive: true, force: true });
});
const RUNTIMES = cli.runtimes;
const TOKEN = "test-token-0123456789abcdef";
/** Each call may compute 300 ms of fuel (the hanging tool is stopped there, the same on every machine). */
const STEP_TIMEOUT = ["--step-timeout", "300"];
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

/**
 * A session's capsules, in order: each verifies and replays (in process, on Node, whichever runtime wrote it), they
 * link up as a chain, and `--out/sessions/<first run hash>.json` lists them.
 */
async function expectChain(paths: readonly string[], out: string): Promise<void> {
  const capsules = paths.map((p) => readRunCapsule(readFileSync(p)));
  for (const c of capsules) {
    expect(verifyRunCapsule(c).checks.filter((x) => !x.ok)).toEqual([]);
    const replay = await replayCapsule(c, { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm });
    expect(replay.matches, replay.divergence?.message).toBe(true);
  }
  expect(checkSessionChainLinks(capsules)).toEqual([]);
  const index = JSON.parse(readFileSync(join(out, "sessions", `${capsules[0]!.index.runHash}.json`), "utf8")) as { runs: { segment: number; runHash: string; capsule: string }[] };
  expect(index.runs.map((r) => [r.segment, r.runHash, r.capsule])).toEqual(capsules.map((c, i) => [i + 1, c.index.runHash, paths[i]]));
}

/**
 * Drive one session with the SDK client through the mistakes agents make, each followed by a call that works
 * (`small` pack, `--step-timeout 300`): four runs, the first three ended by a spent budget, a path and a memory key
 * outside the pack's resources; the fourth goes on until the session ends.
 */
async function driveSession(client: Client): Promise<void> {
  const { tools, _meta } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(["wordcount", "spin", ...INFRA_CALLS.map((c) => c.name)]);
  expect(_meta?.["reach-wasm/run"]).toMatchObject({ segment: 1, callsLeft: 6 });
  expect(await client.getInstructions()).toMatch(/each run of this session may make 6 tool calls/);
  const call = (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }) as Promise<CallToolResult>;
  const good = async (name: string, args: Record<string, unknown>, want: Record<string, unknown>, segment: number): Promise<void> => {
    const r = await call(name, args);
    expect(r.structuredContent, `${name}: ${text(r)}`).toMatchObject(want);
    expect(r._meta?.["reach-wasm/run"]).toMatchObject({ segment });
  };
  await good("wordcount", { text: "one two three" }, { words: 3 }, 1);
  for (const c of INFRA_CALLS) await good(c.name, c.args, c.expect, 1);
  await expect(call("rm_rf")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: "rm_rf"') });
  const bad = await call("read_lines", { path: 7 });
  expect(bad.isError).toBe(true);
  expect(text(bad)).toMatch(/^PROTO_SCHEMA_VIOLATION: /);
  await expect(call("wordcount", { text: "x ".repeat(10_000_000) })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Request too large") });
  expect((await client.readResource({ uri: "workspace:///temp/notes.txt" })).contents[0]).toMatchObject({ text: "alpha\nbeta\ngamma\n" });
  // run 1 made its six calls: the seventh is refused, the run ends FAILED, the next call goes to run 2
  expect(text(await call("wordcount", { text: "x" }))).toMatch(/^POLICY_RATE_LIMIT_EXCEEDED: .*budget of 6 tool calls is spent\. Run 1 of this session ended FAILED .* its capsule is \S+\.capsule\.tar\.gz\. .*continues the session in run 2/);
  await good("wordcount", { text: "x" }, { words: 1 }, 2);
  await good("read_memory", { key: "notes/k" }, { value: { n: [1, 2] } }, 2);
  expect(text(await call("spin"))).toMatch(/^EXEC_TOOL_TIMEOUT: /);
  await good("read_lines", { path: "temp/notes.txt", start: 2 }, { lines: ["gamma"] }, 2);
  expect(text(await call("read_lines", { path: "secret/passwd" }))).toMatch(/^POLICY_VIOLATION: .* Run 2 of this session ended FAILED .*continues the session in run 3/);
  await good("wordcount", { text: "a b" }, { words: 2 }, 3);
  expect(text(await call("read_memory", { key: "secret" }))).toMatch(/^POLICY_VIOLATION: .* Run 3 of this session ended FAILED/);
  await good("read_memory", { key: "notes/k" }, { value: { n: [1, 2] } }, 4);
}

/** Start `mcp --http` and wait for its address on stderr. */
async function httpServer(cmd: string[], packDir: string, out: string, extra: string[]): Promise<{ child: ChildProcess; url: URL; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(cmd[0]!, [...cmd.slice(1), "mcp", packDir, "--out", out, "--http", "127.0.0.1:0", ...extra], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
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
  it("stdio: the SDK client makes the mistakes agents make between good calls; each is answered and the next call works; four runs, each capsule verifies and replays, the chain links up", async () => {
    const out = join(scratch, `out-stdio-${_runtime}`);
    const transport = new StdioClientTransport({ command: cmd[0]!, args: [...cmd.slice(1), "mcp", small, "--out", out, ...STEP_TIMEOUT], cwd: root, stderr: "pipe" });
    let stderr = "";
    transport.stderr!.on("data", (d: Buffer) => (stderr += d));
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    await driveSession(client);
    await client.close();
    const capsules = capsulesOf(stderr);
    expect(capsules.map((c) => c.status), stderr).toEqual(["FAILED", "FAILED", "FAILED", "COMPLETED"]);
    expectVerifiesAndReplays(cmd, capsules[3]!.path);
    await expectChain(capsules.map((c) => c.path), out);
  }, 240_000);

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

  it("HTTP: the token on every request; the agent's mistakes answered as over stdio (a 20 MB argument too); each MCP session its own chain (DELETE → capsule); SIGTERM ends open sessions ABORTED; verify and replay pass", async () => {
    const out = join(scratch, `out-http-${_runtime}`);
    const server = await httpServer(cmd, small, out, ["--token", TOKEN, ...STEP_TIMEOUT]);
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
      expect(capsules.map((c) => c.status), server.stderr()).toEqual(["FAILED", "FAILED", "FAILED", "COMPLETED", "ABORTED"]);
      expectVerifiesAndReplays(cmd, capsules[4]!.path);
      await expectChain(capsules.slice(0, 4).map((c) => c.path), out);
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
