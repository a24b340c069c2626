/**
 * MCP over Streamable HTTP (the SDK's web-standard transport), as one `fetch` handler for `serveHttp`: each MCP
 * session (the transport's `Mcp-Session-Id`) is its own session run, opened at `initialize` on its own engine thread
 * and ended — its capsule handed to the sink — when the client deletes the session or the server closes.
 *
 * Guards: `Host`, `Origin` and the per-client request limit are the HTTP server's (`serveHttp`, for every face: a web
 * page that rebinds its DNS name to 127.0.0.1, or any page on another origin, cannot drive the tools). Here, on every
 * request before the transport sees it: the bearer token when one is configured (`Authorization: Bearer …`, compared
 * in constant time; 401 otherwise). Sessions: at most `maxSessions` at once (503 beyond) and `maxSessionsPerClient`
 * of one client (429 beyond, by the client's address); a session without a request for `idleTimeoutMs` (measured on
 * the real clock, never recorded) expires — its session run ends and its capsule is written exactly as if the client
 * had deleted the session — so that no number of idle clients keeps others out.
 * @module
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { toReachError } from "../protocol/mod.ts";
import type { SessionBudget, SessionScope } from "../engine/mod.ts";
import { SESSION_START } from "../engine/mod.ts";
import { JsonRpcSniffer, MAX_MESSAGE_BYTES, MAX_SCANNED_BYTES, oversizedAnswer } from "./limits.ts";
import { createMcpServer } from "./server.ts";
import type { McpServerInfo } from "./server.ts";
import { McpSessionRun } from "./session-run.ts";
import type { McpEnded, McpEngine, McpRunSink, McpSegment } from "./session-run.ts";

/** Who sent a request, as the HTTP server tells it (the port this face needs; `src/platform/http-server.ts` implements it). */
export type ClientInfo = {
  /** What per-client limits count by (an address, or an IPv6 address's /64 prefix). */
  readonly key: string;
};

/** The path MCP is served on. */
export const MCP_PATH = "/mcp";

/** Sessions at once, by default. */
export const DEFAULT_MAX_SESSIONS = 16;

/** Sessions of one client (by address) at once, by default. */
export const DEFAULT_MAX_SESSIONS_PER_CLIENT = 4;

/** How long a session may go without a request before it expires, by default: 10 minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;

/** How the HTTP face is set up. */
export type McpHttpOptions = {
  engine: McpEngine;
  sink: McpRunSink;
  info: McpServerInfo;
  /** The bearer token every request must carry; null: none (the CLI allows that on loopback only). */
  token: string | null;
  /** Aborts every session run (a signal). */
  signal?: AbortSignal;
  /** Sessions at once (default {@link DEFAULT_MAX_SESSIONS}). */
  maxSessions?: number;
  /** What each run may spend (for the server's instructions; each MCP session's runs have the pack's budget). */
  budget?: SessionBudget;
  /** What the runs' calls may reach (for the server's instructions). */
  scope?: SessionScope;
  /** Told after each run of an MCP session ended (every run of that session so far: a session index). */
  onSegment?: (segments: readonly McpSegment[]) => void | Promise<void>;
  /** Sessions of one client at once (default {@link DEFAULT_MAX_SESSIONS_PER_CLIENT}). */
  maxSessionsPerClient?: number;
  /** A session without a request for this long expires (default {@link DEFAULT_IDLE_TIMEOUT_MS}). */
  idleTimeoutMs?: number;
  /** The clock idleness is measured on, in ms (default `performance.now`; tests pass their own). */
  now?: () => number;
  /** Told when a session opens and when it ended (for stderr); `expired` when it ended for being idle. */
  onSession?: (event: { kind: "open"; id: string; client: string } | { kind: "end"; id: string; ended: McpEnded; expired: boolean }) => void;
};

type Entry = {
  id: string | null;
  client: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  run: Promise<McpSessionRun> | null;
  ending: Promise<McpEnded> | null;
  /** When the last request on the session started or ended. */
  lastActive: number;
  /** Requests on the session being answered now (a held event stream is not one). */
  busy: number;
  expired: boolean;
};

/**
 * A POST's body read whole when it is at most {@link MAX_MESSAGE_BYTES}, as a request the transport can read again;
 * else the answer to an oversized message (`limits.ts`), its bytes streamed past a sniffer (at most
 * {@link MAX_SCANNED_BYTES} are read). A stream that fails is a 400.
 */
