/**
 * Snapshots of a prepared interpreter's memory, so that every invocation starts from the same bytes (README.md
 * "Reuse"). The interpreter's memory is, in address order, the C stack ([0, 65536)), static data and BSS, then the
 * heap up to `sbrk`'s break (`BREAK_ADDRESS`; the allocator never lowers it). Everything above the break is zero
 * until the heap grows into it. A snapshot holds [0, break); restoring it zeroes what the heap grew into since and
 * copies the snapshot back, which makes the memory byte for byte that of the prepared interpreter again — except
 * that the memory itself may be larger, which nothing in the module can observe but `sbrk`'s decision to ask the
 * host for more (the same answer either way: see `imports.ts`).
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
   * @returns the snapshot, or null when the break is not a plausible address (then no snapshot: one invocation only)
   */
  static take(memory: WebAssembly.Memory): MemorySnapshot | null {
    const brk = currentBreak(memory);
    if (brk <= BREAK_ADDRESS || brk > memory.buffer.byteLength || brk % 8 !== 0) return null;
    return new MemorySnapshot(new Uint8Array(memory.buffer, 0, brk).slice());
  }

  /** Bytes a restore copies. */
  get size(): number {
    return this.#bytes.length;
  }

  /**
   * Put the snapshot back.
   * @param memory the same interpreter's memory (possibly grown)
   * @throws Error when the break is below the snapshot's or past the memory (not a state this snapshot stands for)
   */
  restore(memory: WebAssembly.Memory): void {
    const u8 = new Uint8Array(memory.buffer);
    const now = currentBreak(memory);
    if (now < this.break || now > u8.length) throw new Error(`the interpreter's heap break moved from ${this.break} to ${now}`);
    if (now > this.break) u8.fill(0, this.break, now);
    u8.set(this.#bytes, 0);
  }
}
