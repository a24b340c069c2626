/**
 * The Streamable HTTP transport of an MCP client (MCP 2025-03-26 and later), on web-standard `fetch`: every message
 * is a POST of one JSON-RPC object; the server answers `202` (a notification), `application/json` (one message) or
 * `text/event-stream` (messages as SSE `data:` events, read until the stream ends). The `mcp-session-id` the server
 * gives at `initialize` is sent with every later message and a `DELETE` ends the session. Transport metadata (the
 * session id, SSE event ids) is never part of what is recorded: only the JSON-RPC messages go to the client.
 * @module
 */
import type { McpTransport } from "../../protocol/mod.ts";
import type { FetchLike } from "../../protocol/mod.ts";

/** Largest answer body read (64 MiB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A Streamable HTTP connection to `url` (see the module notes). */
export class McpHttpTransport implements McpTransport {
  onmessage: ((message: unknown) => void) | null = null;
  onclose: ((reason: Error) => void) | null = null;
  readonly #url: string;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #fetch: FetchLike;
  readonly #abort = new AbortController();
  #session: string | null = null;
  #protocol: string | null = null;
  #closed = false;

  /**
   * @param url the server's endpoint
   * @param headers extra request headers the pack declares
   * @param fetchFn the fetch to use (default: the global one)
   */
  constructor(url: string, headers: Readonly<Record<string, string>> = {}, fetchFn?: FetchLike) {
    this.#url = url;
    this.#headers = headers;
    this.#fetch = fetchFn ?? ((input, init) => fetch(input, init));
  }

  async send(message: Record<string, unknown>): Promise<void> {
    if (this.#closed) throw new Error("the connection is closed");
    const headers: Record<string, string> = { ...this.#headers, "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (this.#session !== null) headers["mcp-session-id"] = this.#session;
    if (this.#protocol !== null) headers["mcp-protocol-version"] = this.#protocol;
    const res = await this.#fetch(this.#url, { method: "POST", headers, body: JSON.stringify(message), signal: this.#abort.signal });
    const session = res.headers.get("mcp-session-id");
    if (session !== null && this.#session === null) this.#session = session;
    if (res.status === 202 || res.status === 204) {
      await res.body?.cancel();
      return;
    }
    if (!res.ok) {
      const text = (await res.text().catch(() => "")).slice(0, 500);
      throw new Error(`HTTP ${res.status} from ${this.#url}${text === "" ? "" : `: ${text}`}`);
    }
    const type = res.headers.get("content-type") ?? "";
    // Read the answer in the background: send() resolves once the message was accepted.
    void this.#read(res, type.includes("text/event-stream")).catch((err: unknown) => {
      if (!this.#closed) this.onclose?.(err instanceof Error ? err : new Error(String(err)));
    });
  }

  async #read(res: Response, sse: boolean): Promise<void> {
    if (!sse) {
      const text = await boundedText(res);
      this.#deliver(text);
      return;
    }
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let total = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > MAX_BODY_BYTES) throw new Error(`the event stream is over ${MAX_BODY_BYTES} bytes`);
      buf += value;
      let cut: number;
      while ((cut = eventEnd(buf)) >= 0) {
        this.#event(buf.slice(0, cut));
        buf = buf.slice(cut).replace(/^(\r\n|\r|\n){1,2}/, "");
      }
    }
    if (buf.trim() !== "") this.#event(buf);
  }

  #event(block: string): void {
    const data = block.split(/\r\n|\r|\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
    if (data.length > 0) this.#deliver(data.join("\n"));
  }

  #deliver(text: string): void {
    if (text.trim() === "") return;
    const message: unknown = JSON.parse(text);
    for (const m of Array.isArray(message) ? message : [message]) {
      const r = (m as { result?: { protocolVersion?: unknown } }).result;
      if (this.#protocol === null && typeof r?.protocolVersion === "string") this.#protocol = r.protocolVersion;
      this.onmessage?.(m);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort();
    if (this.#session !== null) {
      const headers: Record<string, string> = { ...this.#headers, "mcp-session-id": this.#session };
      await this.#fetch(this.#url, { method: "DELETE", headers, signal: AbortSignal.timeout(2000) }).then((r) => r.body?.cancel(), () => undefined);
    }
  }
}

/** Where the first SSE event in `buf` ends (before its blank line), or -1. */
function eventEnd(buf: string): number {
  const m = /(\r\n|\r|\n)(\r\n|\r|\n)/.exec(buf);
  return m === null ? -1 : m.index;
}

async function boundedText(res: Response): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw new Error(`the answer is over ${MAX_BODY_BYTES} bytes`);
  const text = await res.text();
  if (text.length > MAX_BODY_BYTES) throw new Error(`the answer is over ${MAX_BODY_BYTES} bytes`);
  return text;
}
