/**
 * Snapshots of the QuickJS engine's linear memory, so that a prepared sandbox (runtime, context and prelude) can be
 * put back byte for byte before each invocation instead of being built again (README.md "Reuse").
 *
 * The engine is quickjs-emscripten's release-sync build: emscripten's default layout, static data and BSS from
 * address 1024, then the C stack (`-s STACK_SIZE=5MB`, templates/Variant.mk), growing down from `__stack_pointer`'s
 * initial value, then the heap from that same address up to emscripten's `sbrk` break, which dlmalloc only ever
 * raises (emscripten builds it with `MORECORE_CANNOT_TRIM`). A snapshot holds the static region, the top of the
 * stack a tool can have used (below it the stack is dead and never read before it is written) and the heap up to
 * the break; restoring it also zeroes whatever the heap grew into since, so every byte an invocation could have
 * written, on the heap or in static data, is the snapshot's again.
 *
 * The layout is read from the engine's own bytes (the stack pointer global's initial value, and the one word of
 * static data initialised to it: `sbrk`'s break) and checked against the running instance; any surprise disables
 * snapshots (the runner then gives every invocation a fresh engine and sandbox: the same starting bytes, slower).
 * @module
 */
import { Reader } from "../wasm-binary.ts";

/** quickjs-emscripten's `-s STACK_SIZE=5MB`: the C stack below the stack pointer's initial value. */
export const ENGINE_STACK_BYTES = 5 * 1024 * 1024;
/** Stack restored below the stack top beyond QuickJS's own stack limit (C frames between its checks). */
const STACK_SLACK_BYTES = 64 * 1024;
/** Bytes above the break checked to be zero when a snapshot is taken (a cheap test that the break is right). */
const ZERO_CHECK_BYTES = 64 * 1024;

/** Where the engine keeps what a snapshot must hold. */
export type MemoryLayout = {
  /** Initial stack pointer: the top of the C stack and the start of the heap. */
  readonly stackTop: number;
  /** End of static data and BSS (the bottom of the C stack). */
  readonly staticEnd: number;
  /** Address of `sbrk`'s break (a 32-bit word in static data). */
  readonly breakAddress: number;
};

const SECTION_GLOBAL = 6;
const SECTION_DATA = 11;
const I32 = 0x7f;
const I32_CONST = 0x41;
const END = 0x0b;

/** Signed LEB128 (i32) at the reader's position. */
function readI32(r: Reader): number {
  let result = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    const b = r.byte();
    result |= (b & 0x7f) << shift;
    shift += 7;
    if ((b & 0x80) === 0) return shift < 32 && (b & 0x40) !== 0 ? result | (~0 << shift) : result;
  }
  return Number.NaN;
}

/** `i32.const n; end` → n, or NaN for any other constant expression. */
function constExpr(r: Reader): number {
  if (r.byte() !== I32_CONST) return Number.NaN;
  const n = readI32(r);
  return r.byte() === END ? n : Number.NaN;
}

/**
 * Read the memory layout of an emscripten engine from its (uninstrumented) bytes.
 * @param module the engine's WebAssembly bytes
 * @returns the layout, or `null` when the module does not look like quickjs-emscripten's release build (one mutable
 *   i32 global, active data segments only, exactly one static word initialised to the stack top)
 * @example memoryLayout(bytes)?.breakAddress // 86864 for @jitl/quickjs-wasmfile-release-sync 0.32.0
 */
