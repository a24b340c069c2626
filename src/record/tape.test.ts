import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../canonical/hex.ts";
import { canonicalize } from "../canonical/jcs.ts";
import { sha256Hex } from "../canonical/sha256.ts";
import { ReachError } from "../protocol/errors.ts";
import { BLOB_THRESHOLD, MAX_INLINE_REFUSED_BYTES, TapeRecorder, storedRequest, stripBlobs } from "./tape.ts";
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
