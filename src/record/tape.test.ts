import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../canonical/hex.ts";
import { canonicalize } from "../canonical/jcs.ts";
import { sha256Hex } from "../canonical/sha256.ts";
import { ReachError } from "../protocol/errors.ts";
import { deriveStream } from "../determinism/prng.ts";
import { BLOB_THRESHOLD, MAX_INLINE_REFUSED_BYTES, TapeRecorder, storedRequest, stripBlobs } from "./tape.ts";
import type { TapeJson, TapeOutcome, TapeRecord } from "./tape.ts";
import { readTapeJsonl } from "./tape-jsonl.ts";

const ID = "00000000-0000-8000-8000-000000000001";
const bytes = (n: number, fill = 7): Uint8Array => new Uint8Array(n).fill(fill);

describe("TapeRecorder", () => {
  it("records the exact fields with hashes of the stored request and response", () => {
    const tape = new TapeRecorder();
    const seq = tape.reserve();
    const rec = tape.record(seq, ID, "fs.stat", { path: "a" }, { response: { type: "file", size: 1 } });
    expect(Object.keys(rec).sort()).toEqual(["invocationId", "op", "request", "requestHash", "response", "responseHash", "seq"]);
    expect(rec.requestHash).toBe(sha256Hex('{"path":"a"}'));
    expect(rec.responseHash).toBe(sha256Hex('{"size":1,"type":"file"}'));
    const err = new ReachError("EXEC_RESOURCE_UNAVAILABLE", "no such file").toDetails();
    const rec2 = tape.record(tape.reserve(), ID, "fs.read", { path: "b" }, { error: err });
    expect(rec2.error).toEqual(err);
    expect(rec2.response).toBeUndefined();
    expect(rec2.responseHash).toBe(sha256Hex(canonicalize(err)));
  });

  it("moves data over 4 KiB into content-addressed blobs, once per content", () => {
    const tape = new TapeRecorder();
    const small = bytes(BLOB_THRESHOLD);
    const big = bytes(BLOB_THRESHOLD + 1);
    const h = sha256Hex(big);
    const r1 = tape.record(tape.reserve(), ID, "fs.write", { path: "a", data: bytesToBase64(big) }, { response: { size: big.length } });
    const r2 = tape.record(tape.reserve(), ID, "fs.read", { path: "a" }, { response: { data: bytesToBase64(big) } });
    const r3 = tape.record(tape.reserve(), ID, "fs.write", { path: "s", data: bytesToBase64(small) }, { response: { size: small.length } });
    expect(r1.request).toEqual({ path: "a", data: { blob: h } });
    expect(r2.response).toEqual({ data: { blob: h } });
    expect(r3.request["data"]).toBe(bytesToBase64(small));
    expect([...tape.blobs.keys()]).toEqual([h]);
    expect(tape.blobs.get(h)).toEqual(big);
    expect(tape.blobEntries()).toEqual([[h, big]]);
  });

  it("touches only top-level data fields", () => {
    const big = bytesToBase64(bytes(5000));
    expect(stripBlobs({ value: { data: big } })).toEqual({ value: { data: big } });
  });

  it("keeps refused requests inline, reduced to a hash when huge, and non-JSON as $invalid", () => {
    const huge = { path: "x".repeat(MAX_INLINE_REFUSED_BYTES) };
    const s = storedRequest(huge, true);
    expect(s.value).toEqual({ $oversize: { sha256: sha256Hex(canonicalize(huge)), size: canonicalize(huge).length } });
    expect(storedRequest({ data: bytesToBase64(bytes(5000)) }, true).blobs).toEqual([]);
    expect(storedRequest({ a: undefined }, true).value["$invalid"]).toMatch(/undefined/);
    expect(storedRequest([1], true).value).toEqual({ $invalid: "not a JSON object" });
  });

  it("keeps call order by reserved seq even when calls end out of order", () => {
    const tape = new TapeRecorder();
    const a = tape.reserve();
    const b = tape.reserve();
    tape.record(b, ID, "clock.now", {}, { response: { ms: 1 } });
    expect(tape.pending).toBe(1);
    tape.record(a, ID, "http.fetch", { url: "u" }, { response: { status: 200 } });
    expect(tape.records.map((r) => r.op)).toEqual(["http.fetch", "clock.now"]);
    expect(() => tape.record(a, ID, "log", {}, { response: {} })).toThrow(RangeError);
  });

  it("enforces the blob budget and the record limit", () => {
    const tape = new TapeRecorder({ maxBlobBytes: 6000, maxRecords: 2 });
    tape.record(tape.reserve(), ID, "fs.read", {}, { response: { data: bytesToBase64(bytes(5000, 1)) } });
    const seq = tape.reserve();
    expect(() => tape.record(seq, ID, "fs.read", {}, { response: { data: bytesToBase64(bytes(5000, 2)) } }))
      .toThrow(expect.objectContaining({ code: "EXEC_RESOURCE_EXHAUSTED" }));
    expect(tape.blobs.size).toBe(1);
    expect(() => tape.reserve()).toThrow(expect.objectContaining({ code: "EXEC_RESOURCE_EXHAUSTED" }));
  });
});

