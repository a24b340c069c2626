import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64 } from "../../canonical/hex.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { ArtifactInfoSchema } from "../../protocol/evidence.ts";
import { TapePlayer } from "../../record/player.ts";
import { TapeRecorder } from "../../record/tape.ts";
import type { TapeOutcome, TapeRecord } from "../../record/tape.ts";
import type { HostOp } from "../types.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { INVOCATION, caught, enc, rejected, setup } from "./_fixture.test.ts";
import type { Setup } from "./_fixture.test.ts";

const text = (data: unknown): string => new TextDecoder().decode(base64ToBytes(data as string));

describe("host ops: happy paths", () => {
  it("fs.write / fs.read / fs.stat / fs.list / fs.remove", () => {
    const { host } = setup();
    expect(host.invokeSync("fs.write", { path: "out/a.txt", text: "héllo" })).toEqual({ size: 6 });
    expect(host.invokeSync("fs.write", { path: "out/sub/b.bin", data: bytesToBase64(new Uint8Array([1, 2, 3])) })).toEqual({ size: 3 });
    expect(text(host.invokeSync("fs.read", { path: "out/a.txt" })["data"])).toBe("héllo");
    expect(host.invokeSync("fs.stat", { path: "out/a.txt" })).toEqual({ type: "file", size: 6 });
    expect(host.invokeSync("fs.stat", { path: "out/sub" })).toEqual({ type: "dir", size: 0 });
    expect(host.invokeSync("fs.list", { path: "out" })).toEqual({
      entries: [{ name: "a.txt", type: "file", size: 6 }, { name: "sub", type: "dir", size: 0 }],
    });
    expect(host.invokeSync("fs.remove", { path: "out/sub", recursive: true })).toEqual({});
    expect(host.invokeSync("fs.list", { path: "out/" })).toEqual({ entries: [{ name: "a.txt", type: "file", size: 6 }] });
    expect(text(host.invokeSync("fs.read", { path: "data/in.txt" })["data"])).toBe("one\r\ntwo\nthree\n");
  });

  it("a large text body goes on the tape once, as a blob (rewriting one text keeps the tape small)", () => {
    const s = setup();
    const big = "é".repeat(5000) + "x".repeat(100_000);
    for (let i = 0; i < 3; i++) expect(s.host.invokeSync("fs.write", { path: "out/big.txt", text: big })).toEqual({ size: 110_000 });
    expect(s.host.invokeSync("fs.write", { path: "out/small.txt", text: "short" })).toEqual({ size: 5 });
    expect(text(s.host.invokeSync("fs.read", { path: "out/big.txt" })["data"])).toBe(big);
    const jsonl = s.tape.toJsonl();
    expect(jsonl.length).toBeLessThan(10_000); // the text inline three times would be over 300 KB
    const writes = jsonl.split("\n").filter((l) => l.includes('"fs.write"')).map((l) => JSON.parse(l) as TapeRecord);
    const hash = sha256Hex(new TextEncoder().encode(big));
    expect(writes.slice(0, 3).map((r) => r.request)).toEqual(Array(3).fill({ path: "out/big.txt", data: { blob: hash } }));
    expect(writes[3]!.request).toEqual({ path: "out/small.txt", text: "short" });
  });

  it("memory.get / memory.set see the step's writes", () => {
    const { host, mem, store } = setup({ memory: { old: 1 } });
    expect(host.invokeSync("memory.get", { key: "k" })).toEqual({ found: false, value: null });
    expect(host.invokeSync("memory.get", { key: "old" })).toEqual({ found: true, value: 1 });
    expect(host.invokeSync("memory.set", { key: "k", value: { b: [1, "x"], a: null } })).toEqual({});
    expect(host.invokeSync("memory.get", { key: "k" })).toEqual({ found: true, value: { a: null, b: [1, "x"] } });
    mem.commit();
    expect(store.get("k")).toEqual({ found: true, value: { a: null, b: [1, "x"] } });
  });

  it("temp.write, lines.read, log", () => {
    const { host } = setup();
    expect(host.invokeSync("temp.write", { name: "x/y.txt", text: "a\nb" })).toEqual({ path: "temp/x/y.txt" });
    expect(host.invokeSync("lines.read", { path: "temp/x/y.txt", start: 0, count: 10 })).toEqual({ lines: ["a", "b"], total: 2 });
    expect(host.invokeSync("lines.read", { path: "data/in.txt", start: 1, count: 5 })).toEqual({ lines: ["two", "three"], total: 3 });
    expect(host.invokeSync("lines.read", { path: "data/in.txt", start: 0, count: 1 })).toEqual({ lines: ["one"], total: 3 });
    expect(host.invokeSync("lines.read", { path: "data/in.txt", start: 9, count: 0 })).toEqual({ lines: [], total: 3 });
    expect(host.invokeSync("log", { level: "warn", message: "careful" })).toEqual({});
    expect(host.log.text()).toBe("warn: careful\n");
  });

  it("artifact.emit returns a valid, deterministic ArtifactInfo", () => {
    const { host, stage, sink } = setup();
    const info = host.invokeSync("artifact.emit", { name: "report.json", mimeType: "application/json", text: "{}" });
    expect(ArtifactInfoSchema().parse(info)).toEqual(info);
    expect(info).toMatchObject({
      name: "report.json", type: "data", mimeType: "application/json", sizeBytes: 2, sha256: sha256Hex("{}"),
      path: `artifacts/${INVOCATION}/report.json`, createdAt: "2026-01-01T00:00:00.000Z",
    });
    expect(setup().host.invokeSync("artifact.emit", { name: "report.json", mimeType: "application/json", text: "{}" })).toEqual(info);
    expect(caught(() => host.invokeSync("artifact.emit", { name: "report.json", mimeType: "text/plain", text: "" })).code)
      .toBe("PROTO_INVALID_ARGUMENT");
    stage.commit();
    expect(sink.artifacts.map((a) => a.info)).toEqual([info]);
  });

  it("clock.now advances 1 ms per read; random.bytes follows the seeded stream", () => {
    const { host } = setup();
    expect(host.invokeSync("clock.now", {})).toEqual({ ms: 1767225600000, iso: "2026-01-01T00:00:00.000Z" });
    expect(host.invokeSync("clock.now", {})).toEqual({ ms: 1767225600001, iso: "2026-01-01T00:00:00.001Z" });
    const a = host.invokeSync("random.bytes", { n: 16 })["data"];
    expect(base64ToBytes(a as string).length).toBe(16);
    expect(setup().host.invokeSync("random.bytes", { n: 16 })["data"]).toBe(a);
    expect(host.invokeSync("random.bytes", { n: 0 })).toEqual({ data: "" });
  });

  it("restricted executor: temp/ writes, reads and memory reads still work", () => {
    const { host } = setup({ restricted: true });
    expect(host.invokeSync("temp.write", { name: "scratch.txt", text: "x" })).toEqual({ path: "temp/scratch.txt" });
    expect(host.invokeSync("fs.write", { path: "temp/b.txt", text: "y" })).toEqual({ size: 1 });
    expect(host.invokeSync("fs.stat", { path: "data/in.txt" })).toEqual({ type: "file", size: 15 });
    expect(host.invokeSync("memory.get", { key: "k" })).toEqual({ found: false, value: null });
    expect(host.violation).toBeNull();
  });

  it("invoke() runs sync ops too; invokeSync refuses http.fetch", async () => {
    const { host } = setup();
    await expect(host.invoke("clock.now", {})).resolves.toMatchObject({ ms: 1767225600000 });
    await expect(rejected(host.invoke("fs.read", { path: "out/nope" }))).resolves.toMatchObject({ code: "EXEC_RESOURCE_UNAVAILABLE" });
    expect(caught(() => host.invokeSync("http.fetch", { url: "https://x.example/" })).code).toBe("EXEC_SANDBOX_VIOLATION");
    expect(host.violation).toBeNull();
  });
});

