/**
 * MCP over stdio with bounded messages: newline-delimited JSON-RPC on the process's stdin and stdout, as the SDK's
 * `StdioServerTransport` speaks it, except that a line longer than {@link MAX_MESSAGE_BYTES} is never buffered whole
 * and never stops the server (the SDK's transport throws on a line over 10 MB and closes). Such a line is streamed
 * through a {@link JsonRpcSniffer} and answered with a JSON-RPC error for its id (`limits.ts`); reading goes on with
 * the next line. A line that is not JSON, or not a JSON-RPC message, is reported to `onerror` as a `SyntaxError` or a
 * `ZodError`, as the SDK's transport reports it (`answerMalformed` answers those). A failing stdout (EPIPE: the client
 * closed its end, or died, while a call ran) closes the transport as stdin's end would — the session's run ends and
 * its capsule is written — and nothing more is written. Web-standard: the CLI hands in the streams.
 * @module
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { JsonRpcSniffer, MAX_MESSAGE_BYTES, oversizedAnswer } from "./limits.ts";
import { concatBytes } from "../canonical/mod.ts";

/** The byte streams a stdio transport reads and writes: `process.stdin` and `process.stdout`, or test doubles. */
export type StdioStreams = {
  input: {
    on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
    on(event: "error", listener: (error: Error) => void): unknown;
    off(event: "data", listener: (chunk: Uint8Array) => void): unknown;
    off(event: "error", listener: (error: Error) => void): unknown;
    pause?(): unknown;
  };
  output: {
    write(text: string): boolean;
    once(event: "drain", listener: () => void): unknown;
    on?(event: "error", listener: (error: Error) => void): unknown;
    off?(event: "error", listener: (error: Error) => void): unknown;
  };
};

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into lines of at most `max` bytes; a longer line goes to `oversized` with what a sniffer read
 * of it, in bounded memory.
 */
export class LineReader {
  readonly #max: number;
  readonly #line: (bytes: Uint8Array) => void;
  readonly #oversized: (sniffer: JsonRpcSniffer, size: number) => void;
  #parts: Uint8Array[] = [];
  #size = 0;
  /** Set while skipping an oversized line (its sniffer). */
  #skipping: JsonRpcSniffer | null = null;

  /**
   * @param max the longest line, in bytes
   * @param line told each line (without its newline)
   * @param oversized told each longer line: the sniffer that saw it, its size
   */
  constructor(max: number, line: (bytes: Uint8Array) => void, oversized: (sniffer: JsonRpcSniffer, size: number) => void) {
    this.#max = max;
    this.#line = line;
    this.#oversized = oversized;
  }

  /**
   * Feed the next chunk.
   * @param chunk bytes read
   */
  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      this.#take(chunk.subarray(start, end));
      if (nl === -1) break;
      this.#finish();
      start = nl + 1;
    }
  }

  #take(part: Uint8Array): void {
    if (part.length === 0) return;
    this.#size += part.length;
    if (this.#skipping !== null) {
      this.#skipping.push(part);
      return;
    }
    if (this.#size <= this.#max) {
      this.#parts.push(part.slice());
      return;
    }
    this.#skipping = new JsonRpcSniffer();
    for (const p of this.#parts) this.#skipping.push(p);
    this.#skipping.push(part);
    this.#parts = [];
  }

  #finish(): void {
    const size = this.#size;
    const skipping = this.#skipping;
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    this.#skipping = null;
    if (skipping !== null) {
      this.#oversized(skipping, size);
      return;
    }
    const bytes = parts.length === 1 ? parts[0]! : concatBytes(parts, size);
    this.#line(bytes);
  }

  /** Drop what was read of an unfinished line. */
  clear(): void {
    this.#parts = [];
    this.#size = 0;
    this.#skipping = null;
  }
}

/**
 * The stdio transport with bounded messages (see the module notes).
 * @example
 * const transport = new BoundedStdioTransport({ input: process.stdin, output: process.stdout });
 * answerMalformed(transport); await server.connect(transport);
 */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #streams: StdioStreams;
  readonly #reader: LineReader;
  readonly #decoder = new TextDecoder();
  #started = false;
  #closed = false;
  readonly #ondata = (chunk: Uint8Array): void => this.#reader.push(chunk);
  readonly #onerror = (error: Error): void => this.onerror?.(error);
  /** stdout failed (EPIPE: the client went away): the session's end, as stdin's end is; nothing more is written. */
  #broken = false;
  readonly #drained = new Set<() => void>();
  readonly #onoutputerror = (): void => {
    this.#broken = true;
    for (const resolve of this.#drained) resolve();
    this.#drained.clear();
    void this.close();
  };

  /**
   * @param streams stdin and stdout (or doubles)
   * @param maxMessageBytes the longest line read whole (default {@link MAX_MESSAGE_BYTES})
   */
  constructor(streams: StdioStreams, maxMessageBytes = MAX_MESSAGE_BYTES) {
    this.#streams = streams;
    this.#reader = new LineReader(maxMessageBytes, (line) => this.#line(line), (sniffer, size) => {
      const answer = oversizedAnswer(sniffer.result(), size, true, maxMessageBytes);
      if (answer !== null) void this.send(answer).catch(() => undefined);
    });
  }

  #line(bytes: Uint8Array): void {
    const text = this.#decoder.decode(bytes).replace(/\r$/, "");
    if (text.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /**
   * Start reading stdin.
   * @returns nothing
   * @throws Error when started twice
   */
  start(): Promise<void> {
    if (this.#started) throw new Error("BoundedStdioTransport already started (Server.connect starts it)");
    this.#started = true;
    this.#streams.input.on("data", this.#ondata);
    this.#streams.input.on("error", this.#onerror);
    this.#streams.output.on?.("error", this.#onoutputerror);
    return Promise.resolve();
  }

  /**
   * Write one message as a line on stdout (waiting for the stream to drain when it is full); once stdout failed, the
   * message is dropped (no one reads it).
   * @param message the message
   * @returns when written
   */
  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#broken || this.#streams.output.write(JSON.stringify(message) + "\n")) return resolve();
      this.#drained.add(resolve);
      this.#streams.output.once("drain", () => (this.#drained.delete(resolve), resolve()));
    });
  }

  /**
   * Stop reading stdin (stdout's error listener stays: a write that fails later never crashes the process).
   * @returns nothing
   */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#streams.input.off("data", this.#ondata);
    this.#streams.input.off("error", this.#onerror);
    this.#streams.input.pause?.();
    this.#reader.clear();
    this.onclose?.();
    return Promise.resolve();
  }
}
