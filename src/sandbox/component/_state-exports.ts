/**
 * Make every piece of a core module's mutable state reachable from JavaScript, so that the component runner can
 * snapshot an instance right after instantiation and put it back before the next invocation (`_instance-pool.ts`).
 *
 * The state of a core instance is (core spec §4.2.3–§4.2.11): its memories (bytes and size), its mutable globals,
 * its tables (entries and size), and which passive data / element segments have been dropped. JavaScript can read
 * and write a memory, global or table only when it is exported, and a module built by a linker exports little
 * (wasm-ld keeps `__stack_pointer` internal; the WASI adapter keeps its state pointer in an internal global). So
 * this rewrite appends exports (core spec §5.5.10 export section) named `reach_state_<kind>_<index>` for every
 * defined memory, every defined table and every defined mutable global. Nothing else changes: exporting an entity
 * does not change what the module computes.
 *
 * A module whose state cannot be captured this way is reported as such (`null`), and the runner instantiates it
 * fresh for every invocation as before:
 * - passive data or element segments (`data.drop` / `elem.drop` would make their state differ between runs),
 * - a start function (it may call the glue's imports while instantiating, which a reused instance cannot repeat),
 * - `v128` globals (not readable from JavaScript), tables with initialiser expressions, shared or 64-bit memories,
 *   and any encoding this reader does not know (GC types, unknown constant instructions, …).
 *
 * The input is hostile: every read is bounds-checked, and a malformed module is `PACK_MALFORMED`.
 * @module
 */
import { coreSections, leb, malformed, Reader } from "../wasm-binary.ts";
import type { CoreSection } from "../wasm-binary.ts";

/** Prefix of the exports this rewrite adds; followed by `memory_`, `table_` or `global_` and the index. */
export const STATE_EXPORT_PREFIX = "reach_state_";

const SECTION = { custom: 0, import: 2, table: 4, memory: 5, global: 6, export: 7, start: 8, element: 9, data: 11 } as const;
/** Canonical order of the known non-custom sections (§5.5.2): type, import, function, table, memory, tag, global,
 * export, start, element, data count, code, data. */
const SECTION_ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const EXPORT_KIND = { table: 0x01, memory: 0x02, global: 0x03 } as const;
/** Value types a JavaScript `WebAssembly.Global` can hold: i32 i64 f32 f64 funcref externref. */
const JS_VALUE_TYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x70, 0x6f]);
const REF_TYPES = new Set([0x70, 0x6f]);

/** Thrown inside the reader when the module uses something this file does not capture; becomes `null`. */
class Unsupported extends Error {}

/** The shared bounds-checked reader plus what this rewrite needs: names, limits, constant expressions. */
class StateReader extends Reader {
  name(): string {
    const len = this.u();
    this.skip(len);
    return new TextDecoder("utf-8", { fatal: false }).decode(this.bytes.subarray(this.pos - len, this.pos));
  }
  limits(): void {
    const flags = this.byte();
    if (flags !== 0x00 && flags !== 0x01) throw new Unsupported(`limits flags 0x${flags.toString(16)}`);
    this.u();
    if (flags === 0x01) this.u();
  }
  /** Skip a constant expression (§3.3.10) up to its `end`. */
  constExpr(): void {
    for (;;) {
      const op = this.byte();
      if (op === 0x0b) return;
      if (op === 0x41) this.s(5); // i32.const
      else if (op === 0x42) this.s(10); // i64.const
      else if (op === 0x43) this.skip(4); // f32.const
      else if (op === 0x44) this.skip(8); // f64.const
      else if (op === 0x23 || op === 0xd2) this.u(); // global.get, ref.func
      else if (op === 0xd0) this.refType(); // ref.null
      else if (op === 0x6a || op === 0x6b || op === 0x6c || op === 0x7c || op === 0x7d || op === 0x7e) continue; // extended-const
      else throw new Unsupported(`constant instruction 0x${op.toString(16)}`);
    }
  }
  refType(): number {
    const t = this.byte();
    if (!REF_TYPES.has(t)) throw new Unsupported(`reference type 0x${t.toString(16)}`);
    return t;
  }
}