function expectDenied(s: Setup, op: HostOp, request: JsonObject, violationType: string, attempted: string): void {
  const wsBefore = s.ws.digest();
  const memBefore = s.store.digest();
  if (s.policy.permissions.has("filesystem")) s.host.invokeSync("fs.write", { path: "temp/before.txt", text: "staged" });
  if (!s.policy.restricted) s.host.invokeSync("memory.set", { key: "before", value: 1 });
  const err = caught(() => s.host.invokeSync(op, request));
  expect(err.code).toBe("POLICY_VIOLATION");
  expect(err.details).toMatchObject({ violationType, attemptedCapability: attempted });
  expect(s.host.violation).toBe(err);
  // The step halts: later calls fail with the same violation and are not recorded.
  const recorded = s.tape.records.length;
  expect(caught(() => s.host.invokeSync("clock.now", {}))).toBe(err);
  expect(s.tape.records.length).toBe(recorded);
  expect(s.tape.records.at(-1)).toMatchObject({ op, error: { code: "POLICY_VIOLATION" } });
  // Nothing changed after rollback (seed 003 §4.3).
  s.step.rollback();
  s.mem.rollback();
  expect(s.ws.digest()).toBe(wsBefore);
  expect(s.store.digest()).toBe(memBefore);
}

describe("host ops: denials", () => {
  it("no filesystem permission → PERMISSION_DENIED", () => {
    expectDenied(setup({ permissions: ["network"] }), "fs.read", { path: "data/in.txt" }, "PERMISSION_DENIED", "fs.read:data/in.txt");
  });
  it("write to a read-only root → PERMISSION_DENIED", () => {
    expectDenied(setup(), "fs.write", { path: "data/x.txt", text: "x" }, "PERMISSION_DENIED", "fs.write:data/x.txt");
  });
  it("path outside every root → RESOURCE_ACCESS", () => {
    expectDenied(setup(), "fs.write", { path: "etc/passwd", text: "x" }, "RESOURCE_ACCESS", "fs.write:etc/passwd");
    expectDenied(setup(), "fs.read", { path: "../x" }, "RESOURCE_ACCESS", "fs.read:../x");
    expectDenied(setup(), "lines.read", { path: "/etc/passwd", start: 0, count: 1 }, "RESOURCE_ACCESS", "lines.read:/etc/passwd");
  });
  it("NUL in a path → RESOURCE_ACCESS", () => {
    expectDenied(setup(), "fs.stat", { path: "out/a\u0000b" }, "RESOURCE_ACCESS", "fs.stat:out/a\\u0000b");
  });
  it("restricted executor: writes outside temp/ → PERMISSION_DENIED", () => {
    expectDenied(setup({ restricted: true }), "fs.write", { path: "out/x.txt", text: "x" }, "PERMISSION_DENIED", "fs.write:out/x.txt");
  });
  it("memory key outside memory:// resources → RESOURCE_ACCESS; read-only grant → PERMISSION_DENIED", () => {
    const resources = [{ uri: "memory://before", access: "readwrite" }, { uri: "memory://ro/", access: "read" }];
    expectDenied(setup({ resources }), "memory.get", { key: "secret" }, "RESOURCE_ACCESS", "memory.get:secret");
    expectDenied(setup({ resources }), "memory.set", { key: "ro/x", value: 1 }, "PERMISSION_DENIED", "memory.set:ro/x");
  });
  it("http.fetch without network → PERMISSION_DENIED; disallowed host → RESOURCE_ACCESS", async () => {
    const s = setup({ permissions: ["filesystem"] });
    const e1 = await rejected(s.host.invoke("http.fetch", { url: "https://api.example.com/" }));
    expect(e1.details).toMatchObject({ violationType: "PERMISSION_DENIED", attemptedCapability: "http.fetch:https://api.example.com/" });
    const s2 = setup({ allowedHosts: ["api.example.com"], fetch: () => Promise.reject(new Error("must not be called")) });
    const e2 = await rejected(s2.host.invoke("http.fetch", { url: "https://evil.com/" }));
    expect(e2.details).toMatchObject({ violationType: "RESOURCE_ACCESS", attemptedCapability: "http.fetch:https://evil.com/" });
    expect(s2.host.violation).toBe(e2);
  });
  it("more than maxCalls host calls → POLICY_RATE_LIMIT_EXCEEDED, halting", () => {
    const { host, tape } = setup({ limits: { maxCalls: 3 } });
    for (let i = 0; i < 3; i++) host.invokeSync("clock.now", {});
    const err = caught(() => host.invokeSync("clock.now", {}));
    expect(err.code).toBe("POLICY_RATE_LIMIT_EXCEEDED");
    expect(host.violation).toBe(err);
    expect(tape.records.length).toBe(4);
    expect(caught(() => host.invokeSync("clock.now", {}))).toBe(err);
    expect(tape.records.length).toBe(4);
  });
});

