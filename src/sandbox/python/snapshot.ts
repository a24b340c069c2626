/**
 * Snapshots of a prepared interpreter's memory, so that every invocation starts from the same bytes (README.md
 * "Reuse"). The interpreter's memory is, in address order, the C stack ([0, 65536)), static data and BSS, then the
 * heap up to `sbrk`'s break (`BREAK_ADDRESS`), then zeros. A snapshot holds [0, break) of the prepared interpreter;
 * restoring it copies that back and zeroes everything above it, up to the end of the (possibly grown) memory — not
 * only up to the current break, since Python can write anywhere in its memory (`uctypes.bytearray_at`). The memory
 * is then byte for byte that of the prepared interpreter, except that it may be larger, which nothing in the module
 * can observe but `sbrk`'s decision to ask the host for more (the same answer either way: see `imports.ts`).
 * @module
 */
import { BREAK_ADDRESS } from "./interpreter.ts";

/**
 * The current break of an interpreter's heap.
 * @param memory the interpreter's memory
 * @returns the break address
 * @example currentBreak(interp.memory) // 1245184
 */
export function currentBreak(memory: WebAssembly.Memory): number {
  return new DataView(memory.buffer).getUint32(BREAK_ADDRESS, true);
}

/** A copy of [0, break) of a prepared interpreter, taken between calls. */
export class MemorySnapshot {
  /** The break when the snapshot was taken. */
  readonly break: number;
  readonly #bytes: Uint8Array;

  private constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.break = bytes.length;
  }

  /**
   * Take a snapshot.
   * @param memory the interpreter's memory
   * @returns the snapshot, or null when the break is not a plausible address or the memory above it is not all
   *   zero (then no snapshot: the interpreter serves one invocation only)
   * @example MemorySnapshot.take(interp.memory)?.size // 1310720
   */
  static take(memory: WebAssembly.Memory): MemorySnapshot | null {
    const brk = currentBreak(memory);
    const u8 = new Uint8Array(memory.buffer);
    if (brk <= BREAK_ADDRESS || brk > u8.length || brk % 8 !== 0) return null;
    if (u8.subarray(brk).some((b) => b !== 0)) return null;
    return new MemorySnapshot(u8.slice(0, brk));
  }

  /** Bytes a restore copies (it also zeroes the rest of the memory). */
  get size(): number {
    return this.#bytes.length;
  }

  /**
   * Put the snapshot back: zero the memory above the snapshot's break, copy the snapshot below it.
   * @param memory the same interpreter's memory (possibly grown)
   * @example snapshot.restore(interp.memory)
   */
  restore(memory: WebAssembly.Memory): void {
    const u8 = new Uint8Array(memory.buffer);
    u8.fill(0, this.break);
    u8.set(this.#bytes, 0);
  }
}