export function memoryLayout(module: Uint8Array): MemoryLayout | null {
  try {
    const r = new Reader(module, 8, module.length);
    let stackTop = Number.NaN;
    const segments: Array<{ at: number; bytes: Uint8Array }> = [];
    while (r.pos < r.end) {
      const id = r.byte();
      const len = r.u();
      const section = new Reader(module, r.pos, r.pos + len);
      r.skip(len);
      if (id === SECTION_GLOBAL) {
        if (section.u() !== 1 || section.byte() !== I32 || section.byte() !== 1) return null;
        stackTop = constExpr(section);
      } else if (id === SECTION_DATA) {
        for (let n = section.u(); n > 0; n--) {
          if (section.u() !== 0) return null; // passive or explicit-memory segments: not this build
          const at = constExpr(section);
          const size = section.u();
          if (!Number.isInteger(at) || at < 0) return null;
          segments.push({ at, bytes: module.subarray(section.pos, section.pos + size) });
          section.skip(size);
        }
      }
    }
    if (!Number.isInteger(stackTop) || stackTop % 16 !== 0) return null;
    const staticEnd = stackTop - ENGINE_STACK_BYTES;
    const breaks: number[] = [];
    for (const { at, bytes } of segments) {
      if (at + bytes.length > staticEnd) return null;
      for (let a = (at + 3) & ~3; a < at + bytes.length; a += 4) {
        // A segment's trailing zero bytes are left out of the module; what is missing reads as 0.
        const word = ((bytes[a - at] ?? 0) | ((bytes[a - at + 1] ?? 0) << 8) | ((bytes[a - at + 2] ?? 0) << 16) | ((bytes[a - at + 3] ?? 0) << 24)) >>> 0;
        if (word === stackTop) breaks.push(a);
      }
    }
    return breaks.length === 1 ? { stackTop, staticEnd, breakAddress: breaks[0]! } : null;
  } catch {
    return null;
  }
}

/**
 * The current `sbrk` break of an engine.
 * @param memory the engine's memory
 * @param layout its layout
 * @returns the break address
 */
export function currentBreak(memory: WebAssembly.Memory, layout: MemoryLayout): number {
  return new Uint32Array(memory.buffer, layout.breakAddress, 1)[0]!;
}

/** A copy of the memory an invocation can change, taken between invocations (no engine call is running). */
export class MemorySnapshot {
  /** The break when the snapshot was taken. */
  readonly break: number;
  readonly #layout: MemoryLayout;
  readonly #static: Uint8Array;
  readonly #stack: Uint8Array;
  readonly #heap: Uint8Array;

  private constructor(layout: MemoryLayout, brk: number, low: Uint8Array, stack: Uint8Array, heap: Uint8Array) {
    this.#layout = layout;
    this.break = brk;
    this.#static = low;
    this.#stack = stack;
    this.#heap = heap;
  }

  /**
   * Take a snapshot.
   * @param memory the engine's memory
   * @param layout its layout (`memoryLayout`)
   * @param stackBytes how much of the stack below its top an invocation can use (QuickJS's stack limit)
   * @returns the snapshot, or `null` when the memory does not match the layout (the break is out of range, or the
   *   memory just above it is not untouched)
   */
  static take(memory: WebAssembly.Memory, layout: MemoryLayout, stackBytes: number): MemorySnapshot | null {
    const u8 = new Uint8Array(memory.buffer);
    const brk = currentBreak(memory, layout);
    if (brk < layout.stackTop || brk > u8.length || brk % 4 !== 0) return null;
    const above = u8.subarray(brk, Math.min(u8.length, brk + ZERO_CHECK_BYTES));
    if (above.some((b) => b !== 0)) return null;
    const stackLow = Math.max(layout.staticEnd, layout.stackTop - stackBytes - STACK_SLACK_BYTES);
    return new MemorySnapshot(layout, brk, u8.slice(0, layout.staticEnd), u8.slice(stackLow, layout.stackTop), u8.slice(layout.stackTop, brk));
  }

  /**
   * Whether the heap's break is still where it was when the snapshot was taken.
   * @param memory the engine's memory
   * @returns true when no invocation grew the heap since
   */
  breakUnmoved(memory: WebAssembly.Memory): boolean {
    return currentBreak(memory, this.#layout) === this.break;
  }

  /** Bytes a restore copies. */
  get size(): number {
    return this.#static.length + this.#stack.length + this.#heap.length;
  }

  /**
   * Put the snapshot back: zero what the heap grew into since, then copy static data, stack top and heap.
   * @param memory the engine's memory (the same one, possibly grown)
   * @throws Error when the break went below the snapshot's (the allocator never gives memory back; the engine is
   *   not in a state this snapshot can describe)
   */
  restore(memory: WebAssembly.Memory): void {
    const u8 = new Uint8Array(memory.buffer);
    const now = currentBreak(memory, this.#layout);
    if (now < this.break || now > u8.length) throw new Error(`the engine's heap break moved from ${this.break} to ${now}`);
    if (now > this.break) u8.fill(0, this.break, now);
    u8.set(this.#static, 0);
    u8.set(this.#stack, this.#layout.stackTop - this.#stack.length);
    u8.set(this.#heap, this.#layout.stackTop);
  }
}