describe("host ops: hostile requests", () => {
  const cases: [string, string, unknown][] = [
    ["wrong type", "fs.read", { path: 5 }],
    ["missing field", "fs.read", {}],
    ["extra key", "fs.read", { path: "out/a", extra: 1 }],
    ["__proto__ key", "fs.read", JSON.parse('{"path":"out/a","__proto__":{"x":1}}')],
    ["array request", "clock.now", []],
    ["null request", "clock.now", null],
    ["undefined field", "memory.set", { key: "k", value: undefined }],
    ["function field", "log", { level: "info", message: () => 1 }],
    ["NaN", "random.bytes", { n: Number.NaN }],
    ["huge random", "random.bytes", { n: 65_537 }],
    ["fractional", "random.bytes", { n: 1.5 }],
    ["negative start", "lines.read", { path: "data/in.txt", start: -1, count: 1 }],
    ["too many lines", "lines.read", { path: "data/in.txt", start: 0, count: 10_001 }],
    ["data and text", "fs.write", { path: "out/a", data: "", text: "" }],
    ["bad base64", "fs.write", { path: "out/a", data: "@@@" }],
    ["huge text", "fs.write", { path: "out/a", text: "x".repeat(2049) }],
    ["bad level", "log", { level: "fatal", message: "x" }],
    ["long key", "memory.get", { key: "k".repeat(257) }],
    ["control key", "memory.get", { key: "a\nb" }],
    ["big value", "memory.set", { key: "k", value: "x".repeat(1024 * 1024) }],
    ["artifact slash", "artifact.emit", { name: "a/b", mimeType: "text/plain", text: "" }],
    ["artifact dotdot", "artifact.emit", { name: "..", mimeType: "text/plain", text: "" }],
    ["artifact NUL", "artifact.emit", { name: "a\u0000", mimeType: "text/plain", text: "" }],
    ["artifact mime", "artifact.emit", { name: "a", mimeType: "not a mime", text: "" }],
    ["unknown op", "exec", {}],
    ["cycle", "log", (() => { const o: Record<string, unknown> = { level: "info" }; o["message"] = o; return o; })()],
  ];
  it.each(cases)("%s is refused cleanly with PROTO_INVALID_ARGUMENT, recorded, not halting", (_name, op, request) => {
    const s = setup({ limits: { maxWriteBytes: 2048 } });
    const before = s.ws.digest();
    const err = caught(() => s.host.invokeSync(op as HostOp, request as JsonObject));
    expect(err.code).toBe("PROTO_INVALID_ARGUMENT");
    expect(err.message.length).toBeLessThan(500);
    expect(s.host.violation).toBeNull();
    expect(s.tape.records).toHaveLength(1);
    expect(s.tape.records[0]!.error!.code).toBe("PROTO_INVALID_ARGUMENT");
    expect(s.ws.digest()).toBe(before);
    expect(s.host.invokeSync("clock.now", {})).toHaveProperty("ms");
  });

  it("a getter cannot change the request after validation", () => {
    const s = setup();
    let n = 0;
    const req = { get path() { return n++ === 0 ? "out/a.txt" : "../escape"; }, text: "x" };
    expect(s.host.invokeSync("fs.write", req as unknown as JsonObject)).toEqual({ size: 1 });
    expect(s.tape.records[0]!.request).toEqual({ path: "out/a.txt", text: "x" });
  });
});

