/**
 * The largest MCP message the server reads, and what it answers to a larger one. A message over
 * {@link MAX_MESSAGE_BYTES} is never held whole: its bytes are streamed through a {@link JsonRpcSniffer}, which keeps
 * only the top-level `id` and `method` it sees (bounded), and the request is answered with a JSON-RPC error for its
 * id (MCP clients put the id anywhere — the official SDK writes it last). Nothing of it runs or is recorded, and the
 * server goes on serving. Over stdio (`stdio-transport.ts`) and over Streamable HTTP (`http.ts`) alike.
 * @module
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Largest message read (bytes of one stdio line or one HTTP request body): 4 MiB, as the SDK's HTTP default. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Most bytes of an oversized HTTP body read to find its id (the rest is not read: the answer names no id). */
export const MAX_SCANNED_BYTES = 256 * 1024 * 1024;

/** Longest `id` or `method` value kept (as JSON text). */
const MAX_CAPTURE = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** What a sniffer found at the top level of a message: its `id` and `method`, when present and readable. */
export type Sniffed = { id: string | number | null | undefined; method: string | undefined };

/**
 * Reads a JSON object's top-level `id` and `method` from its bytes as they stream past, in bounded memory: it tracks
 * strings and nesting, and keeps the raw text of those two values only (at most {@link MAX_CAPTURE} bytes each).
 * @example const s = new JsonRpcSniffer(); s.push(bytes); s.result() // { id: 7, method: "tools/call" }
 */
export class JsonRpcSniffer {
  #depth = 0;
  #inString = false;
  #escape = false;
  #notObject = false;
  /** At depth 1: reading a key, or a value (whose key is `#key`). */
  #expectKey = true;
  #key: number[] | null = null;
  #keyText = "";
  #capture: number[] | null = null;
  #id: string | undefined;
  #method: string | undefined;

  /**
   * Feed the next bytes.
   * @param bytes a chunk of the message
   */
  push(bytes: Uint8Array): void {
    if (this.#notObject) return;
    for (let i = 0; i < bytes.length; i++) this.#byte(bytes[i]!);
  }

  #byte(b: number): void {
    if (this.#depth === 0) {
      if (b === 0x7b) this.#depth = 1;
      else if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0xef && b !== 0xbb && b !== 0xbf) this.#notObject = true;
      return;
    }
    const top = this.#depth === 1;
    if (top && this.#capture !== null && this.#capture.length <= MAX_CAPTURE) this.#capture.push(b);
    if (this.#inString) {
      if (this.#escape) this.#escape = false;
      else if (b === BACKSLASH) this.#escape = true;
      else if (b === QUOTE) {
        this.#inString = false;
        if (top && this.#key !== null) this.#endKey();
        return;
      }
      if (top && this.#key !== null && this.#key.length <= 16) this.#key.push(b);
      return;
    }
    if (b === QUOTE) {
      this.#inString = true;
      if (top && this.#expectKey) this.#key = [];
    } else if (b === 0x7b || b === 0x5b) this.#depth++;
    else if (b === 0x7d || b === 0x5d) {
      this.#depth--;
      if (this.#depth === 0) this.#endValue();
    } else if (top && b === 0x3a && this.#expectKey) {
      this.#expectKey = false;
      this.#capture = this.#keyText === "id" || this.#keyText === "method" ? [] : null;
    } else if (top && b === 0x2c) this.#endValue();
  }

  #endKey(): void {
    this.#keyText = this.#key!.length <= 16 ? String.fromCharCode(...this.#key!) : "";
    this.#key = null;
  }

  /** A top-level value ended (at its `,` or the closing `}`, the last byte captured). */
  #endValue(): void {
    const raw = this.#capture;
    this.#capture = null;
    this.#expectKey = true;
    if (raw === null || raw.length > MAX_CAPTURE) return;
    const text = new TextDecoder().decode(new Uint8Array(raw.slice(0, -1))).trim();
    if (this.#keyText === "id") this.#id = text;
    else this.#method = text;
  }

  /**
   * What was found so far.
   * @returns the id (a string or number; null when written as null; undefined when absent or unreadable) and method
   */
  result(): Sniffed {
    const parse = (t: string | undefined): unknown => {
      if (t === undefined) return undefined;
      try {
        return JSON.parse(t);
      } catch {
        return undefined;
      }
    };
    const id = parse(this.#id);
    const method = parse(this.#method);
    return {
      id: typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) || id === null ? id : undefined,
      method: typeof method === "string" ? method : undefined,
    };
  }
}

/**
 * The answer to an oversized message: a JSON-RPC error for its id when it is a request whose id was read
 * (`-32602`: its parameters are too large), an error with id null when no id could be read (`-32600`), and none for a
 * notification (JSON-RPC never answers those).
 * @param sniffed what the sniffer found
 * @param size the bytes read of it (at least)
 * @param complete whether the whole message was read (else `size` is a lower bound)
 * @param max the limit it is over
 * @returns the answer, or null for a notification
 * @example oversizedAnswer({ id: 3, method: "tools/call" }, 20_000_000, true)
 */
export function oversizedAnswer(sniffed: Sniffed, size: number, complete: boolean, max = MAX_MESSAGE_BYTES): JSONRPCMessage | null {
  const what = `${complete ? "" : "more than "}${size} bytes`;
  const advice = `this server reads messages of at most ${max} bytes; nothing of it ran or was recorded, and the session goes on. Send smaller arguments (split large data across calls, or keep it in the pack's workspace and pass its path)`;
  if (sniffed.id !== undefined && sniffed.id !== null && sniffed.method !== undefined) {
    return { jsonrpc: "2.0", id: sniffed.id, error: { code: ErrorCode.InvalidParams, message: `Request too large: this ${sniffed.method} request is ${what}; ${advice}.` } };
  }
  if (sniffed.method !== undefined && sniffed.id === undefined && complete) return null;
  return { jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message: `Message too large: a message of ${what} was dropped (its id could not be read); ${advice}.` } } as unknown as JSONRPCMessage;
}
