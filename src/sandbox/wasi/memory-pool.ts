/**
 * Reuse a tool's linear memory across invocations (README "Benchmarks": warm per-invocation overhead).
 *
 * Allocating a `WebAssembly.Memory` is most of the cost of instantiating a small module: the engine reserves and
 * maps the memory's guard regions on every instantiation (measured on Node 20: a small AssemblyScript tool
 * instantiates in ~90 µs with its own memory and in ~28 µs with a supplied one). So the runner rewrites a module that
 * defines its one memory into a module that imports it ({@link importOwnMemory}), and keeps the memory of a finished
 * invocation for the next one ({@link MemoryPool}).
 *
 * Isolation: a memory goes back to the pool only if it never grew, and it is zero-filled before it does; the next
 * instantiation writes the module's active data segments into it again. The guest therefore starts from exactly the
 * bytes a fresh memory would hold (all zeros, then the data segments), with the same size and the same maximum, so
 * `memory.grow`, fuel and every output are unchanged. Globals, tables and everything else are still fresh per
 * instance.
 * @module
 */
import { coreSections, leb, Reader, WASM_PAGE_BYTES } from "../wasm-binary.ts";
import type { CoreSection } from "../wasm-binary.ts";
import { concatBytes } from "../../canonical/mod.ts";

/** The import module and field a rewritten module imports its memory from (never a name a tool can rely on). */
export const POOLED_MEMORY_MODULE = "reach-wasm:pooled-memory";
/** The field name under {@link POOLED_MEMORY_MODULE}. */
export const POOLED_MEMORY_FIELD = "memory";

const SECTION_TYPE = 1;
const SECTION_IMPORT = 2;
const SECTION_MEMORY = 5;

/** A module whose one defined memory became an import, and that memory's limits in pages. */
export type MemoryImportingModule = { bytes: Uint8Array; initialPages: number; maximumPages: number };

/** Skip table/memory limits; returns false for flags this reader does not know (64-bit, shared, …). */
function skipLimits(r: Reader): boolean {
  const flags = r.byte();
  if (flags !== 0x00 && flags !== 0x01) return false;
  r.u();
  if (flags === 0x01) r.u();
  return true;
}

/**
 * Count the memory imports of an import section, and check that none uses {@link POOLED_MEMORY_MODULE}.
 * @returns the entry count and memory-import count, or null when an entry is of a kind this reader does not know
 */
function readImports(module: Uint8Array, s: CoreSection): { count: number; memories: number; bodyAfterCount: number } | null {
  const r = new Reader(module, s.bodyStart, s.end);
  const count = r.u();
  const bodyAfterCount = r.pos;
  let memories = 0;
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i++) {
    const moduleLen = r.u();
    const nameStart = r.pos;
    r.skip(moduleLen);
    if (decoder.decode(module.subarray(nameStart, nameStart + moduleLen)) === POOLED_MEMORY_MODULE) return null;
    r.skip(r.u()); // field name
    const kind = r.byte();
    if (kind === 0x00) r.u(); // function: type index
    else if (kind === 0x01) {
      r.byte(); // reference type
      if (!skipLimits(r)) return null;
    } else if (kind === 0x02) {
      memories++;
      if (!skipLimits(r)) return null;
    } else if (kind === 0x03) r.skip(2); // global: value type, mutability
    else return null;
  }
  if (r.pos !== r.end) return null;
  return { count, memories, bodyAfterCount };
}

/**
 * Rewrite a core module that defines exactly one memory (and imports none) so that it imports that memory from
 * `POOLED_MEMORY_MODULE.memory` with the same limits. Every other byte is kept; the memory keeps index 0, so code,
 * data segments and the `memory` export refer to it unchanged.
 * @param module core module bytes (normally after `limitMemory`, so the memory has a maximum)
 * @returns the rewritten bytes and the memory's limits, or null when the module does not qualify (no memory,
 *   several, an imported one, no maximum, or an import this reader does not know): it then runs with its own memory
 * @throws ReachError `PACK_MALFORMED` when a section overruns the input
 * @example const m = importOwnMemory(limitMemory(bytes, 64 << 20)); if (m) new WebAssembly.Module(m.bytes);
 */
