import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../../canonical/hex.ts";
import { ReachError } from "../../protocol/errors.ts";
import type { HostApi, HostOp } from "../types.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { createWasiP2, GuestExit, WASI_P2_INTERFACES } from "./wasi-p2.ts";

type Fn = (...args: unknown[]) => unknown;
type Ctor = new (...args: unknown[]) => unknown;

function setup(overrides: { checkpoint?: () => void; maxOutputBytes?: number } = {}) {
  const calls: [HostOp, JsonObject][] = [];
  let counter = 0;
  const invokeSync = (op: HostOp, request: JsonObject): JsonObject => {
    calls.push([op, request]);
    if (op === "clock.now") return { ms: 1_767_225_600_123, iso: "2026-01-01T00:00:00.123Z" };
    if (op === "random.bytes") {
      const n = request["n"] as number;
      return { data: bytesToBase64(Uint8Array.from({ length: n }, () => counter++ & 0xff)) };
    }
    return {};
  };
  const host: HostApi = { invokeSync, invoke: (op, request) => Promise.resolve(invokeSync(op, request)) };
  const wasi = createWasiP2({ host, checkpoint: overrides.checkpoint ?? (() => {}), maxOutputBytes: overrides.maxOutputBytes });
  const fn = (iface: string, name: string): Fn => wasi.imports[iface]![name] as Fn;
  return { wasi, calls, fn };
}