/** One deterministic session touching every sync op (and two blobs). */
function session(s: Setup): void {
  const h = s.host;
  h.invokeSync("fs.write", { path: "out/big.bin", data: bytesToBase64(new Uint8Array(5000).map((_, i) => i % 251)) });
  h.invokeSync("fs.read", { path: "out/big.bin" });
  h.invokeSync("fs.list", { path: "out" });
  h.invokeSync("fs.stat", { path: "data/in.txt" });
  h.invokeSync("memory.set", { key: "k", value: { n: 1 } });
  h.invokeSync("memory.get", { key: "k" });
  h.invokeSync("temp.write", { name: "t.txt", text: "x\ny" });
  h.invokeSync("lines.read", { path: "temp/t.txt", start: 0, count: 2 });
  h.invokeSync("log", { level: "info", message: "m" });
  h.invokeSync("artifact.emit", { name: "a.txt", mimeType: "text/plain", text: "art" });
  h.invokeSync("clock.now", {});
  h.invokeSync("random.bytes", { n: 5000 });
  try {
    h.invokeSync("fs.read", { path: "out/missing" });
  } catch {
    // recorded as an error
  }
  h.invokeSync("fs.remove", { path: "temp/t.txt" });
}

describe("tape", () => {
  it("is byte-identical across two identical invocations, with content-addressed blobs", () => {
    const a = setup();
    const b = setup();
    session(a);
    session(b);
    expect(a.tape.toJsonl()).toBe(b.tape.toJsonl());
    expect(a.tape.records).toHaveLength(14);
    expect(a.tape.blobs.size).toBe(2);
    for (const [h, bytes] of a.tape.blobs) expect(sha256Hex(bytes)).toBe(h);
    expect(a.tape.records[0]!.request["data"]).toEqual({ blob: sha256Hex(a.tape.blobs.get(a.tape.records[0]!.request["data"]!["blob" as never])!) });
    expect(a.tape.records.map((r) => r.seq)).toEqual([...Array(14).keys()]);
  });

  it("replays: same tape; a changed request is a divergence naming seq and field", () => {
    const a = setup();
    session(a);
    const r = setup({ player: new TapePlayer(a.tape.records, a.tape.blobs) });
    session(r);
    expect(r.tape.toJsonl()).toBe(a.tape.toJsonl());

    const d = setup({ player: new TapePlayer(a.tape.records, a.tape.blobs) });
    d.host.invokeSync("fs.write", { path: "out/big.bin", data: bytesToBase64(new Uint8Array(5000).map((_, i) => i % 251)) });
    const err = caught(() => d.host.invokeSync("fs.read", { path: "out/other.bin" }));
    expect(err.code).toBe("REPLAY_DIVERGENCE");
    expect(err.details).toMatchObject({ seq: 1, field: "request.path" });
    expect(d.host.violation).toBe(err);
  });

  it("replay detects a different response (the workspace changed)", () => {
    const a = setup();
    session(a);
    const r = setup({ files: { data: { "in.txt": enc("changed") } }, player: new TapePlayer(a.tape.records, a.tape.blobs) });
    const err = caught(() => session(r));
    expect(err.code).toBe("REPLAY_DIVERGENCE");
    expect(err.details).toMatchObject({ seq: 3, field: "response.size" });
  });
});

