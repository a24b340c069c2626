import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../canonical/hex.ts";
import { ReachError } from "../protocol/errors.ts";
import { TapePlayer, errorFromDetails, firstDifference } from "./player.ts";
import { TapeRecorder } from "./tape.ts";

const ID = "00000000-0000-8000-8000-000000000001";
const BIG = bytesToBase64(new Uint8Array(6000).fill(3));

function recorded(): TapeRecorder {
  const tape = new TapeRecorder();
  tape.record(tape.reserve(), ID, "fs.write", { path: "temp/a", text: "x" }, { response: { size: 1 } });
  tape.record(tape.reserve(), ID, "http.fetch", { url: "https://a.example.com/", headers: { accept: "x" } },
    { response: { status: 200, url: "https://a.example.com/", headers: {}, data: BIG } });
  tape.record(tape.reserve(), ID, "fs.read", { path: "nope" }, { error: new ReachError("EXEC_RESOURCE_UNAVAILABLE", "missing").toDetails() });
  return tape;
}

function divergence(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    expect((err as ReachError).code).toBe("REPLAY_DIVERGENCE");
    return (err as ReachError).details;
  }
  throw new Error("expected REPLAY_DIVERGENCE");
}

describe("firstDifference", () => {
  it("names the first differing field in key order, array index, or null", () => {
    expect(firstDifference({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 3] } })).toBe("$.b.c[1]");
    expect(firstDifference({ a: 1 }, { a: 1, z: 2 })).toBe("$.z");
    expect(firstDifference({ "x-y": 1 }, { "x-y": 2 })).toBe('$["x-y"]');
    expect(firstDifference([1], [1, 2])).toBe("$[1]");
    expect(firstDifference({ b: 1, a: 2 }, { a: 2, b: 1 })).toBeNull();
    expect(firstDifference(1, "1")).toBe("$");
  });
});

describe("TapePlayer", () => {
  it("hands out recorded outcomes for matching requests, with blobs resolved", () => {
    const tape = recorded();
    const player = new TapePlayer(tape.records, tape.blobs);
    expect(player.next("fs.write", { text: "x", path: "temp/a" }, ID).outcome).toEqual({ response: { size: 1 } });
    const fetched = player.next("http.fetch", { url: "https://a.example.com/", headers: { accept: "x" } });
    expect(fetched.outcome).toEqual({ response: { status: 200, url: "https://a.example.com/", headers: {}, data: BIG } });
    const failed = player.next("fs.read", { path: "nope" });
    expect("error" in failed.outcome && failed.outcome.error.code).toBe("EXEC_RESOURCE_UNAVAILABLE");
    expect(errorFromDetails((failed.outcome as { error: never }).error).code).toBe("EXEC_RESOURCE_UNAVAILABLE");
    expect(() => player.finish()).not.toThrow();
    expect(divergence(() => player.next("clock.now", {}))).toMatchObject({ seq: 3, field: "seq" });
  });

  it("reports the seq and the first differing request field", () => {
    const tape = recorded();
    const player = new TapePlayer(tape.records, tape.blobs);
    player.next("fs.write", { path: "temp/a", text: "x" }, ID);
    const d = divergence(() => player.next("http.fetch", { url: "https://a.example.com/", headers: { accept: "y" } }, ID));
    expect(d).toMatchObject({ seq: 1, field: "request.headers.accept", expected: '"x"', actual: '"y"' });
    expect(divergence(() => player.next("fs.read", {}, ID))).toMatchObject({ seq: 1, field: "op" });
    expect(divergence(() => player.next("http.fetch", {}, "other"))).toMatchObject({ seq: 1, field: "invocationId" });
  });

  it("checks outcomes: a different response is a divergence naming the field", () => {
    const tape = recorded();
    const player = new TapePlayer(tape.records, tape.blobs);
    const played = player.next("fs.write", { path: "temp/a", text: "x" });
    expect(() => player.check(played, { response: { size: 1 } })).not.toThrow();
    expect(divergence(() => player.check(played, { response: { size: 2 } }))).toMatchObject({ seq: 0, field: "response.size" });
    expect(divergence(() => player.check(played, { error: new ReachError("EXEC_TOOL_FAILED", "x").toDetails() })))
      .toMatchObject({ seq: 0, field: "error" });
  });

  it("reports unreplayed records and damaged blobs", () => {
    const tape = recorded();
    expect(divergence(() => new TapePlayer(tape.records, tape.blobs).finish())).toMatchObject({ seq: 0, field: "seq" });
    const bad = new Map([...tape.blobs].map(([h]) => [h, new Uint8Array([1])]));
    expect(() => new TapePlayer(tape.records, bad)).toThrow(expect.objectContaining({ code: "REPLAY_CAPSULE_INVALID" }));
    const player = new TapePlayer(tape.records, new Map());
    player.next("fs.write", { path: "temp/a", text: "x" });
    expect(() => player.next("http.fetch", { url: "https://a.example.com/", headers: { accept: "x" } }))
      .toThrow(expect.objectContaining({ code: "REPLAY_CAPSULE_INVALID" }));
  });
});