describe("createWasiP2", () => {
  it("supplies exactly the listed interfaces", () => {
    const { wasi } = setup();
    expect(Object.keys(wasi.imports).sort()).toEqual([...WASI_P2_INTERFACES].sort());
  });

  it("has an empty environment, no arguments, no cwd, no preopens, no terminals", () => {
    const { fn } = setup();
    expect(fn("wasi:cli/environment", "getEnvironment")()).toEqual([]);
    expect(fn("wasi:cli/environment", "getArguments")()).toEqual([]);
    expect(fn("wasi:cli/environment", "initialCwd")()).toBeUndefined();
    expect(fn("wasi:filesystem/preopens", "getDirectories")()).toEqual([]);
    expect(fn("wasi:cli/terminal-stdout", "getTerminalStdout")()).toBeUndefined();
    expect(() => new (setup().wasi.imports["wasi:filesystem/types"]!["Descriptor"] as Ctor)()).toThrow(ReachError);
  });

  it("reads the wall clock from the host and keeps a virtual monotonic clock", () => {
    const { fn, calls } = setup();
    expect(fn("wasi:clocks/wall-clock", "now")()).toEqual({ seconds: 1_767_225_600n, nanoseconds: 123_000_000 });
    expect(calls).toEqual([["clock.now", {}]]);
    const now = fn("wasi:clocks/monotonic-clock", "now");
    expect([now(), now(), now()]).toEqual([0n, 1_000_000n, 2_000_000n]);
    // A 5 s sleep is a jump of the virtual clock, not a wait.
    const sleep = fn("wasi:clocks/monotonic-clock", "subscribeDuration")(5_000_000_000n) as { block(): void; ready(): boolean };
    expect(sleep.ready()).toBe(false);
    const t = performance.now();
    sleep.block();
    expect(performance.now() - t).toBeLessThan(100);
    expect(sleep.ready()).toBe(true);
    expect(now()).toBe(5_003_000_000n);
  });

  it("poll advances to the earliest timer when nothing is ready", () => {
    const { wasi, fn } = setup();
    const sub = fn("wasi:clocks/monotonic-clock", "subscribeInstant");
    const poll = wasi.imports["wasi:io/poll"]!["poll"] as Fn;
    expect([...(poll([sub(9_000n), sub(4_000n)]) as Uint32Array)]).toEqual([1]);
    expect(fn("wasi:clocks/monotonic-clock", "now")()).toBe(4_000n);
    expect(() => poll([{}])).toThrow(ReachError);
  });

  it("draws randomness from the host stream, in chunks of at most 65536, with a cap", () => {
    const { fn, calls } = setup();
    const bytes = fn("wasi:random/random", "getRandomBytes")(70_000n) as Uint8Array;
    expect(bytes.length).toBe(70_000);
    expect(bytes[65_536]).toBe(65_536 & 0xff);
    expect(calls.map(([, r]) => r["n"])).toEqual([65_536, 70_000 - 65_536]);
    expect(typeof fn("wasi:random/random", "getRandomU64")()).toBe("bigint");
    expect(() => fn("wasi:random/random", "getRandomBytes")(1n << 40n)).toThrow(/limit/);
    const seed = fn("wasi:random/insecure-seed", "insecureSeed")() as bigint[];
    expect(seed).toHaveLength(2);
  });

  it("captures stdout and stderr in write order, capped", () => {
    const { wasi, fn } = setup({ maxOutputBytes: 8 });
    const out = fn("wasi:cli/stdout", "getStdout")() as { write(b: Uint8Array): void; checkWrite(): bigint };
    const err = fn("wasi:cli/stderr", "getStderr")() as { blockingWriteAndFlush(b: Uint8Array): void };
    const enc = new TextEncoder();
    expect(out.checkWrite()).toBeGreaterThan(0n);
    out.write(enc.encode("ab"));
    err.blockingWriteAndFlush(enc.encode("XY"));
    out.write(enc.encode("cdefghij"));
    const { stdout, stderr, log, droppedBytes } = wasi.output();
    expect(new TextDecoder().decode(stdout)).toBe("abcdefgh");
    expect(new TextDecoder().decode(stderr)).toBe("XY");
    expect(new TextDecoder().decode(log)).toBe("abXYcdefgh");
    expect(droppedBytes).toBe(2);
    expect(() => out.write("text" as unknown as Uint8Array)).toThrow(ReachError);
  });

  it("has an empty stdin and turns exit into GuestExit", () => {
    const { fn } = setup();
    const stdin = fn("wasi:cli/stdin", "getStdin")() as { read(n: bigint): Uint8Array };
    expect(() => stdin.read(10n)).toThrow(expect.objectContaining({ tag: "closed" }) as unknown as Error);
    expect(() => fn("wasi:cli/exit", "exit")({ tag: "ok" })).toThrow(GuestExit);
  });

  it("shares the resource classes between invocations but no state", () => {
    const a = setup();
    const b = setup();
    const ia = a.wasi.imports;
    const ib = b.wasi.imports;
    // The classes jco's glue checks with instanceof are made once (not per invocation)...
    expect(ia["wasi:io/poll"]!["Pollable"]).toBe(ib["wasi:io/poll"]!["Pollable"]);
    expect(ia["wasi:io/streams"]!["OutputStream"]).toBe(ib["wasi:io/streams"]!["OutputStream"]);
    // ...while each invocation has its own streams, clock and capture.
    const outA = a.fn("wasi:cli/stdout", "getStdout")() as { write(b: Uint8Array): void };
    const outB = b.fn("wasi:cli/stdout", "getStdout")() as { write(b: Uint8Array): void };
    expect(outA).not.toBe(outB);
    outA.write(new TextEncoder().encode("a"));
    expect(new TextDecoder().decode(a.wasi.output().stdout)).toBe("a");
    expect(b.wasi.output().stdout).toHaveLength(0);
    const sleepA = a.fn("wasi:clocks/monotonic-clock", "subscribeDuration")(7_000_000n) as { block(): void };
    sleepA.block();
    expect(a.fn("wasi:clocks/monotonic-clock", "now")()).toBe(7_000_000n);
    expect(b.fn("wasi:clocks/monotonic-clock", "now")()).toBe(0n);
    // A pollable of one invocation is refused by another's poll.
    const pollB = ib["wasi:io/poll"]!["poll"] as Fn;
    expect(() => pollB([a.fn("wasi:clocks/monotonic-clock", "subscribeInstant")(0n)])).toThrow(/not a pollable/);
  });

  it("traps on a resource the glue made for an unknown handle; descriptors answer bad-descriptor", () => {
    let checks = 0;
    const { wasi } = setup({ checkpoint: () => void checks++ });
    // jco's glue makes `Object.create(Class.prototype)` for a borrowed handle it has no object for.
    const proto = (iface: string, name: string) => (wasi.imports[iface]![name] as Ctor).prototype as object;
    const bogusPollable = Object.create(proto("wasi:io/poll", "Pollable")) as { ready(): boolean };
    expect(() => bogusPollable.ready()).toThrow(expect.objectContaining({ code: "EXEC_SANDBOX_VIOLATION" }) as unknown as Error);
    const bogusOut = Object.create(proto("wasi:io/streams", "OutputStream")) as { write(b: Uint8Array): void };
    expect(() => bogusOut.write(new Uint8Array(1))).toThrow(expect.objectContaining({ code: "EXEC_SANDBOX_VIOLATION" }) as unknown as Error);
    const descriptor = Object.create(proto("wasi:filesystem/types", "Descriptor")) as { stat(): unknown };
    expect(() => descriptor.stat()).toThrow("bad-descriptor");
    expect(checks).toBe(1);
    // Each invocation's descriptor class runs its own invocation's checkpoint.
    const stop = new ReachError("EXEC_TOOL_TIMEOUT", "too slow");
    const stopped = setup({ checkpoint: () => { throw stop; } }).wasi.imports["wasi:filesystem/types"]!["Descriptor"] as Ctor;
    expect(stopped).not.toBe(wasi.imports["wasi:filesystem/types"]!["Descriptor"]);
    expect(() => (Object.create(stopped.prototype as object) as { stat(): unknown }).stat()).toThrow(stop);
    expect(() => descriptor.stat()).toThrow("bad-descriptor");
  });

  it("runs the checkpoint on every call, so a stopped tool cannot go on", () => {
    const stop = new ReachError("EXEC_TOOL_TIMEOUT", "too slow");
    const { fn, calls } = setup({ checkpoint: () => { throw stop; } });
    expect(() => fn("wasi:clocks/wall-clock", "now")()).toThrow(stop);
    expect(() => fn("wasi:cli/environment", "getEnvironment")()).toThrow(stop);
    expect(calls).toEqual([]);
  });
});
