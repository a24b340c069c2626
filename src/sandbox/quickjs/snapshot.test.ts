import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENGINE_STACK_BYTES, MemorySnapshot, memoryLayout } from "./snapshot.ts";
import type { MemoryLayout } from "./snapshot.ts";

const ENGINE = fileURLToPath(new URL("../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm", import.meta.url));

describe("memoryLayout", () => {
  it("finds the stack top and sbrk's break word in the installed engine", () => {
    const layout = memoryLayout(new Uint8Array(readFileSync(ENGINE)))!;
    expect(layout).not.toBeNull();
    expect(layout.staticEnd).toBe(layout.stackTop - ENGINE_STACK_BYTES);
    expect(layout.breakAddress % 4).toBe(0);
    expect(layout.breakAddress).toBeGreaterThan(1024);
    expect(layout.breakAddress).toBeLessThan(layout.staticEnd);
  });

  it("refuses modules that are not an emscripten engine", () => {
    const empty = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
    expect(memoryLayout(empty)).toBeNull();
    expect(memoryLayout(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 6, 200]))).toBeNull(); // truncated section
    expect(memoryLayout(new Uint8Array(64).fill(0xff))).toBeNull();
  });
});

describe("MemorySnapshot", () => {
  // A small layout: static data below 4096, a 4 KiB stack, the heap from 8192; the break word at 1024.
  const layout: MemoryLayout = { stackTop: 8192, staticEnd: 4096, breakAddress: 1024 };
  const setup = () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 4 });
    const u8 = new Uint8Array(memory.buffer);
    for (let i = 1100; i < 4096; i++) u8[i] = i & 0xff;
    for (let i = 8192; i < 9000; i++) u8[i] = (i * 7) & 0xff;
    new Uint32Array(memory.buffer, 1024, 1)[0] = 9000;
    return memory;
  };

  it("puts static data, the top of the stack and the heap back, and zeroes what the heap grew into", () => {
    const memory = setup();
    const snap = MemorySnapshot.take(memory, layout, 1024)!;
    expect(snap).not.toBeNull();
    const before = new Uint8Array(memory.buffer).slice(0, 9000);
    memory.grow(1);
    const u8 = new Uint8Array(memory.buffer);
    u8.fill(0xaa, 2000, 3000); // static data
    u8.fill(0xbb, 7000, 8192); // stack top
    u8.fill(0xcc, 8192, 80_000); // heap, and beyond the old break
    new Uint32Array(memory.buffer, 1024, 1)[0] = 80_000;
    expect(snap.breakUnmoved(memory)).toBe(false);
    snap.restore(memory);
    const after = new Uint8Array(memory.buffer);
    expect(after.slice(0, 4096)).toEqual(before.slice(0, 4096));
    expect(after.slice(8192, 9000)).toEqual(before.slice(8192, 9000));
    expect(after.slice(4096, 8192)).toEqual(before.slice(4096, 8192)); // the whole stack: 1 KiB + 64 KiB of slack covers it
    expect(after.subarray(9000, 80_000).every((b) => b === 0)).toBe(true);
    expect(snap.breakUnmoved(memory)).toBe(true);
  });

  it("refuses a break outside the heap, touched memory above the break, and a break that went down", () => {
    const memory = setup();
    new Uint32Array(memory.buffer, 1024, 1)[0] = 100;
    expect(MemorySnapshot.take(memory, layout, 1024)).toBeNull();
    new Uint32Array(memory.buffer, 1024, 1)[0] = 9000;
    new Uint8Array(memory.buffer)[9500] = 1;
    expect(MemorySnapshot.take(memory, layout, 1024)).toBeNull();
    new Uint8Array(memory.buffer)[9500] = 0;
    const snap = MemorySnapshot.take(memory, layout, 1024)!;
    new Uint32Array(memory.buffer, 1024, 1)[0] = 8500;
    expect(() => snap.restore(memory)).toThrow(/break moved/);
  });
});
