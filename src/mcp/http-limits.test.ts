// Per-client limits with idle expiry on MCP over HTTP: a client (by address) holds at most maxSessionsPerClient
// sessions (429 beyond) and the server maxSessions (503 beyond); a session without a request for idleTimeoutMs
// expires — its session run ends COMPLETED and its capsule is handed to the sink exactly as for a DELETE (it verifies
// and replays) — so idle clients free their slots and no number of them keeps another client out. The clock is
// injected (no race with the real one); one case uses the real timer with a tiny timeout and generous margins.
import { request as httpRequest } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import type { EngineRun } from "../engine/engine.ts";
import { replayCapsule } from "../engine/replay.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { openInlineFirstSession } from "../host/engine-inline-session.ts";
import { openIsolatedSession } from "../host/engine-thread.ts";
import { serveHttp, readPackFiles, readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { McpHttpHandler, MCP_PATH } from "./http.ts";
import type { McpHttpOptions } from "./http.ts";
import type { McpEngine } from "./session-run.ts";
import { writeMcpPack } from "./_test-mcp.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-limits-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const files = await readPackFiles(writeMcpPack(join(scratch, "pack"), 12));
// sessions on this thread (no engine thread per session): the limits are the handler's, not the engine's
const engine: McpEngine = { openSession: (o) => openInlineFirstSession({ pack: { files } }, o, 60_000, (r, oo) => openIsolatedSession(r, oo)) };
const INFO = { name: "reach-wasm", version: "test" };

type Answer = { status: number; session: string | null; body: string };

/** One JSON-RPC POST from `from` (a loopback address: 127.0.0.2 is another client than 127.0.0.1). */
function rpc(url: string, from: string, message: object, session?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
    if (session !== undefined) headers["mcp-session-id"] = session;
    const req = httpRequest(url, { method: "POST", headers, localAddress: from, agent: false }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, session: (res.headers["mcp-session-id"] as string | undefined) ?? null, body }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(message));
  });
}

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
const call = (id: number, text: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wordcount", arguments: { text } } });

async function serve(options: Partial<McpHttpOptions>) {
  const runs: EngineRun[] = [];
  const expired: string[] = [];
  const handler = new McpHttpHandler({
    engine, info: INFO, token: null, sink: async (run) => (runs.push(run), `mem/${run.capsule.name}`),
    onSession: (e) => void (e.kind === "end" && e.expired ? expired.push(e.id) : undefined),
    ...options,
  });
  const server = await serveHttp(handler.fetch, { hostname: "127.0.0.1", port: 0 });
  const url = server.url + MCP_PATH;
  const open = async (from: string): Promise<Answer> => {
    const r = await rpc(url, from, INIT);
    if (r.session !== null) await rpc(url, from, { jsonrpc: "2.0", method: "notifications/initialized" }, r.session);
    return r;
  };
  return { handler, runs, expired, url, open, close: async () => void (await handler.close(true), await server.close()) };
}

async function checkCapsule(run: EngineRun): Promise<void> {
  const capsule = readRunCapsule(run.capsule.bytes);
  expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm });
  expect(replay.matches, replay.divergence?.message).toBe(true);
}

describe("MCP over HTTP: per-client limits and idle expiry", () => {
  it("one client cannot take every session; idle sessions expire (capsule written as if deleted) and make room", async () => {
    let now = 1_000;
    const t = await serve({ maxSessions: 3, maxSessionsPerClient: 2, idleTimeoutMs: 60_000, now: () => now });
    try {
      const a1 = await t.open("127.0.0.1");
      const a2 = await t.open("127.0.0.1");
      expect([a1.status, a2.status]).toEqual([200, 200]);
      const a3 = await t.open("127.0.0.1");
      expect(a3.status).toBe(429); // this client's share…
      expect(a3.body).toMatch(/2 sessions open/);
      const b1 = await t.open("127.0.0.2");
      expect(b1.status).toBe(200); // …is not another client's
      const c1 = await t.open("127.0.0.3");
      expect(c1.status).toBe(503); // the server is full: three idle sessions
      expect(t.handler.size).toBe(3);

      now += 59_000;
      expect(await t.handler.expireIdle()).toBe(0);
      const used = await rpc(t.url, "127.0.0.1", call(2, "still here"), a1.session!);
      expect(used.status).toBe(200); // a request keeps a session alive
      now += 1_000;
      expect(await t.handler.expireIdle()).toBe(2); // a2 and b1 were idle 60 s; a1 was used 1 s ago
      expect(t.handler.size).toBe(1);
      expect(t.expired.sort()).toEqual([a2.session, b1.session].sort());
      expect(t.runs.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED"]);
      for (const r of t.runs) await checkCapsule(r);
      expect((await rpc(t.url, "127.0.0.1", call(3, "x"), a2.session!)).status).toBe(404); // expired: a new session is needed

      const c2 = await t.open("127.0.0.3");
      expect(c2.status).toBe(200); // the slots came back
      expect((await rpc(t.url, "127.0.0.1", call(4, "one two"), a1.session!)).body).toMatch(/"words":2/);
    } finally {
      await t.close();
    }
  }, 60_000);

  it("a session the timer is expiring makes room for the next one at once (no 503 while its capsule is written)", async () => {
    let now = 1_000;
    const t = await serve({ maxSessions: 1, idleTimeoutMs: 60_000, now: () => now });
    try {
      expect((await t.open("127.0.0.1")).status).toBe(200);
      expect((await t.open("127.0.0.2")).status).toBe(503);
      now += 60_000;
      const sweeping = t.handler.expireIdle(); // as the timer does: not awaited by the next request
      const next = await t.open("127.0.0.2");
      expect(next.status, next.body).toBe(200);
      expect(await sweeping).toBe(1);
      expect(t.runs.map((r) => r.status)).toEqual(["COMPLETED"]);
      await checkCapsule(t.runs[0]!);
    } finally {
      await t.close();
    }
  }, 60_000);

  it("expires idle sessions on the real clock by itself (a tiny timeout, generous margins)", async () => {
    const t = await serve({ idleTimeoutMs: 100 });
    try {
      expect((await t.open("127.0.0.1")).status).toBe(200);
      // the session's end is reported after its capsule reached the sink and the session left the table: wait for
      // that report, not for the capsule (the sink is called before the session is removed)
      for (let i = 0; i < 1000 && t.expired.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(t.expired.length).toBe(1);
      expect(t.handler.size).toBe(0);
      expect(t.runs.map((r) => r.status)).toEqual(["COMPLETED"]);
      await checkCapsule(t.runs[0]!);
    } finally {
      await t.close();
    }
  }, 60_000);
});