/** A tape that records the host's calls through the general `record` instead of its `recordOwned` fast path. */
class GeneralPathTape extends TapeRecorder {
  override recordOwned(seq: number, invocationId: string, op: unknown, request: Record<string, unknown>, _text: string, outcome: TapeOutcome): TapeRecord {
    return this.record(seq, invocationId, op, request, outcome);
  }
}

/** Calls that fail in every way the host records: refused requests (small, huge, not JSON), denials, op errors. */
function failures(s: Setup): void {
  const h = s.host;
  const attempts: [string, unknown][] = [
    ["fs.read", { path: "out/missing" }],
    ["fs.write", { path: "out/huge.txt", text: "y".repeat(70_000) }],
    ["random.bytes", { n: -1 }],
    ["clock.now", [1]],
    ["log", { level: "info", message: undefined }],
    ["memory.set", { key: "k", value: { nested: [1, -0, "é"] } }],
    ["no.such.op", {}],
    ["fs.write", { path: "data/ro.txt", text: "x" }], // a policy violation: the host halts, later calls are refused
    ["clock.now", {}],
  ];
  for (const [op, request] of attempts) {
    try {
      h.invokeSync(op as HostOp, request as JsonObject);
    } catch {
      // recorded as an error
    }
  }
}

describe("tape fast path", () => {
  it("records exactly what the general path records: same records (member order too), JSONL and blobs", () => {
    const fast = setup({ limits: { maxWriteBytes: 65_536 } });
    const general = setup({ limits: { maxWriteBytes: 65_536 }, tape: new GeneralPathTape() });
    for (const s of [fast, general]) {
      session(s);
      s.host.invokeSync("random.bytes", { n: 8 });
      s.host.invokeSync("clock.now", {});
      s.host.invokeSync("memory.get", { key: "k" });
      failures(s);
      expect(s.host.violation?.code).toBe("POLICY_VIOLATION");
    }
    expect(fast.tape.records.length).toBeGreaterThan(20);
    expect(JSON.stringify(fast.tape.records)).toBe(JSON.stringify(general.tape.records));
    expect(fast.tape.toJsonl()).toBe(general.tape.toJsonl());
    expect(fast.tape.blobEntries()).toEqual(general.tape.blobEntries());
  });

  it("replays a fast-path tape like a general-path one", () => {
    const a = setup({ tape: new GeneralPathTape() });
    session(a);
    const r = setup({ player: new TapePlayer(a.tape.records, a.tape.blobs) });
    session(r);
    expect(r.tape.toJsonl()).toBe(a.tape.toJsonl());
  });

  it("a request or response changed after the call does not change the tape", () => {
    const s = setup();
    const request: Record<string, unknown> = { path: "out/a.txt", text: "x" };
    const response = s.host.invokeSync("fs.write", request as JsonObject);
    const clock = s.host.invokeSync("clock.now", {});
    const before = s.tape.toJsonl();
    request["path"] = "out/b.txt";
    request["text"] = "changed";
    response["size"] = 99;
    clock["iso"] = "changed";
    expect(s.tape.toJsonl()).toBe(before);
    expect(s.tape.records[0]!.request).toEqual({ path: "out/a.txt", text: "x" });
    expect(s.tape.records[1]!.response!["iso"]).toBe("2026-01-01T00:00:00.000Z");
  });
});