export function importOwnMemory(module: Uint8Array): MemoryImportingModule | null {
  const all = coreSections(module);
  const memory = all.find((s) => s.id === SECTION_MEMORY);
  if (memory === undefined) return null;
  const mr = new Reader(module, memory.bodyStart, memory.end);
  if (mr.u() !== 1) return null;
  const limitsStart = mr.pos;
  if (mr.byte() !== 0x01) return null; // no maximum: limitMemory always sets one
  const initialPages = mr.u();
  const maximumPages = mr.u();
  if (mr.pos !== mr.end) return null;
  const limits = module.subarray(limitsStart, mr.end);

  const importSection = all.find((s) => s.id === SECTION_IMPORT);
  const imports = importSection === undefined ? { count: 0, memories: 0, bodyAfterCount: 0 } : readImports(module, importSection);
  if (imports === null || imports.memories > 0) return null;

  const enc = new TextEncoder();
  const modName = enc.encode(POOLED_MEMORY_MODULE);
  const field = enc.encode(POOLED_MEMORY_FIELD);
  const entry = [...leb(modName.length), ...modName, ...leb(field.length), ...field, 0x02, ...limits];
  const oldEntries = importSection === undefined ? new Uint8Array(0) : module.subarray(imports.bodyAfterCount, importSection.end);
  const body = [...leb(imports.count + 1), ...oldEntries, ...entry];
  const newImport = [SECTION_IMPORT, ...leb(body.length), ...body];

  const parts: ArrayLike<number>[] = [module.subarray(0, 8)];
  let placed = false;
  for (const s of all) {
    if (s.id === SECTION_MEMORY) continue;
    if (s.id === SECTION_IMPORT) {
      parts.push(newImport);
      placed = true;
      continue;
    }
    // No import section: it goes right after the type section, or first among the non-custom sections.
    if (!placed && s.id !== 0 && s.id !== SECTION_TYPE) {
      parts.push(newImport);
      placed = true;
    }
    parts.push(module.subarray(s.start, s.end));
  }
  if (!placed) parts.push(newImport);
  return { bytes: concatBytes(parts), initialPages, maximumPages };
}

/**
 * Memories of one module's finished invocations, ready for the next. `take` hands a memory to one invocation
 * only; `give` accepts it back only if it still has its initial size, and zero-fills it first.
 * @example
 * const pool = new MemoryPool(1, 1024);
 * const memory = pool.take();
 * try { run(memory); } finally { pool.give(memory); }
 */
export class MemoryPool {
  readonly #free: WebAssembly.Memory[] = [];
  readonly #initialBytes: number;

  /**
   * @param initialPages the memory's initial size
   * @param maximumPages its maximum
   * @param capacity how many free memories to keep (default 2)
   */
  constructor(
    readonly initialPages: number,
    readonly maximumPages: number,
    readonly capacity = 2,
  ) {
    this.#initialBytes = initialPages * WASM_PAGE_BYTES;
  }

  /** A zero-filled memory of the initial size: a kept one, or a new one. */
  take(): WebAssembly.Memory {
    return this.#free.pop() ?? new WebAssembly.Memory({ initial: this.initialPages, maximum: this.maximumPages });
  }

  /**
   * Return a memory after its instance is done with it (it must not be used afterwards). A memory that grew is
   * dropped: a kept memory must look exactly like a new one.
   * @param memory a memory from {@link take}
   */
  give(memory: WebAssembly.Memory): void {
    if (this.#free.length >= this.capacity || memory.buffer.byteLength !== this.#initialBytes) return;
    new Uint8Array(memory.buffer).fill(0);
    this.#free.push(memory);
  }

  /** Free memories kept now (for tests). */
  get size(): number {
    return this.#free.length;
  }
}
