/**
 * Enforce a memory limit inside the module itself: rewrite the maximum of each defined linear memory (binary
 * format §5.5.5 "Memory Section", limits §5.3.7) to at most `limitBytes / 65536` pages. `memory.grow` past it then
 * returns −1 in the guest (malloc returns NULL) on every runtime, deterministically, and the engine never commits
 * more than the limit. Only the memory section is rewritten; every other byte is kept.
 * @module
 */
import { ReachError } from "../../protocol/errors.ts";

/** Bytes in one WebAssembly page. */
export const WASM_PAGE_BYTES = 65_536;

function readLeb(bytes: Uint8Array, at: number): [value: number, next: number] {
  let result = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    const b = bytes[at + i];
    if (b === undefined) throw malformed("truncated LEB128");
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [result, at + i + 1];
    shift += 7;
  }
  throw malformed("LEB128 longer than 5 bytes");
}

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

function malformed(why: string): ReachError {
  return new ReachError("PACK_MALFORMED", `the tool's WebAssembly module is malformed (${why}); rebuild it`);
}

/**
 * Cap the maximum of every memory the module defines.
 * @param wasm the module bytes (not modified)
 * @param limitBytes the memory limit in bytes (≥ one page)
 * @returns new bytes with the memory section rewritten (or a copy when the module defines no memory)
 * @throws RangeError when `limitBytes` is not a safe integer ≥ 65536
 * @throws ReachError `PACK_MALFORMED` for an unreadable module or a 64-bit memory; `EXEC_RESOURCE_EXHAUSTED` when
 *   a memory's initial size is already above the limit
 * @example const capped = limitMemory(bytes, 64 * 1024 * 1024);
 */
export function limitMemory(wasm: Uint8Array, limitBytes: number): Uint8Array {
  if (!Number.isSafeInteger(limitBytes) || limitBytes < WASM_PAGE_BYTES) {
    throw new RangeError(`"limitBytes" expected a safe integer ≥ ${WASM_PAGE_BYTES}, got ${limitBytes}`);
  }
  const maxPages = Math.min(65_536, Math.floor(limitBytes / WASM_PAGE_BYTES));
  if (wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) {
    throw malformed("no \\0asm header");
  }
  if (wasm[4] !== 1 || wasm[5] !== 0 || wasm[6] !== 0 || wasm[7] !== 0) {
    throw malformed("not a core module of version 1 (a component?)");
  }
  let at = 8;
  while (at < wasm.length) {
    const id = wasm[at]!;
    const [size, body] = readLeb(wasm, at + 1);
    const end = body + size;
    if (end > wasm.length) throw malformed("a section runs past the end");
    if (id === 5) {
      let [count, p] = readLeb(wasm, body);
      const out: number[] = [...leb(count)];
      while (count-- > 0) {
        const flags = wasm[p];
        if (flags === undefined || flags > 3) throw malformed("unsupported memory limits (64-bit memory?)");
        const [min, p1] = readLeb(wasm, p + 1);
        let max = 65_536;
        p = p1;
        if ((flags & 1) !== 0) [max, p] = readLeb(wasm, p);
        if (min > maxPages) {
          throw new ReachError(
            "EXEC_RESOURCE_EXHAUSTED",
            `the tool's initial memory (${min} pages of 64 KiB) is above the memory limit of ${limitBytes} bytes; ` +
              `raise memoryLimitBytes or build the tool with a smaller initial memory`,
            { details: { reason: "memory", initialPages: min, limitBytes } },
          );
        }
        out.push(flags | 1, ...leb(min), ...leb(Math.min(max, maxPages)));
      }
      if (p !== end) throw malformed("memory section has trailing bytes");
      const section = [5, ...leb(out.length), ...out];
      const result = new Uint8Array(at + section.length + (wasm.length - end));
      result.set(wasm.subarray(0, at), 0);
      result.set(section, at);
      result.set(wasm.subarray(end), at + section.length);
      return result;
    }
    at = end;
  }
  return wasm.slice();
}