describe("TapeRecorder.recordOwned (the host's path)", () => {
  /** What the outcome of one call through each path was: the record, or the error thrown. */
  type Result = { record: string | null; value: TapeRecord | null; error: string | null; jsonl: string; blobs: [string, Uint8Array][]; pending: number };

  function through(path: "record" | "owned", op: unknown, request: unknown, outcome: TapeOutcome, tape = new TapeRecorder()): Result {
    const seq = tape.reserve();
    try {
      const rec = path === "record"
        ? tape.record(seq, ID, op, request, outcome)
        : (() => {
          const text = canonicalize(request);
          return tape.recordOwned(seq, ID, op, JSON.parse(text) as TapeJson, text, outcome);
        })();
      // JSON.stringify keeps member order, so this compares the objects' order as well as their contents.
      // toEqual on the record itself tells -0 from 0.
      return { record: JSON.stringify(rec), value: rec, error: null, jsonl: tape.toJsonl(), blobs: tape.blobEntries(), pending: tape.pending };
    } catch (err) {
      const error = `${(err as Error).name}: ${(err as Error).message}`;
      return { record: null, value: null, error, jsonl: tape.toJsonl(), blobs: tape.blobEntries(), pending: tape.pending };
    }
  }

  function expectSame(op: unknown, request: unknown, outcome: TapeOutcome, options?: { maxBlobBytes?: number }): Result {
    const general = through("record", op, request, outcome, new TapeRecorder(options));
    const owned = through("owned", op, request, outcome, new TapeRecorder(options));
    expect(owned).toEqual(general);
    return general;
  }

  const big = bytesToBase64(bytes(BLOB_THRESHOLD + 1, 3));
  const err = new ReachError("EXEC_RESOURCE_UNAVAILABLE", "no such file", { details: { path: "a", n: -0 } }).toDetails();
  const cases: [string, unknown, unknown, TapeOutcome][] = [
    ["clock.now", "clock.now", {}, { response: { ms: 1767225600000, iso: "2026-01-01T00:00:00.000Z" } }],
    ["random.bytes", "random.bytes", { n: 8 }, { response: { data: "AAECAwQFBgc=" } }],
    ["request blob", "fs.write", { path: "a", data: big }, { response: { size: BLOB_THRESHOLD + 1 } }],
    ["response blob", "fs.read", { path: "a" }, { response: { data: big } }],
    ["non-canonical big data stays inline", "fs.read", { path: "a" }, { response: { data: "A".repeat(6001) + "=" } }],
    ["nested response", "fs.list", { path: "." }, { response: { entries: [{ name: "a", type: "file", size: 1 }] } }],
    ["error", "fs.read", { path: "a", data: big }, { error: err }],
    ["huge refused request", "fs.write", { path: "x".repeat(MAX_INLINE_REFUSED_BYTES), text: "" }, { error: err }],
    ["request not an object", "clock.now", [1, { a: 2 }], { error: err }],
    ["request a string", "clock.now", "x", { error: err }],
    ["op to clip", "bad\nop".repeat(20), {}, { error: err }],
    ["odd numbers", "x.y", { b: -0, a: 1e21 }, { response: { n: -0, big: 1e21, tiny: 5e-324, neg: -1.5, int: 2 ** 53 } }],
    ["odd strings", "x.y", {}, { response: { s: "q\"b\\c\u0000\u001f\u007f\u2028é😀\ud83d\ude00", t: "" } }],
    ["odd names", "x.y", {}, { response: { "": 1, "é": 2, "😀": 3, "\u0001": 4, "a b": 5, "Z": 6, "z": 7 } }],
    ["index-like names", "x.y", {}, { response: { "10": 1, "9": 2, "a": 3, "01": 4, "-1": 5 } }],
    ["__proto__ name", "x.y", {}, { response: JSON.parse('{"__proto__":{"x":1},"a":1}') as TapeJson }],
    ["__proto__ flat", "x.y", {}, { response: JSON.parse('{"__proto__":1,"a":1}') as TapeJson }],
    ["many members", "x.y", {}, { response: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i])) }],
    ["booleans and null", "x.y", {}, { response: { t: true, f: false, n: null } }],
    ["NaN is refused", "x.y", {}, { response: { n: Number.NaN } }],
    ["lone surrogate is refused", "x.y", {}, { response: { s: "\ud800" } }],
    ["lone surrogate name is refused", "x.y", {}, { response: { "\udc00": 1 } }],
    ["undefined is refused", "x.y", {}, { response: { u: undefined } }],
  ];
  it.each(cases)("%s: the same record, JSONL, blobs and errors as record()", (_name, op, request, outcome) => {
    expectSame(op, request, outcome);
  });

  it("agrees with record() on random flat responses", () => {
    const rnd = deriveStream("7", "tape-fast-path-test");
    const alphabet = ["a", "b", "Z", "0", "9", "_", "é", "😀", "\ud83d", "\ude00", "\"", "\\", "\n", "\u0000", "\u2028", " ", "~"];
    const text = (max: number): string => Array.from({ length: rnd.int(max + 1) }, () => alphabet[rnd.int(alphabet.length)]!).join("");
    const value = (): unknown => {
      switch (rnd.int(7)) {
        case 0: return text(12);
        case 1: return rnd.int(1000) - 500;
        case 2: return (rnd.float() - 0.5) * 10 ** (rnd.int(60) - 30);
        case 3: return [0, -0, 1e21, 1e-7, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE][rnd.int(7)];
        case 4: return rnd.int(2) === 0;
        case 5: return null;
        default: return { nested: text(3) };
      }
    };
    let agreed = 0;
    for (let i = 0; i < 400; i++) {
      const response: TapeJson = {};
      for (let k = rnd.int(6); k > 0; k--) response[text(4)] = value();
      const r = expectSame("x.y", { n: i }, { response });
      if (r.error === null) agreed++;
    }
    expect(agreed).toBeGreaterThan(100); // most have well-formed strings and canonicalise
  });

  it("stores nothing when the blob budget is exceeded, as record() does", () => {
    const r = expectSame("fs.write", { path: "a", data: big }, { response: { data: bytesToBase64(bytes(BLOB_THRESHOLD + 1, 4)) } },
      { maxBlobBytes: BLOB_THRESHOLD + 10 });
    expect(r.error).toMatch(/blobs would reach/);
    expect(r.blobs).toEqual([]);
    expect(r.pending).toBe(1);
  });

  it("keeps its own copy of the response: changing it afterwards does not change the record", () => {
    const tape = new TapeRecorder();
    const response = { ms: 5, iso: "1970-01-01T00:00:00.005Z" };
    const nested = { entries: [{ name: "a" }] };
    tape.recordOwned(tape.reserve(), ID, "clock.now", {}, "{}", { response });
    tape.recordOwned(tape.reserve(), ID, "fs.list", { path: "." }, '{"path":"."}', { response: nested });
    const before = tape.toJsonl();
    response.ms = 6;
    nested.entries[0]!.name = "b";
    expect(tape.toJsonl()).toBe(before);
    expect(tape.records[0]!.response).toEqual({ iso: "1970-01-01T00:00:00.005Z", ms: 5 });
  });
});

