/**
 * Just enough of the WebAssembly binary formats for the runners: list the core modules embedded in a component
 * (Component Model binary format, top-level `core module` sections, id 1) and cap the memory a core module defines
 * (core spec §5.5.8 memory section, §5.3.8 limits). Shared by the `wasm` runner (`wasi/memory-limit.ts`) and the
 * `component` runner. The input is hostile: every read is bounds-checked.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";

const MAGIC = [0x00, 0x61, 0x73, 0x6d];
/** Component layer: version 0x0d, layer 0x01 (Component Model binary format, "preamble"). */
const COMPONENT_VERSION = [0x0d, 0x00, 0x01, 0x00];
const CORE_VERSION = [0x01, 0x00, 0x00, 0x00];
const SECTION_CORE_MODULE = 1;
const SECTION_MEMORY = 5;
/** One WebAssembly page. */
export const WASM_PAGE_BYTES = 65_536;

/**
 * The error for malformed tool WebAssembly.
 * @param what what is wrong
 * @returns a `PACK_MALFORMED` ReachError
 */
export function malformed(what: string): ReachError {
  return new ReachError("PACK_MALFORMED", `the tool's WebAssembly is malformed: ${what}; rebuild the tool`);
}

/** A bounds-checked reader of a WebAssembly byte range (hostile input: every read is checked). */
export class Reader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }
  byte(): number {
    if (this.pos >= this.end) throw malformed("unexpected end of a section");
    return this.bytes[this.pos++]!;
  }
  skip(n: number): void {
    if (n > this.end - this.pos) throw malformed("a section runs past its end");
    this.pos += n;
  }
  /** Skip a signed LEB128 of at most `maxBytes` bytes. */
  s(maxBytes: number): void {
    for (let i = 0; i < maxBytes; i++) if ((this.byte() & 0x80) === 0) return;
    throw malformed("signed LEB128 value too long");
  }
  /** Unsigned LEB128 up to 2^53 (lengths and limits). */
  u(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (!Number.isSafeInteger(result)) throw malformed("LEB128 value out of range");
        return result;
      }
      scale *= 128;
    }
    throw malformed("LEB128 value too long");
  }
}

function hasPrefix(bytes: Uint8Array, ...parts: number[][]): boolean {
  const want = parts.flat();
  if (bytes.length < want.length) return false;
  return want.every((b, i) => bytes[i] === b);
}

/** True when `bytes` start with the component-layer preamble. */
export function isComponent(bytes: Uint8Array): boolean {
  return hasPrefix(bytes, MAGIC, COMPONENT_VERSION);
}

/**
 * The core modules declared at the top level of a component, in order (views into `component`, not copies).
 * @param component component bytes
 * @returns one view per top-level core module section
 * @throws ReachError `PACK_MALFORMED` when the bytes are not a component or a section overruns the input
 * @example coreModulesOf(bytes)[0] // the first embedded core module
 */
export function coreModulesOf(component: Uint8Array): Uint8Array[] {
  if (!isComponent(component)) throw malformed("not a WebAssembly component (expected the \\0asm 0d 00 01 00 preamble)");
  const r = new Reader(component, 8, component.length);
  const out: Uint8Array[] = [];
  while (r.pos < r.end) {
    const id = r.byte();
    const len = r.u();
    if (len > r.end - r.pos) throw malformed(`section ${id} runs past the end`);
    if (id === SECTION_CORE_MODULE) out.push(component.subarray(r.pos, r.pos + len));
    r.pos += len;
  }
  return out;
}

/** One top-level section of a core module: its id, where it starts (the id byte), and its body's byte range. */
export type CoreSection = { id: number; start: number; bodyStart: number; end: number };

/**
 * The top-level sections of a core module, in order (offsets into `module`; nothing is copied).
 * @param module core module bytes
 * @returns the sections
 * @throws ReachError `PACK_MALFORMED` for a bad preamble or a section that runs past the end
 * @example coreSections(bytes).find((s) => s.id === 5) // the memory section, if any
 */
export function coreSections(module: Uint8Array): CoreSection[] {
  if (!hasPrefix(module, MAGIC)) throw malformed("an embedded core module has a bad preamble");
  if (!hasPrefix(module, MAGIC, CORE_VERSION)) throw malformed("an embedded core module has an unknown version");
  const r = new Reader(module, 8, module.length);
  const out: CoreSection[] = [];
  while (r.pos < r.end) {
    const start = r.pos;
    const id = r.byte();
    const len = r.u();
    if (len > r.end - r.pos) throw malformed(`core section ${id} runs past the end`);
    out.push({ id, start, bodyStart: r.pos, end: r.pos + len });
    r.pos += len;
  }
  return out;
}