function exportEntry(name: string, kind: number, index: number): number[] {
  const bytes = new TextEncoder().encode(name);
  return [...leb(bytes.length), ...bytes, kind, ...leb(index)];
}

/** What `exportState` added. */
export type StateExports = {
  /** The rewritten module. */
  bytes: Uint8Array;
  /** Names of the added exports (memories, tables and mutable globals the module defines). */
  names: string[];
};

/**
 * Export every memory, table and mutable global a core module defines (see the module comment).
 * @param module core module bytes
 * @returns the rewritten module and the names it added, or `null` when the module holds state that a snapshot of
 *   its exports would miss (then it must be instantiated fresh for every invocation)
 * @throws ReachError `PACK_MALFORMED` for malformed input
 * @example exportState(core)?.names // ["reach_state_memory_0", "reach_state_global_0", …]
 */
export function exportState(module: Uint8Array): StateExports | null {
  try {
    return rewrite(module);
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
}

/** What the scan of a module's sections found: how many of each kind are imported, the exports to add, and the
 * export section already there. */
type Scan = {
  imported: { table: number; memory: number; global: number };
  added: number[][];
  names: string[];
  existingExports: CoreSection | undefined;
  existingCount: number;
  taken: Set<string>;
};

function rewrite(module: Uint8Array): StateExports {
  const all = coreSections(module);
  const scan: Scan = {
    imported: { table: 0, memory: 0, global: 0 },
    added: [],
    names: [],
    existingExports: undefined,
    existingCount: 0,
    taken: new Set<string>(),
  };
  for (const s of all) scanSection(new StateReader(module, s.bodyStart, s.end), s, scan);
  for (const name of scan.names) if (scan.taken.has(name)) throw new Unsupported(`export "${name}" already exists`);
  const section = exportSection(module, scan);
  return { bytes: spliceExportSection(module, all, scan.existingExports, section), names: scan.names };
}

/** Record the export `reach_state_<kind>_<index>` to add. */
function addExport(scan: Scan, kind: "table" | "memory" | "global", index: number): void {
  const name = `${STATE_EXPORT_PREFIX}${kind}_${index}`;
  scan.names.push(name);
  scan.added.push(exportEntry(name, EXPORT_KIND[kind], index));
}

/** Read one section into `scan`, or throw `Unsupported` for state a snapshot of the exports would miss. */
function scanSection(r: StateReader, s: CoreSection, scan: Scan): void {
  switch (s.id) {
    case SECTION.import:
      return scanImports(r, scan);
    case SECTION.table:
      for (let i = 0, n = r.u(); i < n; i++) {
        r.refType();
        r.limits();
        addExport(scan, "table", scan.imported.table + i);
      }
      return;
    case SECTION.memory:
      for (let i = 0, n = r.u(); i < n; i++) {
        r.limits();
        addExport(scan, "memory", scan.imported.memory + i);
      }
      return;
    case SECTION.global:
      return scanGlobals(r, scan);
    case SECTION.export:
      scan.existingExports = s;
      scan.existingCount = r.u();
      for (let i = 0; i < scan.existingCount; i++) {
        scan.taken.add(r.name());
        r.byte();
        r.u();
      }
      return;
    case SECTION.start:
      throw new Unsupported("start function");
    case SECTION.element:
      return checkElements(r);
    case SECTION.data:
      return checkData(r);
    default:
      return;
  }
}

/** Count the imported tables, memories and globals (defined ones are numbered after them). */
function scanImports(r: StateReader, scan: Scan): void {
  for (let n = r.u(); n > 0; n--) {
    r.name();
    r.name();
    const kind = r.byte();
    if (kind === 0x00) r.u();
    else if (kind === 0x01) {
      r.refType();
      r.limits();
      scan.imported.table++;
    } else if (kind === 0x02) {
      r.limits();
      scan.imported.memory++;
    } else if (kind === 0x03) {
      r.byte();
      r.byte();
      scan.imported.global++;
    } else throw new Unsupported(`import kind 0x${kind.toString(16)}`);
  }
}

/** Add an export for every defined mutable global. */
function scanGlobals(r: StateReader, scan: Scan): void {
  const n = r.u();
  for (let i = 0; i < n; i++) {
    const type = r.byte();
    const mut = r.byte();
    if (mut !== 0x00 && mut !== 0x01) throw malformed(`global ${i} has mutability 0x${mut.toString(16)}`);
    r.constExpr();
    if (mut === 0x01) {
      if (!JS_VALUE_TYPES.has(type)) throw new Unsupported(`mutable global of type 0x${type.toString(16)}`);
      addExport(scan, "global", scan.imported.global + i);
    }
  }
}

/** Walk the element segments; a passive one is unsupported. */
function checkElements(r: StateReader): void {
  for (let n = r.u(); n > 0; n--) {
    const flags = r.u();
    if (flags > 7) throw malformed(`element segment flags ${flags}`);
    if ((flags & 0x03) === 0x01) throw new Unsupported("passive element segment");
    if ((flags & 0x01) === 0) {
      if ((flags & 0x02) !== 0) r.u(); // table index
      r.constExpr(); // offset
    }
    const exprs = (flags & 0x04) !== 0;
    if ((flags & 0x03) !== 0) {
      if (exprs) r.refType();
      else if (r.byte() !== 0x00) throw new Unsupported("element kind");
    }
    for (let k = r.u(); k > 0; k--) {
      if (exprs) r.constExpr();
      else r.u();
    }
  }
}

/** Walk the data segments; a passive one is unsupported. */
function checkData(r: StateReader): void {
  for (let n = r.u(); n > 0; n--) {
    const flags = r.u();
    if (flags === 0x01) throw new Unsupported("passive data segment");
    if (flags === 0x02) r.u();
    else if (flags !== 0x00) throw malformed(`data segment flags ${flags}`);
    r.constExpr();
    r.skip(r.u());
  }
}

/** The new export section: the old entries followed by ours. */
function exportSection(module: Uint8Array, scan: Scan): Uint8Array {
  const oldEntries = scan.existingExports === undefined ? new Uint8Array(0) : entriesOf(module, scan.existingExports);
  const body = [...leb(scan.existingCount + scan.added.length)];
  const tail = scan.added.flat();
  const bodyLen = body.length + oldEntries.length + tail.length;
  const section = new Uint8Array(1 + leb(bodyLen).length + bodyLen);
  let p = 0;
  section[p++] = SECTION.export;
  for (const b of leb(bodyLen)) section[p++] = b;
  for (const b of body) section[p++] = b;
  section.set(oldEntries, p);
  p += oldEntries.length;
  section.set(tail, p);
  return section;
}

/** Put `section` in place of the old export section, or before the first section that must follow it. */
function spliceExportSection(
  module: Uint8Array,
  all: CoreSection[],
  existingExports: CoreSection | undefined,
  section: Uint8Array,
): Uint8Array {
  let cutStart: number;
  let cutEnd: number;
  if (existingExports !== undefined) {
    cutStart = existingExports.start;
    cutEnd = existingExports.end;
  } else {
    const rank = SECTION_ORDER.indexOf(SECTION.export);
    const next = all.find((s) => s.id !== SECTION.custom && SECTION_ORDER.indexOf(s.id) > rank);
    cutStart = cutEnd = next === undefined ? module.length : next.start;
  }
  const out = new Uint8Array(module.length - (cutEnd - cutStart) + section.length);
  out.set(module.subarray(0, cutStart), 0);
  out.set(section, cutStart);
  out.set(module.subarray(cutEnd), cutStart + section.length);
  return out;
}

/** The bytes of an export section's entries (after its count). */
function entriesOf(module: Uint8Array, s: CoreSection): Uint8Array {
  const r = new StateReader(module, s.bodyStart, s.end);
  r.u();
  return module.subarray(r.pos, s.end);
}
