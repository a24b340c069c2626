import { describe, expect, it } from "vitest";
import { ArtifactSink, artifactType } from "./artifact-sink.ts";
import { LogSink } from "./log-sink.ts";
import { MAX_MEMORY_KEY_LENGTH, MemoryStore, memoryValueText } from "./memory-store.ts";

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).name;
  }
  return "none";
};

describe("MemoryStore", () => {
  it("stages writes per step: commit installs, rollback drops", () => {
    const store = new MemoryStore();
    const empty = store.digest();
    const tx = store.beginStep();
    tx.set("a", { z: 1, a: [true] });
    expect(tx.get("a")).toEqual({ found: true, value: { a: [true], z: 1 } });
    expect(store.get("a")).toEqual({ found: false, value: null });
    tx.rollback();
    expect(store.digest()).toBe(empty);
    const tx2 = store.beginStep();
    tx2.set("a", 1);
    tx2.set("a", 2);
    tx2.commit();
    expect(store.get("a")).toEqual({ found: true, value: 2 });
    expect(store.entries()).toEqual([["a", "2"]]);
    expect(code(() => tx2.set("b", 1))).toBe("PROTO_SEQUENCE_ERROR");
  });

  it("returns copies: mutating a read value does not change the store", () => {
    const store = new MemoryStore();
    const tx = store.beginStep();
    const v = { list: [1] };
    tx.set("k", v);
    v.list.push(2);
    (tx.get("k").value as { list: number[] }).list.push(3);
    expect(tx.get("k").value).toEqual({ list: [1] });
  });

  it("allows one open step at a time", () => {
    const store = new MemoryStore();
    store.beginStep();
    expect(code(() => store.beginStep())).toBe("PROTO_SEQUENCE_ERROR");
  });

  it("validates keys and values and enforces limits", () => {
    const store = new MemoryStore({ maxEntries: 2, maxTotalBytes: 100 });
    const tx = store.beginStep();
    expect(code(() => tx.set("", 1))).toBe("PROTO_INVALID_ARGUMENT");
    expect(code(() => tx.set("k".repeat(MAX_MEMORY_KEY_LENGTH + 1), 1))).toBe("PROTO_INVALID_ARGUMENT");
    expect(code(() => tx.set("k".repeat(MAX_MEMORY_KEY_LENGTH), 1))).toBe("none");
    expect(code(() => tx.set("a\u0000", 1))).toBe("PROTO_INVALID_ARGUMENT");
    expect(code(() => tx.set("k", Number.POSITIVE_INFINITY))).toBe("PROTO_INVALID_ARGUMENT");
    expect(code(() => tx.set("k2", 1))).toBe("none");
    expect(code(() => tx.set("k3", 1))).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(code(() => tx.set("k2", "x".repeat(200)))).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(tx.get("k2")).toEqual({ found: true, value: 1 });
    expect(memoryValueText("é").bytes).toBe(4);
    expect(code(() => memoryValueText("é".repeat(600_000)))).toBe("PROTO_INVALID_ARGUMENT");
  });
});

describe("ArtifactSink", () => {
  it("stages artifacts per step and enforces limits", () => {
    const sink = new ArtifactSink({ maxArtifacts: 2, maxBytes: 10 });
    const s1 = sink.beginStep();
    s1.emit("inv", "a.txt", "text/plain", new Uint8Array(3), "1970-01-01T00:00:00.000Z");
    s1.rollback();
    expect(sink.artifacts).toEqual([]);
    const s2 = sink.beginStep();
    const info = s2.emit("inv", "a.txt", "image/png", new Uint8Array(3), "1970-01-01T00:00:00.000Z");
    expect(info).toMatchObject({ type: "image", path: "artifacts/inv/a.txt", sizeBytes: 3 });
    expect(code(() => s2.emit("inv", "b", "text/plain", new Uint8Array(8), "1970-01-01T00:00:00.000Z"))).toBe("EXEC_DISK_EXCEEDED");
    s2.commit();
    expect(sink.artifacts).toHaveLength(1);
    expect(artifactType("text/csv")).toBe("spreadsheet");
    expect(artifactType("application/pdf")).toBe("document");
  });
});

describe("LogSink", () => {
  it("keeps entries up to its limits and counts the rest", () => {
    const log = new LogSink({ maxEntries: 2, maxChars: 5 });
    expect(log.append("info", "abc")).toBe(true);
    expect(log.append("info", "abcd")).toBe(false);
    expect(log.append("error", "x")).toBe(true);
    expect(log.append("error", "y")).toBe(false);
    expect(log.dropped).toBe(2);
    expect(log.text()).toBe("info: abc\nerror: x\n(2 log entries dropped over the log limit)\n");
  });
});