/**
 * Whether a core module defines (rather than imports) at least one memory: the module that holds a guest's heap,
 * and the one whose work the runner meters with fuel.
 * @param module core module bytes
 * @returns true when its memory section declares one or more memories
 * @throws ReachError `PACK_MALFORMED` for malformed input
 * @example definesMemory(coreModulesOf(component)[0]) // true for componentize-js output
 */
export function definesMemory(module: Uint8Array): boolean {
  if (!hasPrefix(module, MAGIC, CORE_VERSION)) throw malformed("an embedded core module has a bad preamble");
  const r = new Reader(module, 8, module.length);
  while (r.pos < r.end) {
    const id = r.byte();
    const len = r.u();
    if (len > r.end - r.pos) throw malformed(`core section ${id} runs past the end`);
    if (id === SECTION_MEMORY) return new Reader(module, r.pos, r.pos + len).u() > 0;
    r.pos += len;
  }
  return false;
}

/**
 * Encode an unsigned LEB128.
 * @param n a non-negative safe integer
 * @returns its bytes
 */
export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/**
 * Give every 32-bit memory a core module defines a maximum of at most `maxPages`, so that `memory.grow` fails
 * (returns -1) past the limit instead of taking the host's memory. Imported memories are left alone: they are
 * defined (and capped) by another module. Shared and 64-bit memories are refused.
 * @param module core module bytes
 * @param maxPages the cap in 64 KiB pages (0..65536)
 * @returns new module bytes (or `module` itself when it defines no memory)
 * @throws ReachError `PACK_MALFORMED` for malformed input or an unsupported memory kind;
 *   `EXEC_RESOURCE_EXHAUSTED` when a memory's initial size is already above the cap
 * @example capMemory(core, 4096) // at most 256 MiB
 */
export function capMemory(module: Uint8Array, maxPages: number): Uint8Array {
  if (!Number.isSafeInteger(maxPages) || maxPages < 0 || maxPages > 65_536) {
    throw new RangeError(`"maxPages" expected an integer from 0 to 65536, got ${maxPages}`);
  }
  if (!hasPrefix(module, MAGIC, CORE_VERSION)) throw malformed("an embedded core module has a bad preamble");
  const r = new Reader(module, 8, module.length);
  while (r.pos < r.end) {
    const sectionStart = r.pos;
    const id = r.byte();
    const len = r.u();
    const bodyStart = r.pos;
    if (len > r.end - bodyStart) throw malformed(`core section ${id} runs past the end`);
    if (id !== SECTION_MEMORY) {
      r.pos += len;
      continue;
    }
    const s = new Reader(module, bodyStart, bodyStart + len);
    const count = s.u();
    const body: number[] = [...leb(count)];
    for (let i = 0; i < count; i++) {
      const flags = s.byte();
      if (flags !== 0x00 && flags !== 0x01) {
        throw malformed(`memory ${i} has limits flags 0x${flags.toString(16)} (shared or 64-bit memories are not supported)`);
      }
      const min = s.u();
      const declaredMax = flags === 0x01 ? s.u() : 65_536;
      if (min > maxPages) {
        throw new ReachError(
          "EXEC_RESOURCE_EXHAUSTED",
          `memory ${i} starts at ${min} pages (${min * WASM_PAGE_BYTES} bytes), above the memory limit of ` +
            `${maxPages * WASM_PAGE_BYTES} bytes; raise the tool's memory limit`,
          { details: { reason: "memory", initialPages: min, maxPages } },
        );
      }
      body.push(0x01, ...leb(min), ...leb(Math.min(declaredMax, maxPages)));
    }
    if (s.pos !== s.end) throw malformed("trailing bytes in the memory section");
    const sizeBytes = leb(body.length);
    const out = new Uint8Array(module.length - (bodyStart + len - sectionStart) + 1 + sizeBytes.length + body.length);
    out.set(module.subarray(0, sectionStart), 0);
    let p = sectionStart;
    out[p++] = SECTION_MEMORY;
    out.set(sizeBytes, p);
    p += sizeBytes.length;
    out.set(body, p);
    p += body.length;
    out.set(module.subarray(bodyStart + len), p);
    return out;
  }
  return module;
}
