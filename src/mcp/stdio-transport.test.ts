// Bounded MCP messages: the sniffer reads a message's top-level id and method as its bytes stream past (wherever the
// id is, whatever is nested), and the stdio transport answers a line over its limit with a JSON-RPC error for that id
// and goes on reading — never buffering the line whole, never closing. (HTTP: mcp.test.ts; the CLI: tests/mcp.test.ts.)
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { JsonRpcSniffer, MAX_MESSAGE_BYTES, oversizedAnswer } from "./limits.ts";
import { BoundedStdioTransport, LineReader } from "./stdio-transport.ts";

const enc = new TextEncoder();

/** Sniff a text fed in chunks of `size` bytes. */
function sniff(text: string, size = 3): ReturnType<JsonRpcSniffer["result"]> {
  const s = new JsonRpcSniffer();
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
  return s.result();
}

describe("JsonRpcSniffer", () => {
  it("finds the top-level id and method wherever they are, and nothing nested or inside strings", () => {
    const tricky = JSON.stringify({ method: "tools/call", params: { name: "x", arguments: { id: 9, text: 'say "id": 5, } ] {', list: [{ id: 1 }] } }, jsonrpc: "2.0", id: 42 });
    expect(sniff(tricky)).toEqual({ id: 42, method: "tools/call" });
    expect(sniff(tricky, 1)).toEqual({ id: 42, method: "tools/call" });
    expect(sniff(' \n{ "id" : "req-7" , "jsonrpc":"2.0","method":"tools/list","params":{}}')).toEqual({ id: "req-7", method: "tools/list" });
    expect(sniff('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toEqual({ id: undefined, method: "notifications/initialized" });
    expect(sniff('{"id":null,"method":"x"}')).toEqual({ id: null, method: "x" });
    expect(sniff('{"id":{"a":1},"method":"x"}').id).toBeUndefined();
    expect(sniff("[1, 2, 3]")).toEqual({ id: undefined, method: undefined });
    expect(sniff("not json at all")).toEqual({ id: undefined, method: undefined });
  });

  it("answers a request by its id (-32602), an unidentified message with id null (-32600), a notification not at all", () => {
    expect(oversizedAnswer({ id: 3, method: "tools/call" }, 20_000_000, true)).toMatchObject({ id: 3, error: { code: -32602, message: expect.stringMatching(new RegExp(`tools/call request is 20000000 bytes; this server reads messages of at most ${MAX_MESSAGE_BYTES} bytes; nothing of it ran`)) } });
    expect(oversizedAnswer({ id: undefined, method: undefined }, 9, false)).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining("more than 9 bytes") } });
    expect(oversizedAnswer({ id: undefined, method: "notifications/x" }, 9, true)).toBeNull();
  });
});

/** stdin and stdout doubles. */
function streams(): { input: { emit(chunk: string | Uint8Array): void } & Parameters<typeof newTransport>[0]["input"]; output: { lines: string[] } & Parameters<typeof newTransport>[0]["output"] } {
  const listeners = new Set<(c: Uint8Array) => void>();
  const lines: string[] = [];
  return {
    input: {
      on: (event: string, l: (c: never) => void) => void (event === "data" && listeners.add(l as (c: Uint8Array) => void)),
      off: (event: string, l: (c: never) => void) => void (event === "data" && listeners.delete(l as (c: Uint8Array) => void)),
      emit: (chunk: string | Uint8Array) => listeners.forEach((l) => l(typeof chunk === "string" ? enc.encode(chunk) : chunk)),
    },
    output: { lines, write: (t: string) => (lines.push(...t.trimEnd().split("\n")), true), once: () => undefined },
  };
}
const newTransport = (s: ConstructorParameters<typeof BoundedStdioTransport>[0], max: number): BoundedStdioTransport => new BoundedStdioTransport(s, max);

describe("BoundedStdioTransport", () => {
  it("answers a line over the limit by its id, keeps no more than the limit, and reads the next line", async () => {
    const s = streams();
    const t = newTransport(s, 256);
    const got: unknown[] = [];
    const errors: Error[] = [];
    t.onmessage = (m) => void got.push(m);
    t.onerror = (e) => void errors.push(e);
    await t.start();
    const huge = JSON.stringify({ method: "tools/call", params: { name: "wordcount", arguments: { text: "x ".repeat(5000) } }, jsonrpc: "2.0", id: 7 });
    for (let i = 0; i < huge.length; i += 100) s.input.emit(huge.slice(i, i + 100)); // arrives in pieces
    s.input.emit('\n{"jsonrpc":"2.0","id":8,"method":"tools/list"}\n');
    s.input.emit('{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"' + "y".repeat(400) + '"}}\n'); // a notification: no answer
    s.input.emit("garbage ".repeat(100) + "\n");
    s.input.emit("\n{not json\n");
    expect(s.output.lines.map((l) => JSON.parse(l) as { id: unknown; error: { code: number; message: string } })).toMatchObject([
      { id: 7, error: { code: -32602, message: expect.stringContaining(`this tools/call request is ${huge.length} bytes; this server reads messages of at most 256 bytes`) } },
      { id: null, error: { code: -32600 } },
    ]);
    expect(got).toEqual([{ jsonrpc: "2.0", id: 8, method: "tools/list" }]);
    expect(errors.map((e) => e.name)).toEqual(["SyntaxError"]); // the malformed line, for answerMalformed
    await t.close();
    s.input.emit('{"jsonrpc":"2.0","id":9,"method":"tools/list"}\n');
    expect(got).toHaveLength(1); // closed: nothing more is read
  });

  it("stdout failing (EPIPE: the client went away mid-call) closes the transport, as stdin's end does, and later answers are dropped, never thrown", async () => {
    const s = streams();
    const output = Object.assign(new EventEmitter(), { lines: [] as string[], write: (t: string) => (output.lines.push(t), true) });
    const t = newTransport({ input: s.input, output }, 256);
    let closed = 0;
    t.onclose = () => void closed++;
    await t.start();
    await t.send({ jsonrpc: "2.0", id: 1, result: {} });
    output.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" })); // unhandled, it would throw
    expect(closed).toBe(1);
    await t.send({ jsonrpc: "2.0", id: 2, result: {} }); // the answer to a call that was running: dropped
    expect(output.lines).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}\n']);
    output.emit("error", new Error("write EPIPE")); // a late failure too
    await t.close();
    expect(closed).toBe(1);
  });

  it("a line split across many chunks is put together; CRLF and blank lines are accepted", () => {
    const lines: string[] = [];
    const reader = new LineReader(64, (b) => void lines.push(new TextDecoder().decode(b)), () => lines.push("(oversized)"));
    for (const ch of "ab\ncd") reader.push(enc.encode(ch));
    reader.push(enc.encode("ef\r\n\n" + "z".repeat(65) + "\nok\n"));
    expect(lines).toEqual(["ab", "cdef\r", "", "(oversized)", "ok"]);
  });
});
