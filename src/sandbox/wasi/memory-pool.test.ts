import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { limitMemory } from "./memory-limit.ts";
import { importOwnMemory, MemoryPool, POOLED_MEMORY_MODULE } from "./memory-pool.ts";
import { WasmToolRunner } from "./runner.ts";
import { invocation, recordingHost, wat } from "./_test-support.ts";

/**
 * A hostile tool that checks it starts from a fresh memory and then dirties it: exit 1 when byte 100 is not 0 (a
 * previous invocation's write survived), exit 2 when its data segment is not intact, exit 3 when the memory is
 * not at its initial size; then it writes 0xff at 100, overwrites its data segment, optionally grows the memory,
 * and prints `{}`.
 */
const DIRTY = (grow: boolean) => `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{}")
  (func (export "_start")
    (if (i32.ne (i32.load8_u (i32.const 100)) (i32.const 0)) (then (call $exit (i32.const 1))))
    (if (i32.ne (i32.load16_u (i32.const 16)) (i32.const 0x7d7b)) (then (call $exit (i32.const 2))))
    (if (i32.ne (memory.size) (i32.const 1)) (then (call $exit (i32.const 3))))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (i32.store8 (i32.const 100) (i32.const 255))
    (i32.store16 (i32.const 16) (i32.const 0x7878))
    ${grow ? "(drop (memory.grow (i32.const 1)))" : ""}))`;

describe("importOwnMemory", () => {
  it("turns the one defined memory into an import with the same limits, keeping every other import", async () => {
    const code = limitMemory(await wat(DIRTY(false)), 4 * 65_536);
    const m = importOwnMemory(code)!;
    expect(m).not.toBeNull();
    expect([m.initialPages, m.maximumPages]).toEqual([1, 4]);
    const module = new WebAssembly.Module(m.bytes as Uint8Array<ArrayBuffer>);
    expect(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}:${i.kind}`)).toEqual([
      "wasi_snapshot_preview1.fd_write:function",
      "wasi_snapshot_preview1.proc_exit:function",
      `${POOLED_MEMORY_MODULE}.memory:memory`,
    ]);
    expect(WebAssembly.Module.exports(module).map((e) => `${e.name}:${e.kind}`)).toEqual(["memory:memory", "_start:function"]);
  });

  it("adds an import section to a module that had none", async () => {
    const code = limitMemory(await wat(`(module (memory (export "memory") 2) (data (i32.const 0) "hi") (func (export "f") (result i32) (i32.load8_u (i32.const 1))))`), 8 * 65_536);
    const m = importOwnMemory(code)!;
    const memory = new WebAssembly.Memory({ initial: 2, maximum: 8 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(m.bytes as Uint8Array<ArrayBuffer>), { [POOLED_MEMORY_MODULE]: { memory } });
    expect((inst.exports["f"] as () => number)()).toBe("i".charCodeAt(0));
    expect(inst.exports["memory"]).toBe(memory);
  });

  it("leaves modules alone that import a memory, define none, or define one without a maximum", async () => {
    expect(importOwnMemory(await wat(`(module (import "env" "memory" (memory 1)) (func (export "_start")))`))).toBeNull();
    expect(importOwnMemory(await wat(`(module (func (export "_start")))`))).toBeNull();
    expect(importOwnMemory(await wat(`(module (memory 1) (func (export "_start")))`))).toBeNull();
  });

  it("refuses (PACK_MALFORMED) a section that runs past the end", async () => {
    const code = limitMemory(await wat(DIRTY(false)), 65_536 * 4);
    expect(() => importOwnMemory(code.subarray(0, code.length - 3))).toThrow(expect.objectContaining({ code: "PACK_MALFORMED" }));
  });
});

describe("MemoryPool", () => {
  it("hands a kept memory out zero-filled, and drops one that grew", () => {
    const pool = new MemoryPool(1, 4);
    const a = pool.take();
    new Uint8Array(a.buffer)[7] = 9;
    pool.give(a);
    expect(pool.size).toBe(1);
    const b = pool.take();
    expect(b).toBe(a);
    expect(new Uint8Array(b.buffer).some((x) => x !== 0)).toBe(false);
    b.grow(1);
    pool.give(b);
    expect(pool.size).toBe(0);
    expect(pool.take().buffer.byteLength).toBe(65_536);
  });
});

describe("WasmToolRunner with reused memories", () => {
  const runner = new WasmToolRunner();

  it("starts every invocation from a fresh memory: zeros, the data segments, the initial size", async () => {
    for (const grow of [false, true]) {
      const code = await wat(DIRTY(grow));
      for (let i = 0; i < 4; i++) {
        const r = await runner.run(invocation(code, recordingHost("1").host));
        expect(r.status, `grow=${grow} invocation ${i}: ${r.status === "error" ? r.error.message : ""}`).toBe("success");
      }
    }
  });

  it("gives the AssemblyScript tool the same output, fuel and host calls on a reused memory as on a new one", async () => {
    const code = new Uint8Array(readFileSync(new URL("../../../wasm-tools/build/as-wordcount.wasm", import.meta.url)));
    const runs = [];
    for (let i = 0; i < 3; i++) {
      const h = recordingHost("5");
      const r = await runner.run(invocation(code, h.host, { text: `run ${i === 1 ? "a much longer text this time" : "x"}` }));
      runs.push({ r, calls: h.calls });
    }
    expect(runs[0]!.r).toEqual(runs[2]!.r);
    expect(runs[0]!.calls).toEqual(runs[2]!.calls);
    expect(runs[0]!.r.status).toBe("success");
  });
});