describe("mcp.call answers", () => {
  const answer = (n: number): JsonObject => ({ content: [{ type: "text", text: "x".repeat(n) }] });
  const mcp = (n: number) => ({ server: "s", tool: "t", call: () => Promise.resolve(answer(n)) });

  it("an answer within maxResponseBytes reaches the tool and the tape", async () => {
    const { host, tape } = setup({ mcp: mcp(1000), limits: { maxResponseBytes: 2000 } });
    expect(await host.invoke("mcp.call", { server: "s", tool: "t", arguments: {} })).toEqual(answer(1000));
    expect(tape.toJsonl()).toContain("x".repeat(1000));
  });

  it("a server's answer over maxResponseBytes is EXEC_RESOURCE_EXHAUSTED, recorded without its bytes", async () => {
    const { host, tape } = setup({ mcp: mcp(5000), limits: { maxResponseBytes: 2000 } });
    const err = await rejected(host.invoke("mcp.call", { server: "s", tool: "t", arguments: {} }));
    expect(err.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(err.message).toMatch(/over the limit of 2000 bytes/);
    const jsonl = tape.toJsonl();
    expect(jsonl).toContain("EXEC_RESOURCE_EXHAUSTED");
    expect(jsonl).not.toContain("x".repeat(100));
  });
});