describe("JSONL", () => {
  function sample(): TapeRecorder {
    const tape = new TapeRecorder();
    tape.record(tape.reserve(), ID, "clock.now", {}, { response: { iso: "1970-01-01T00:00:00.000Z", ms: 0 } });
    tape.record(tape.reserve(), ID, "fs.read", { path: "a" }, { error: new ReachError("EXEC_RESOURCE_UNAVAILABLE", "missing").toDetails() });
    return tape;
  }

  it("writes canonical lines and reads them back", () => {
    const text = sample().toJsonl();
    const lines = text.split("\n");
    expect(lines.pop()).toBe("");
    for (const l of lines) expect(canonicalize(JSON.parse(l))).toBe(l);
    expect(readTapeJsonl(text)).toEqual(sample().records);
    expect(sample().toJsonl()).toBe(text);
  });

  it("locates damage by line", () => {
    const text = sample().toJsonl();
    const tampered = text.replace('"path":"a"', '"path":"b"');
    expect(() => readTapeJsonl(tampered)).toThrow(/tape line 1: requestHash/);
    expect(() => readTapeJsonl(text.slice(0, -1))).toThrow(/line 1: .*truncated/);
    expect(() => readTapeJsonl(text.replace('"seq":1', '"seq":2'))).toThrow(/line 1: seq/);
    expect(() => readTapeJsonl(text.replace('{"invocationId"', '{"extra":1,"invocationId"'))).toThrow(/line 0/);
    try {
      readTapeJsonl(tampered);
    } catch (err) {
      expect((err as ReachError).code).toBe("REPLAY_CAPSULE_INVALID");
    }
  });
});
