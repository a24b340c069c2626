/**
 * Bounds-checked access to a guest's linear memory. Every pointer and length a guest passes is untrusted: each
 * access checks `ptr + len <= memory.byteLength` (with integers, so nothing can overflow) and fails with
 * `EFAULT` (WASI preview1 `errno::fault`) instead of reading or writing outside. Views are made per access,
 * because `memory.grow` detaches the previous `ArrayBuffer`.
 * @module
 */
import { Errno, WasiErrno } from "./errno.ts";

/** Largest single guest buffer the shim copies in one call (1 GiB); larger requests are `EINVAL`/`EFAULT`. */
export const MAX_GUEST_SPAN = 1 << 30;

/**
 * A guest memory wrapper. `bind` it to the instance's exported memory after instantiation; before that every
 * access is `EFAULT`.
 * @example
 * const mem = new GuestMemory(); mem.bind(instance.exports.memory as WebAssembly.Memory);
 * mem.setU32(ptr, 42);
 */
export class GuestMemory {
  #memory: WebAssembly.Memory | null = null;

  /**
   * Attach the guest's memory.
   * @param memory the instance's exported `memory`
   * @throws TypeError when `memory` is not a WebAssembly.Memory
   * @example mem.bind(instance.exports.memory as WebAssembly.Memory)
   */
  bind(memory: WebAssembly.Memory): void {
    if (!(memory instanceof WebAssembly.Memory)) throw new TypeError(`"memory" expected a WebAssembly.Memory`);
    this.#memory = memory;
  }

  /**
   * Current size of the memory in bytes (0 when unbound).
   * @returns the byte length
   * @example mem.byteLength()
   */
  byteLength(): number {
    return this.#memory === null ? 0 : this.#memory.buffer.byteLength;
  }

  #buffer(): ArrayBuffer {
    if (this.#memory === null) throw new WasiErrno(Errno.FAULT, "the guest exports no memory");
    return this.#memory.buffer as ArrayBuffer;
  }

  /**
   * Check a span and return it as a view (shared with the guest: writes go straight into its memory).
   * @param ptr guest address (u32)
   * @param len byte length (u32)
   * @returns a Uint8Array over `[ptr, ptr + len)`
   * @throws WasiErrno `EFAULT` when the span is not inside the memory or the arguments are not u32 values
   * @example mem.bytes(ptr, len).set(data)
   */
  bytes(ptr: number, len: number): Uint8Array {
    const buf = this.#buffer();
    if (!isU32(ptr) || !isU32(len) || len > MAX_GUEST_SPAN || ptr + len > buf.byteLength) {
      throw new WasiErrno(Errno.FAULT, `span [${ptr}, +${len}) is outside guest memory`);
    }
    return new Uint8Array(buf, ptr, len);
  }

