import { readFileSync } from "node:fs";
import { FUEL_SLICE, FuelMeter } from "../fuel/mod.ts";
import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToHex } from "../../canonical/hex.ts";
import { deriveStream } from "../../determinism/prng.ts";
import { Workspace } from "../workspace/workspace.ts";
import { WasmToolRunner } from "./runner.ts";
import { Errno } from "./errno.ts";
import { ReachStatus } from "./reach-abi.ts";
import { invocation, recordingHost, wat } from "./_test-support.ts";

const WRITE_LOOP = `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "not json")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 8))
    (loop $l (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) $LOOP)))`;

const tool = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../../../wasm-tools/build/${name}.wasm`, import.meta.url)));

describe("WasmToolRunner", () => {
  const runner = new WasmToolRunner();

  it("runs the AssemblyScript tool: same output and same host calls twice with the same seed", async () => {
    const code = tool("as-wordcount");
    const a = recordingHost("7");
    const b = recordingHost("7");
    const input = { text: "hello brave\nnew world ☃" };
    const r1 = await runner.run(invocation(code, a.host, input));
    const r2 = await runner.run(invocation(code, b.host, input));
    expect(r1.status).toBe("success");
    expect(r1).toEqual(r2);
    expect(a.calls).toEqual(b.calls);
    if (r1.status !== "success") return;
    const out = r1.output as Record<string, unknown>;
    expect(out).toMatchObject({ words: 5, chars: 23, lines: 1 });
    // The seeded values: the first clock read of the virtual clock and the first 8 bytes of the stream.
    const clock = a.calls.find((c) => c.op === "clock.now")!;
    expect(out["now"]).toBe(JSON.parse(clock.response).ms);
    expect(out["now"]).toBe(Date.UTC(2026, 0, 1));
    expect(a.calls.some((c) => c.op === "random.bytes")).toBe(true);
    // Known answer, the same on Deno (checked with a throwaway `deno test` run): the stream's first 8 bytes.
    expect(out["random"]).toBe(bytesToHex(deriveStream("7", "invocation/test").bytes(8)));
    expect(out["random"]).toBe("4b9d7cd2e51aaafa");
    expect(r1.log).toContain("counted 5 words");
    expect(r1.fuelUsed).toBeGreaterThan(0n);
  });

  it("decodes random.bytes answers exactly as base64ToBytes does, and refuses what it refuses", async () => {
    const code = tool("as-wordcount");
    const input = { text: "a b" };
    const answering = (data: string) => {
      const base = recordingHost("7").host;
      return { invokeSync: (op: never, r: never) => (op === "random.bytes" ? { data } : base.invokeSync(op, r)), invoke: base.invoke };
    };
    const good = await runner.run(invocation(code, answering("AAECAwQFBv8="), input));
    expect(good.status === "success" && (good.output as Record<string, unknown>)["random"]).toBe("00010203040506ff");
    // "@@@@" is refused by every decoder; text base64ToBytes refuses must end the same way (the guest sees EIO).
    const refused = await runner.run(invocation(code, answering("@@@@"), input));
    expect(refused.status).toBe("error");
    for (const data of ["AAECAwQFBv9=", "AAECAwQF Bv8=", "AAECAwQFBv8", "AAECAwQFBv8==", "AAEC-wQFBv8=", "AAECAwQFBv8=\n", "AAECAwQFBv8=AAAA"]) {
      expect(() => base64ToBytes(data), data).toThrow(TypeError);
      expect(await runner.run(invocation(code, answering(data), input)), JSON.stringify(data)).toEqual(refused);
    }
  });

  it("runs the C tool against a read-only resource through a preopen, byte-identical twice", async () => {
    const ws = Workspace.fromResources([{ root: "data", access: "read", files: { "input.txt": new TextEncoder().encode("abc") } }]);
    const before = ws.digest();
    const withFs = new WasmToolRunner({ filesystem: () => ({ fs: ws, preopens: [{ guest: "/data", path: "data" }] }) });
    const r1 = await withFs.run(invocation(tool("c-sha"), recordingHost("0").host));
    const r2 = await withFs.run(invocation(tool("c-sha"), recordingHost("0").host));
    expect(r1).toEqual(r2);
    expect(r1.status === "success" && r1.output).toEqual({
      path: "/data/input.txt",
      size: 3,
      sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    expect(ws.digest()).toBe(before);
  });

  it("a different seed changes only the random value", async () => {
    const code = tool("as-wordcount");
    const r1 = await runner.run(invocation(code, recordingHost("1").host, { text: "x" }));
    const r2 = await runner.run(invocation(code, recordingHost("2").host, { text: "x" }));
    if (r1.status !== "success" || r2.status !== "success") throw new Error("expected success");
    const [o1, o2] = [r1.output as Record<string, unknown>, r2.output as Record<string, unknown>];
    expect(o1["random"]).not.toBe(o2["random"]);
    expect({ ...o1, random: 0 }).toEqual({ ...o2, random: 0 });
  });

  it("a tool that exits non-zero is EXEC_TOOL_FAILED with its stderr as the log", async () => {
    const r = await runner.run(invocation(tool("as-wordcount"), recordingHost("0").host, { nope: 1 }));
    expect(r.status).toBe("error");
    if (r.status !== "error") return;
    expect(r.error.code).toBe("EXEC_TOOL_FAILED");
    expect(r.error.details["exitCode"]).toBe(2);
    expect(r.log).toContain("expected JSON");
  });

  it("stdout that is not JSON, a trap, a stack overflow, an endless writer, a non-command", async () => {
    const nonJson = await runner.run(invocation(await wat(WRITE_LOOP.replace("$LOOP", "")), recordingHost("0").host));
    expect(nonJson.status === "error" && nonJson.error.code).toBe("EXEC_TOOL_FAILED");
    expect(nonJson.status === "error" && nonJson.error.details["reason"]).toBe("output");
    const trap = await runner.run(invocation(await wat(`(module (memory (export "memory") 1) (func (export "_start") unreachable))`), recordingHost("0").host));
    expect(trap.status === "error" && trap.error.code).toBe("EXEC_TOOL_FAILED");
    expect(trap.status === "error" && trap.error.details["reason"]).toBe("trap");
    const deep = await runner.run(invocation(await wat(`(module (memory (export "memory") 1) (func $f (export "_start") (call $f)))`), recordingHost("0").host, {}, { fuel: 1_000_000_000n }));
    expect(deep.status === "error" && deep.error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    const flood = await new WasmToolRunner({ maxStdoutBytes: 1000 }).run(invocation(await wat(WRITE_LOOP.replace("$LOOP", "(br $l)")), recordingHost("0").host));
    expect(flood.status === "error" && flood.error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(flood.status === "error" && flood.error.details["stream"]).toBe("stdout");
    const empty = await runner.run(invocation(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]), recordingHost("0").host));
    expect(empty.status === "error" && empty.error.code).toBe("EXEC_TOOL_FAILED");
    const garbage = await runner.run(invocation(new Uint8Array([1, 2, 3]), recordingHost("0").host));
    expect(garbage.status === "error" && garbage.error.code).toBe("PACK_MALFORMED");
  });

  it("a guest cannot swallow proc_exit with a catch_all (exception handling)", async () => {
    const text = `(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 16) "{}")
      (func (export "_start")
        (try (do (call $exit (i32.const 7))) (catch_all))
        (i32.store (i32.const 0) (i32.const 16))
        (i32.store (i32.const 4) (i32.const 2))
        (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`;
    const { default: binaryen } = await import("binaryen");
    const m = binaryen.parseText(text);
    m.setFeatures(binaryen.Features.ExceptionHandling);
    const bytes = m.emitBinary();
    m.dispose();
    const r = await runner.run(invocation(bytes, recordingHost("0").host));
    expect(r.status === "error" && r.error.details["exitCode"]).toBe(7);
  });

  it("the hang tool runs out of fuel (EXEC_RESOURCE_EXHAUSTED) at the same point every time, and the next run works", async () => {
    const t0 = performance.now();
    const r1 = await runner.run(invocation(tool("hang"), recordingHost("0").host, {}, { fuel: 20_000_000n }));
    const r2 = await runner.run(invocation(tool("hang"), recordingHost("0").host, {}, { fuel: 20_000_000n }));
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r1.status === "error" && r1.error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(r1.status === "error" && r1.error.details["reason"]).toBe("fuel");
    expect(r1.fuelUsed).toBe(20_000_000n);
    expect(r2).toEqual(r1);
    const next = await runner.run(invocation(tool("as-wordcount"), recordingHost("0").host, { text: "a" }));
    expect(next.status).toBe("success");
  });

  it("the memory bomb ends with EXEC_RESOURCE_EXHAUSTED (memory) and memory never passes the limit", async () => {
    const limit = 8 * 1024 * 1024;
    const r = await runner.run(invocation(tool("membomb"), recordingHost("0").host, {}, { memoryLimitBytes: limit }));
    expect(r.status).toBe("error");
    if (r.status !== "error") return;
    expect(r.error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(r.error.details["reason"]).toBe("memory");
    expect(r.log).toContain("malloc failed after");
    const next = await runner.run(invocation(tool("as-wordcount"), recordingHost("0").host, { text: "a" }));
    expect(next.status).toBe("success");
  });

  it("a memory whose initial size is above the limit is refused before running", async () => {
    const r = await runner.run(invocation(tool("as-wordcount"), recordingHost("0").host, { text: "a" }, { memoryLimitBytes: 65_536 }));
    expect(r.status === "error" || r.status === "success").toBe(true); // AS starts with 1 page: allowed
    const r2 = await runner.run(invocation(tool("c-sha"), recordingHost("0").host, {}, { memoryLimitBytes: 65_536 }));
    expect(r2.status === "error" && r2.error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
  });

  it("a stop from outside (the watchdog, an abort) lands on a refill and names its fuel count; the same stop point replays exactly", async () => {
    const hang = tool("hang");
    const stopped = async (meter: FuelMeter) => {
      const r = await runner.run({ ...invocation(hang, recordingHost("0").host), meter });
      return r.status === "error" ? r.error : null;
    };
    let refills = 0;
    const watchdog = await stopped(new FuelMeter({ budget: 1n << 40n, poll: () => (++refills === 3 ? "watchdog" : null) }));
    expect(watchdog?.code).toBe("EXEC_TOOL_TIMEOUT");
    expect(watchdog?.details).toMatchObject({ reason: "watchdog" });
    const fuel = BigInt(watchdog!.details["fuel"] as number);
    expect(fuel).toBeGreaterThan(FUEL_SLICE);
    const abort = await stopped(new FuelMeter({ budget: 1n << 40n, poll: () => "abort" }));
    expect(abort?.code).toBe("EXEC_ABORTED");
    const replayed = await stopped(new FuelMeter({ budget: 1n << 40n, stopAt: { fuel, reason: "watchdog" } }));
    expect(replayed?.toDetails()).toEqual(watchdog?.toDetails());
  });

  it("the reach ABI: too-small buffer, fetch, unknown op, invalid request, out-of-bounds pointer", async () => {
    const { host, calls } = recordingHost("0");
    const r = await runner.run(invocation(tool("reach-call"), host));
    expect(r.status).toBe("success");
    if (r.status !== "success") return;
    const o = r.output as Record<string, unknown>;
    const clock = JSON.parse(calls[0]!.response);
    expect(o).toEqual({
      small: ReachStatus.BUFFER_TOO_SMALL,
      needed: calls[0]!.response.length,
      fetched: ReachStatus.OK,
      clock,
      unknown: ReachStatus.UNKNOWN_OP,
      invalid: ReachStatus.INVALID_ARGUMENT,
      oob: ReachStatus.INVALID_ARGUMENT,
      log: ReachStatus.OK,
    });
    expect(calls.map((c) => c.op)).toEqual(["clock.now", "log"]); // the too-small call ran the op once
  });

  it("a POLICY_VIOLATION from a reach call halts the tool and is reported", async () => {
    const r = await runner.run(invocation(tool("reach-call"), recordingHost("0", ["clock.now"]).host));
    expect(r.status === "error" && r.error.code).toBe("POLICY_VIOLATION");
  });

  it("the escape corpus: every attempt is refused, the violation is reported, the workspace is unchanged", async () => {
    const ws = Workspace.fromResources([{ root: "data", access: "readwrite", files: { "input.txt": new TextEncoder().encode("x") } }]);
    const setup = ws.beginStep();
    setup.symlink("data/escape-link", "/");
    setup.commit();
    const before = ws.digest();
    const step = ws.beginStep();
    const r = await new WasmToolRunner({ filesystem: () => ({ fs: step, preopens: [{ guest: "/data", path: "data" }] }) })
      .run(invocation(tool("escape"), recordingHost("0").host));
    expect(r.status === "error" && r.error.code).toBe("POLICY_VIOLATION");
    expect(r.status === "error" && r.error.details["violationType"]).toBe("RESOURCE_ACCESS");
    expect(step.violation()).not.toBeNull();
    step.rollback();
    expect(ws.digest()).toBe(before);
    expect(Errno.NOTCAPABLE).toBe(76);
  });
});