async function boundedRequest(request: Request): Promise<Request | Response> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  const reader = request.body?.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let sniffer: JsonRpcSniffer | null = null;
  try {
    for (;;) {
      if (reader === undefined) break;
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (sniffer === null && size > MAX_MESSAGE_BYTES) {
        sniffer = new JsonRpcSniffer();
        for (const p of parts) sniffer.push(p);
        parts.length = 0;
      }
      if (sniffer === null) parts.push(value);
      else sniffer.push(value);
      if (size > MAX_SCANNED_BYTES) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch {
    return jsonRpcError(400, -32700, "Parse error: the request body could not be read");
  }
  if (sniffer === null) {
    const body = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      body.set(p, at);
      at += p.length;
    }
    return new Request(request.url, { method: request.method, headers: request.headers, body });
  }
  const complete = size <= MAX_SCANNED_BYTES || declared === size;
  const answer = oversizedAnswer(sniffer.result(), size, complete);
  // A request whose id was read gets its error as any answer (200): the client's call fails with it, the session goes on.
  if (answer !== null && "id" in answer && answer.id !== null) return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
  return new Response(answer === null ? null : JSON.stringify(answer), { status: answer === null ? 202 : 413, headers: answer === null ? {} : { "content-type": "application/json" } });
}

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), { status, headers: { "content-type": "application/json", ...headers } });
}

/** Constant-time comparison of the presented token with the expected one. */
function sameToken(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i]!;
  return diff === 0;
}

function sessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The Streamable HTTP face: a `fetch` handler and the sessions behind it.
 * @example
 * const mcp = new McpHttpHandler({ engine, sink, info, token: null });
 * const server = await serveHttp(mcp.fetch, { hostname: "127.0.0.1", port: 0 });
 * // … later: every session ends, its capsule is written
 * await mcp.close(false); await server.close();
 */
export class McpHttpHandler {
  readonly #options: McpHttpOptions;
  readonly #sessions = new Map<string, Entry>();
  /** Sessions being opened, by client. */
  readonly #pending = new Map<string, number>();
  readonly #now: () => number;
  #closing = false;
  #sweeper: ReturnType<typeof setInterval> | null = null;