  #view(ptr: number, size: number, align: number): DataView {
    const buf = this.#buffer();
    if (!isU32(ptr) || ptr + size > buf.byteLength) throw new WasiErrno(Errno.FAULT, `address ${ptr} out of bounds`);
    // WASI structures are naturally aligned; wasi-libc never passes a misaligned pointer, a hostile guest may.
    if (ptr % align !== 0) throw new WasiErrno(Errno.FAULT, `address ${ptr} is not ${align}-byte aligned`);
    return new DataView(buf, ptr, size);
  }

  /** Read a u32 (little-endian). @param ptr address @returns the value @throws WasiErrno EFAULT @example mem.getU32(p) */
  getU32(ptr: number): number {
    return this.#view(ptr, 4, 4).getUint32(0, true);
  }
  /** Read a u64 as bigint. @param ptr address @returns the value @throws WasiErrno EFAULT @example mem.getU64(p) */
  getU64(ptr: number): bigint {
    return this.#view(ptr, 8, 8).getBigUint64(0, true);
  }
  /** Read a u16. @param ptr address @returns the value @throws WasiErrno EFAULT @example mem.getU16(p) */
  getU16(ptr: number): number {
    return this.#view(ptr, 2, 2).getUint16(0, true);
  }
  /** Read a u8. @param ptr address @returns the value @throws WasiErrno EFAULT @example mem.getU8(p) */
  getU8(ptr: number): number {
    return this.#view(ptr, 1, 1).getUint8(0);
  }
  /** Write a u8. @param ptr address @param v value @returns nothing @throws WasiErrno EFAULT @example mem.setU8(p, 1) */
  setU8(ptr: number, v: number): void {
    this.#view(ptr, 1, 1).setUint8(0, v);
  }
  /** Write a u16. @param ptr address @param v value @returns nothing @throws WasiErrno EFAULT @example mem.setU16(p, 1) */
  setU16(ptr: number, v: number): void {
    this.#view(ptr, 2, 2).setUint16(0, v, true);
  }
  /** Write a u32. @param ptr address @param v value @returns nothing @throws WasiErrno EFAULT @example mem.setU32(p, 1) */
  setU32(ptr: number, v: number): void {
    this.#view(ptr, 4, 4).setUint32(0, v >>> 0, true);
  }
  /** Write a u64. @param ptr address @param v value @returns nothing @throws WasiErrno EFAULT @example mem.setU64(p, 1n) */
  setU64(ptr: number, v: bigint): void {
    this.#view(ptr, 8, 8).setBigUint64(0, BigInt.asUintN(64, v), true);
  }

  /**
   * Check a whole struct span before writing any field of it, so a failing call leaves guest memory untouched.
   * @param ptr address
   * @param size struct size in bytes
   * @param align required alignment
   * @returns nothing
   * @throws WasiErrno EFAULT
   * @example mem.check(buf, 64, 8)
   */
  check(ptr: number, size: number, align: number): void {
    this.#view(ptr, size, align);
  }

  /**
   * Read an iovec / ciovec array (`{buf: u32, buf_len: u32}`, 8 bytes each) and check every buffer.
   * @param ptr address of the array
   * @param count number of entries
   * @returns the buffers as views into guest memory
   * @throws WasiErrno `EFAULT` for a span outside memory; `EINVAL` for more than 1024 entries (IOV_MAX) or a total
   *   length above 2^31
   * @example for (const b of mem.iovecs(iovs, n)) …
   */
  iovecs(ptr: number, count: number): Uint8Array[] {
    if (!isU32(count) || count > 1024) throw new WasiErrno(Errno.INVAL, `iovec count ${count} exceeds IOV_MAX`);
    const raw = this.bytes(ptr, count * 8);
    if (ptr % 4 !== 0) throw new WasiErrno(Errno.FAULT, "iovec array is not 4-byte aligned");
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const out: Uint8Array[] = [];
    let total = 0;
    for (let i = 0; i < count; i++) {
      const len = dv.getUint32(i * 8 + 4, true);
      total += len;
      if (total > 0x7fffffff) throw new WasiErrno(Errno.INVAL, "iovec total length overflows");
      out.push(this.bytes(dv.getUint32(i * 8, true), len));
    }
    return out;
  }

  /**
   * Decode a UTF-8 string from guest memory.
   * @param ptr address
   * @param len byte length, at most `max`
   * @param max the largest accepted length (default 4096, POSIX PATH_MAX)
   * @returns the string
   * @throws WasiErrno `EFAULT` (span), `ENAMETOOLONG` (too long), `EILSEQ` (not UTF-8)
   * @example mem.string(pathPtr, pathLen)
   */
  string(ptr: number, len: number, max = 4096): string {
    if (isU32(len) && len > max) throw new WasiErrno(Errno.NAMETOOLONG, `string of ${len} bytes is too long`);
    const view = this.bytes(ptr, len);
    try {
      return strictDecoder.decode(view);
    } catch {
      throw new WasiErrno(Errno.ILSEQ, "string is not valid UTF-8");
    }
  }
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** True for an integer 0 … 2^32−1 (a wasm i32 reinterpreted as unsigned). */
function isU32(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 0xffffffff;
}

/**
 * Reinterpret a wasm i32 argument (which JS receives as a signed number) as u32.
 * @param n the argument
 * @returns `n >>> 0`, or -1 when `n` is not a number (so the bounds checks refuse it)
 * @example u32(-1) // 4294967295
 */
export function u32(n: unknown): number {
  return typeof n === "number" && Number.isInteger(n) ? n >>> 0 : -1;
}
