/**
 * Enforce a memory limit inside the module itself: rewrite the maximum of each defined linear memory (binary
 * format §5.5.5 "Memory Section", limits §5.3.7) to at most `limitBytes / 65536` pages. `memory.grow` past it then
 * returns −1 in the guest (malloc returns NULL) on every runtime, deterministically, and the engine never commits
 * more than the limit. Only the memory section is rewritten; every other byte is kept.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { capMemory, isComponent, WASM_PAGE_BYTES } from "../wasm-binary.ts";

export { WASM_PAGE_BYTES };

/**
 * Cap the maximum of every memory the module defines.
 * @param wasm the module bytes (not modified)
 * @param limitBytes the memory limit in bytes (≥ one page)
 * @returns new bytes with the memory section rewritten (or a copy when the module defines no memory)
 * @throws RangeError when `limitBytes` is not a safe integer ≥ 65536
 * @throws ReachError `PACK_MALFORMED` for an unreadable module, a component, or a shared or 64-bit memory; `EXEC_RESOURCE_EXHAUSTED` when
 *   a memory's initial size is already above the limit
 * @example const capped = limitMemory(bytes, 64 * 1024 * 1024);
 */
export function limitMemory(wasm: Uint8Array, limitBytes: number): Uint8Array {
  if (!Number.isSafeInteger(limitBytes) || limitBytes < WASM_PAGE_BYTES) {
    throw new RangeError(`"limitBytes" expected a safe integer ≥ ${WASM_PAGE_BYTES}, got ${limitBytes}`);
  }
  const maxPages = Math.min(65_536, Math.floor(limitBytes / WASM_PAGE_BYTES));
  if (wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) {
    throw new ReachError("PACK_MALFORMED", "the tool's WebAssembly module is malformed (no \\0asm header); rebuild it");
  }
  if (isComponent(wasm)) {
    throw new ReachError("PACK_MALFORMED", 'the tool is a WebAssembly component, not a core module; declare it with kind "component"');
  }
  const capped = capMemory(wasm, maxPages);
  return capped === wasm ? wasm.slice() : capped;
}
