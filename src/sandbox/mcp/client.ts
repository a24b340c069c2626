/**
 * A small MCP client over any {@link McpTransport}: `initialize` (no client capabilities, so a server never calls
 * back for roots, sampling or elicitation), `tools/list` (all pages) and `tools/call`. Only the answer to our own
 * request is used: server notifications are counted and dropped, a server's `ping` is answered, any other request
 * from it is refused (-32601). Every answer has its scrub applied to every string before anyone sees it (a stdio
 * server's scratch path, a secret's value: `scrub.ts`), so a host path or a secret never reaches the tape.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import type { McpTransport } from "../../protocol/mod.ts";
import type { JsonObject } from "../../protocol/mod.ts";
import { scrubJson } from "./scrub.ts";
import type { Scrub } from "./scrub.ts";

/** The protocol version reach-wasm asks for (servers answer with the one they speak). */
export const MCP_PROTOCOL_VERSION = "2025-11-25";
/** Most tools/list pages read from one server. */
const MAX_PAGES = 100;

/** One tool as a server lists it. */
export type McpListedTool = { name: string; description?: string; inputSchema?: JsonObject; outputSchema?: JsonObject; annotations?: JsonObject };

type Pending = { resolve: (v: JsonObject) => void; reject: (e: Error) => void; method: string };

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A connected MCP client (see the module notes). */
export class McpClient {
  readonly server: string;
  /** The server's `initialize` result (serverInfo, capabilities, protocolVersion), scrubbed. */
  initialized: JsonObject | null = null;
  /** Notifications received and dropped (metrics only). */
  notifications = 0;
  readonly #transport: McpTransport;
  readonly #scrub: Scrub;
  readonly #pending = new Map<number, Pending>();
  readonly #exitNote: () => string;
  #nextId = 1;
  #closed: Error | null = null;

  /**
   * @param server the server's name in the pack (messages)
   * @param transport the connection
   * @param scrub what to take out of every answer
   * @param exitNote more words for the error when the connection ends (e.g. the stderr tail)
   */
  constructor(server: string, transport: McpTransport, scrub: Scrub, exitNote: () => string = () => "") {
    this.server = server;
    this.#transport = transport;
    this.#scrub = scrub;
    this.#exitNote = exitNote;
    transport.onmessage = (m) => this.#receive(m);
    transport.onclose = (reason) => this.#fail(reason);
  }

  /**
   * Connect: `initialize`, then `notifications/initialized`.
   * @param signal gives up waiting
   * @returns the client
   */
  async initialize(signal?: AbortSignal): Promise<this> {
    const result = await this.request("initialize", { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "reach-wasm", version: "1" } }, signal);
    this.initialized = result;
    await this.#transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return this;
  }

  /**
   * Every tool the server lists (following `nextCursor`).
   * @param signal gives up waiting
   * @returns the tools
   */
  async listTools(signal?: AbortSignal): Promise<McpListedTool[]> {
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.request("tools/list", cursor === undefined ? {} : { cursor }, signal);
      const list = r["tools"];
      if (!Array.isArray(list)) throw this.#bad("tools/list answered without a tools array");
      for (const t of list) if (isObject(t) && typeof t["name"] === "string") tools.push(t as unknown as McpListedTool);
      const next = r["nextCursor"];
      if (typeof next !== "string" || next === "") return tools;
      cursor = next;
    }
    throw this.#bad(`tools/list gave more than ${MAX_PAGES} pages`);
  }

  /**
   * Call a tool; the whole result (content of every type, structuredContent, isError, _meta), scrubbed.
   * @param tool the server's tool name
   * @param args its arguments
   * @param signal stops waiting (the server is sent notifications/cancelled); the error is the signal's reason
   * @returns the CallToolResult
   */
  callTool(tool: string, args: JsonObject, signal?: AbortSignal): Promise<JsonObject> {
    return this.request("tools/call", { name: tool, arguments: args }, signal);
  }

  /**
   * One JSON-RPC request.
   * @param method the method
   * @param params its params
   * @param signal stops waiting
   * @returns the result object
   */
  request(method: string, params: JsonObject, signal?: AbortSignal): Promise<JsonObject> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    if (signal?.aborted === true) return Promise.reject(reasonOf(signal));
    const id = this.#nextId++;
    return new Promise<JsonObject>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(id)) return;
        void this.#transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "reach-wasm stopped the call" } }).catch(() => undefined);
        reject(reasonOf(signal!));
      };
      const done = (): void => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(id, { method, resolve: (v) => (done(), resolve(v)), reject: (e) => (done(), reject(e)) });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#transport.send({ jsonrpc: "2.0", id, method, params }).catch((err: unknown) => {
        const p = this.#pending.get(id);
        if (p === undefined) return;
        this.#pending.delete(id);
        p.reject(this.#bad(`sending ${method} failed: ${err instanceof Error ? err.message : String(err)}`));
      });
    });
  }

  /** End the connection (stops a stdio server's process group). */
  async close(): Promise<void> {
    this.#fail(new ReachError("EXEC_TOOL_FAILED", `the MCP server "${this.server}" was closed`));
    await this.#transport.close();
  }

  #receive(raw: unknown): void {
    if (!isObject(raw)) return;
    const m = raw;
    if (typeof m["method"] === "string") {
      if (m["id"] === undefined) {
        this.notifications++;
        return;
      }
      const answer = m["method"] === "ping" ? { result: {} } : { error: { code: -32601, message: `reach-wasm does not answer ${m["method"]}` } };
      void this.#transport.send({ jsonrpc: "2.0", id: m["id"] as string | number, ...answer }).catch(() => undefined);
      return;
    }
    if (typeof m["id"] !== "number") return;
    const p = this.#pending.get(m["id"]);
    if (p === undefined) return;
    this.#pending.delete(m["id"]);
    const clean = scrubJson(m, this.#scrub) as JsonObject;
    if (isObject(clean["error"])) {
      const e = clean["error"];
      p.reject(new ReachError("EXEC_TOOL_FAILED", `the MCP server "${this.server}" answered ${p.method} with error ${String(e["code"])}: ${String(e["message"]).slice(0, 2000)}`, { details: { server: this.server, method: p.method, rpcCode: typeof e["code"] === "number" ? e["code"] : null } }));
    } else if (isObject(clean["result"])) {
      p.resolve(clean["result"]);
    } else {
      p.reject(this.#bad(`its answer to ${p.method} has neither result nor error`));
    }
  }

  #fail(reason: Error): void {
    if (this.#closed !== null) return;
    const note = this.#exitNote();
    const scrubbed = scrubJson(`${reason.message}${note === "" ? "" : `; its stderr ended: ${note}`}`, this.#scrub) as string;
    this.#closed = reason instanceof ReachError ? reason : new ReachError("EXEC_TOOL_FAILED", `the connection to the MCP server "${this.server}" ended: ${scrubbed}`, { details: { server: this.server } });
    for (const p of this.#pending.values()) p.reject(this.#closed);
    this.#pending.clear();
  }

  #bad(what: string): ReachError {
    return new ReachError("EXEC_TOOL_FAILED", `the MCP server "${this.server}": ${what}`, { details: { server: this.server } });
  }
}

function reasonOf(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new ReachError("EXEC_ABORTED", "the call was stopped", { details: { reason: "aborted" } });
}