  /** @param options engine, sink, token, limits and clock */
  constructor(options: McpHttpOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Sessions open now. */
  get size(): number {
    return this.#sessions.size;
  }

  get #idleMs(): number {
    return this.#options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  }

  /**
   * Answer one HTTP request (pass to `serveHttp`).
   * @param request the request
   * @param client who sent it (from `serveHttp`; absent: one local client)
   * @returns the response
   */
  readonly fetch = async (request: Request, client?: ClientInfo): Promise<Response> => {
    const refused = this.#authorize(request);
    if (refused !== null) return refused;
    if (new URL(request.url).pathname !== MCP_PATH) return jsonRpcError(404, -32000, `Not Found: MCP is served at ${MCP_PATH}`);
    if (this.#closing) return jsonRpcError(503, -32000, "Service Unavailable: the server is shutting down");
    const id = request.headers.get("mcp-session-id");
    const entry = id === null ? undefined : this.#sessions.get(id);
    if (id !== null && (entry === undefined || entry.expired)) return jsonRpcError(404, -32001, "Session not found: it ended, expired or never existed; initialize a new session");
    const bounded = request.method === "POST" ? await boundedRequest(request) : request;
    if (bounded instanceof Response) return bounded;
    if (entry !== undefined) return await this.#handle(entry, bounded);
    if (request.method !== "POST") return jsonRpcError(400, -32000, "Bad Request: start a session with a POST of an initialize request");
    await this.expireIdle();
    const key = client?.key ?? "local";
    const refusal = this.#roomFor(key);
    if (refusal !== null) return refusal;
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
    try {
      return await this.#start(bounded, key);
    } finally {
      const left = (this.#pending.get(key) ?? 1) - 1;
      if (left <= 0) this.#pending.delete(key);
      else this.#pending.set(key, left);
    }
  };

  /** A request on an open session: it is busy (never idle) until the answer is ready. */
  async #handle(entry: Entry, request: Request): Promise<Response> {
    const counts = request.method !== "GET"; // a GET holds an event stream open: the client waits, it is not active
    entry.lastActive = this.#now();
    if (counts) entry.busy++;
    try {
      return await entry.transport.handleRequest(request);
    } finally {
      if (counts) entry.busy--;
      entry.lastActive = this.#now();
    }
  }

  /** Null when a session of `key` may open now; else the refusal (503 all taken, 429 this client's share taken). */
  #roomFor(key: string): Response | null {
    const max = this.#options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    const perClient = this.#options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT;
    let pending = 0;
    for (const n of this.#pending.values()) pending += n;
    const idle = Math.ceil(this.#idleMs / 1000);
    const retry = { "retry-after": String(Math.min(idle, 60)) };
    if (this.#sessions.size + pending >= max) return jsonRpcError(503, -32000, `Service Unavailable: ${max} sessions are open; end one (DELETE), or wait: a session idle for ${idle} s expires`, retry);
    let mine = this.#pending.get(key) ?? 0;
    for (const e of this.#sessions.values()) if (e.client === key) mine++;
    if (mine >= perClient) return jsonRpcError(429, -32000, `Too Many Requests: this client has ${perClient} sessions open, as many as one client may; end one (DELETE) first`, retry);
    return null;
  }

  /** The bearer token, when one is configured. */
  #authorize(request: Request): Response | null {
    const { token } = this.#options;
    if (token === null) return null;
    const auth = request.headers.get("authorization") ?? "";
    const given = /^Bearer +(.+)$/i.exec(auth)?.[1] ?? null;
    if (given === null || !sameToken(given.trim(), token)) {
      return jsonRpcError(401, -32000, "Unauthorized: send the server's token as Authorization: Bearer <token>", { "www-authenticate": 'Bearer realm="reach-wasm mcp"' });
    }
    return null;
  }

  /**
   * End every session that has had no request for the idle timeout (its capsule is written, as for a DELETE). Called
   * on a timer while sessions are open, and before a session is opened.
   * @returns how many sessions expired
   */
  async expireIdle(): Promise<number> {
    const now = this.#now();
    const held = [...this.#sessions.values()];
    const idle = held.filter((e) => e.ending === null && e.busy === 0 && now - e.lastActive >= this.#idleMs);
    for (const e of idle) e.expired = true;
    // sessions the timer began to expire are still held until their capsules are written: wait for them too, so a
    // caller deciding whether there is room sees them gone
    const expiring = held.filter((e) => e.expired && !idle.includes(e)).map((e) => e.ending);
    await Promise.all([...expiring, ...idle.map(async (e) => {
      await this.#end(e, false);
      await e.server.close().catch(() => undefined); // its event stream, if one is held, ends too
    })]);
    return idle.length;
  }

  #watchIdle(): void {
    if (this.#sweeper !== null || this.#closing) return;
    const every = Math.max(10, Math.min(30_000, Math.floor(this.#idleMs / 4)));
    this.#sweeper = setInterval(() => {
      if (this.#sessions.size === 0) this.#unwatch();
      else void this.expireIdle();
    }, every);
    const t = this.#sweeper as unknown as { unref?: () => void };
    if (typeof t === "object" && typeof t.unref === "function") t.unref();
  }

  #unwatch(): void {
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
  }

  async #start(request: Request, client: string): Promise<Response> {
    let opened: (run: Promise<McpSessionRun>) => void = () => {};
    const run = new Promise<McpSessionRun>((resolve, reject) => (opened = (p) => void p.then(resolve, reject)));
    const entry: Entry = { id: null, client, transport: null!, server: null!, run: null, ending: null, lastActive: this.#now(), busy: 1, expired: false };
    entry.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: sessionId,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_MESSAGE_BYTES + 1, // bounded here first (boundedRequest), with an answer for the id
      onsessioninitialized: (id) => {
        entry.id = id;
        entry.run = run;
        this.#sessions.set(id, entry);
        const { engine, sink, signal } = this.#options;
        const options = { engine, ...(signal === undefined ? {} : { signal }), ...(this.#options.onSegment === undefined ? {} : { onSegment: this.#options.onSegment }) };
        opened(engine.openSession({ session: SESSION_START, ...(signal === undefined ? {} : { signal }) }).then((s) => new McpSessionRun(s, sink, options)));
        this.#options.onSession?.({ kind: "open", id, client });
        this.#watchIdle();
      },
      onsessionclosed: async () => void (await this.#end(entry, false)),
    });
    entry.transport.onclose = () => void this.#end(entry, this.#options.signal?.aborted === true);
    entry.server = createMcpServer(run, this.#options.info, { budget: this.#options.budget ?? null, scope: this.#options.scope ?? null });
    run.catch(() => undefined);
    await entry.server.connect(entry.transport);
    try {
      const response = await entry.transport.handleRequest(request);
      if (entry.id === null) await entry.server.close(); // not an initialize: nothing to keep
      return response;
    } finally {
      entry.busy--;
      entry.lastActive = this.#now();
    }
  }

  #end(entry: Entry, aborted: boolean): Promise<McpEnded> {
    entry.ending ??= (async (): Promise<McpEnded> => {
      let ended: McpEnded;
      if (entry.run === null) ended = { run: null, capsule: null, error: null };
      else {
        try {
          const run = await entry.run;
          if (!aborted) await run.idle(); // a DELETE: what was asked before is answered, then the run ends
          ended = await run.end(aborted);
          await run.idle(); // the calls that came before the end get their answers before the transport closes
          await new Promise((resolve) => setTimeout(resolve, 0));
        } catch (err) {
          ended = { run: null, capsule: null, error: toReachError(err, "EXEC_RESOURCE_UNAVAILABLE") };
        }
      }
      if (entry.id !== null) {
        this.#sessions.delete(entry.id);
        this.#options.onSession?.({ kind: "end", id: entry.id, ended, expired: entry.expired });
      }
      return ended;
    })();
    return entry.ending;
  }

  /**
   * End every session (their capsules are written) and close their transports; later requests get 503.
   * @param aborted end them ABORTED (a signal) rather than COMPLETED
   * @returns how each ended
   */
  async close(aborted: boolean): Promise<McpEnded[]> {
    this.#closing = true;
    this.#unwatch();
    const entries = [...this.#sessions.values()];
    const ended = await Promise.all(entries.map((e) => this.#end(e, aborted)));
    await Promise.all(entries.map((e) => e.server.close().catch(() => undefined)));
    return ended;
  }
}
