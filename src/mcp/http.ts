/**
 * MCP over Streamable HTTP (the SDK's web-standard transport), as one `fetch` handler for `serveHttp`: each MCP
 * session (the transport's `Mcp-Session-Id`) is its own session run, opened at `initialize` on its own engine thread
 * and ended — its capsule handed to the sink — when the client deletes the session or the server closes.
 *
 * Guards, checked on every request before the transport sees it: the bearer token when one is configured
 * (`Authorization: Bearer …`, compared in constant time; 401 otherwise); without a token the server listens on loopback
 * only, and a `Host` or `Origin` that is not a loopback name is refused (403: a web page that rebinds its DNS name to
 * 127.0.0.1 cannot drive the tools). At most `maxSessions` sessions at once (503 beyond).
 * @module
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { toReachError } from "../protocol/errors.ts";
import type { SessionBudget, SessionScope } from "../engine/session.ts";
import { SESSION_START } from "../engine/session-chain.ts";
import { JsonRpcSniffer, MAX_MESSAGE_BYTES, MAX_SCANNED_BYTES, oversizedAnswer } from "./limits.ts";
import { createMcpServer } from "./server.ts";
import type { McpServerInfo } from "./server.ts";
import { McpSessionRun } from "./session-run.ts";
import type { McpEnded, McpEngine, McpRunSink, McpSegment } from "./session-run.ts";

/** The path MCP is served on. */
export const MCP_PATH = "/mcp";

/** Sessions at once, by default. */
export const DEFAULT_MAX_SESSIONS = 16;

/** How the HTTP face is set up. */
export type McpHttpOptions = {
  engine: McpEngine;
  sink: McpRunSink;
  info: McpServerInfo;
  /** The bearer token every request must carry; null: none (the CLI allows that on loopback only). */
  token: string | null;
  /** Refuse a `Host` or `Origin` that is not a loopback name (set when listening on loopback without a token). */
  loopbackOnly: boolean;
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
  /** Told when a session opens and when it ended (for stderr). */
  onSession?: (event: { kind: "open"; id: string } | { kind: "end"; id: string; ended: McpEnded }) => void;
};

type Entry = { id: string | null; transport: WebStandardStreamableHTTPServerTransport; server: Server; run: Promise<McpSessionRun> | null; ending: Promise<McpEnded> | null };

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

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether a `Host` value (`name[:port]`) names this machine's loopback interface. */
function loopbackHost(host: string): boolean {
  const name = (host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "")).toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

function sessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The Streamable HTTP face: a `fetch` handler and the sessions behind it.
 * @example
 * const mcp = new McpHttpHandler({ engine, sink, info, token: null, loopbackOnly: true });
 * const server = await serveHttp(mcp.fetch, { hostname: "127.0.0.1", port: 0 });
 * // … later: every session ends, its capsule is written
 * await mcp.close(false); await server.close();
 */
export class McpHttpHandler {
  readonly #options: McpHttpOptions;
  readonly #sessions = new Map<string, Entry>();
  #pending = 0;
  #closing = false;

  /** @param options engine, sink, token and guards */
  constructor(options: McpHttpOptions) {
    this.#options = options;
  }

  /** Sessions open now. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Answer one HTTP request (pass to `serveHttp`).
   * @param request the request
   * @returns the response
   */
  readonly fetch = async (request: Request): Promise<Response> => {
    const refused = this.#guard(request);
    if (refused !== null) return refused;
    if (new URL(request.url).pathname !== MCP_PATH) return jsonRpcError(404, -32000, `Not Found: MCP is served at ${MCP_PATH}`);
    if (this.#closing) return jsonRpcError(503, -32000, "Service Unavailable: the server is shutting down");
    const id = request.headers.get("mcp-session-id");
    const entry = id === null ? undefined : this.#sessions.get(id);
    if (id !== null && entry === undefined) return jsonRpcError(404, -32001, "Session not found: it ended or never existed; initialize a new session");
    const bounded = request.method === "POST" ? await boundedRequest(request) : request;
    if (bounded instanceof Response) return bounded;
    if (entry !== undefined) return await entry.transport.handleRequest(bounded);
    if (request.method !== "POST") return jsonRpcError(400, -32000, "Bad Request: start a session with a POST of an initialize request");
    const max = this.#options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    if (this.#sessions.size + this.#pending >= max) return jsonRpcError(503, -32000, `Service Unavailable: ${max} sessions are open; end one (DELETE) and try again`);
    this.#pending++;
    try {
      return await this.#start(bounded);
    } finally {
      this.#pending--;
    }
  };

  #guard(request: Request): Response | null {
    const { token, loopbackOnly } = this.#options;
    if (token !== null) {
      const auth = request.headers.get("authorization") ?? "";
      const given = /^Bearer +(.+)$/i.exec(auth)?.[1] ?? null;
      if (given === null || !sameToken(given.trim(), token)) {
        return jsonRpcError(401, -32000, "Unauthorized: send the server's token as Authorization: Bearer <token>", { "www-authenticate": 'Bearer realm="reach-wasm mcp"' });
      }
    }
    if (loopbackOnly) {
      const host = request.headers.get("host");
      const origin = request.headers.get("origin");
      let originHost: string | null = null;
      try {
        originHost = origin === null || origin === "null" ? null : new URL(origin).host;
      } catch {
        originHost = "invalid";
      }
      if ((host !== null && !loopbackHost(host)) || (originHost !== null && !loopbackHost(originHost))) {
        return jsonRpcError(403, -32000, "Forbidden: this server answers loopback clients only (Host and Origin must be localhost or 127.0.0.1); configure a token to serve others");
      }
    }
    return null;
  }

  async #start(request: Request): Promise<Response> {
    let opened: (run: Promise<McpSessionRun>) => void = () => {};
    const run = new Promise<McpSessionRun>((resolve, reject) => (opened = (p) => void p.then(resolve, reject)));
    const entry: Entry = { id: null, transport: null!, server: null!, run: null, ending: null };
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
        this.#options.onSession?.({ kind: "open", id });
      },
      onsessionclosed: async () => void (await this.#end(entry, false)),
    });
    entry.transport.onclose = () => void this.#end(entry, this.#options.signal?.aborted === true);
    entry.server = createMcpServer(run, this.#options.info, { budget: this.#options.budget ?? null, scope: this.#options.scope ?? null });
    run.catch(() => undefined);
    await entry.server.connect(entry.transport);
    const response = await entry.transport.handleRequest(request);
    if (entry.id === null) await entry.server.close(); // not an initialize: nothing to keep
    return response;
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
        this.#options.onSession?.({ kind: "end", id: entry.id, ended });
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
    const entries = [...this.#sessions.values()];
    const ended = await Promise.all(entries.map((e) => this.#end(e, aborted)));
    await Promise.all(entries.map((e) => e.server.close().catch(() => undefined)));
    return ended;
  }
}
