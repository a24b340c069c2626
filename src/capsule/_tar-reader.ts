/**
 * A push parser for the tar stream inside a capsule (internal). It is fed the inflated bytes chunk by chunk as the
 * gzip layer produces them, so a bad header or a limit is refused before the rest is inflated.
 *
 * It reads what `writeArchive` writes and what other tars make of the same files (seed 003 §8: a capsule commits to
 * its entries' paths and bytes, not to how they were archived): GNU tar's ustar, pax and gnu formats, bsdtar, Python's
 * tarfile. So, beside reach-wasm's canonical headers (`_ustar.ts`), it accepts directory entries (implicit in a
 * capsule: checked, then dropped), a leading `./`, pax headers (`x`: `path` and `size` apply, the rest is ignored;
 * `g`: only what changes no entry), GNU long names (`L`), entries in any order (returned sorted), and zero blocks
 * after the end-of-archive marker (the padding to a 10 KiB record that GNU tar and Python write). It refuses links
 * (also pax `linkpath` and GNU `K`), devices, FIFOs, sparse files and unknown types, unsafe paths however they are
 * spelled (in the header, a pax `path` or a GNU long name), a file given twice (also as `a` and `./a`), a file used
 * as a directory, non-zero padding, any non-zero byte after the end marker, and truncation anywhere.
 *
 * Limits are checked on each header, before its data is read: entry count, entry size (the size after a pax
 * `size`), a pax or long-name header's size ({@link EXTENSION_MAX}), and the size the whole tar stream will reach
 * if this is the last entry, against the capsule's inflation budget (`limits.ts`). So a header that declares more
 * than the compressed capsule can honestly hold is refused before a byte of its data is inflated.
 * @module
 */
import { invalid, overBudget, showName, tooLarge } from "./_errors.ts";
import type { RefusalReason } from "./_errors.ts";
import { EXTENSION_MAX, longName, parsePax } from "./_pax.ts";
import type { Overrides } from "./_pax.ts";
import { byPath, normaliseRead, pathProblem, PathSet } from "./_path.ts";
import { BLOCK, decodeHeader } from "./_ustar.ts";
import type { RawHeader } from "./_ustar.ts";
import type { ArchiveLimits, InflationBudget } from "./limits.ts";
import { concatBytes } from "../canonical/mod.ts";

/** Parser states. */
const Mode = { Header: 0, Data: 1, Padding: 2, SecondEnd: 3, Done: 4 } as const;
type Mode = (typeof Mode)[keyof typeof Mode];

/** What the data being read belongs to. */
type Target = "file" | "x" | "g" | "L";

/**
 * The most zero bytes read after the end-of-archive marker: tars pad their output to a whole record (GNU tar,
 * bsdtar and Python: 10 KiB by default; `tar -b 2048` makes 1 MiB records). More is refused, so that a stream of
 * zeros (a gzip bomb) stops here.
 */
export const RECORD_PADDING_MAX = 1024 * 1024;

/** Round up to a whole number of blocks. */
export function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

const REFUSED_TYPES: Readonly<Record<string, readonly [RefusalReason, string]>> = {
  "1": ["link", "a hard link"],
  "2": ["link", "a symbolic link"],
  "3": ["device", "a character device"],
  "4": ["device", "a block device"],
  "6": ["fifo", "a FIFO (named pipe)"],
  K: ["link", "a GNU long link name (type 'K', the target of a link)"],
  S: ["extension-header", "a GNU sparse file (type 'S'), whose data is not the file's bytes"],
};

/** The reason and phrase for a type that is never read. */
function refusedType(type: string): readonly [RefusalReason, string] {
  return REFUSED_TYPES[type] ?? (/^[A-Z]$/.test(type)
    ? ["extension-header", `a vendor extension header (type '${type}')`] as const
    : ["unknown-type", `an entry of unknown type ${showName(type)}`] as const);
}

/** Collects the entries of one tar stream; see the module notes. */
export class TarReader {
  readonly #entries = new Map<string, Uint8Array>();
  readonly #limits: ArchiveLimits;
  readonly #budget: InflationBudget;
  readonly #paths = new PathSet();
  readonly #block = new Uint8Array(BLOCK);
  #fill = 0;
  #mode: Mode = Mode.Header;
  /** Bytes of the tar stream consumed so far. */
  #offset = 0;
  /** Header blocks read (extension headers included): the number messages give. */
  #entry = 0;
  /** Where the end-of-archive marker ends, once read. */
  #end = 0;
  /** Files and directories read (for `maxEntries`). */
  #count = 0;
  #target: Target = "file";
  #path = "";
  #size = 0;
  #remaining = 0;
  #parts: Uint8Array[] = [];
  /** What a pax `x` header said about the next entry, and at which header. */
  #pax: { overrides: Overrides; entry: number } | undefined;
  /** The GNU long name for the next entry, and at which header. */
  #long: { name: string; entry: number } | undefined;

  /**
   * @param limits the resolved limits
   * @param budget the most bytes the tar stream may reach (`inflationBudget`)
   */
  constructor(limits: ArchiveLimits, budget: InflationBudget) {
    this.#limits = limits;
    this.#budget = budget;
  }

  /**
   * Feed the next inflated bytes.
   * @param chunk bytes of the tar stream, in order
   * @throws ReachError `REPLAY_CAPSULE_INVALID` or `REPLAY_CAPSULE_TOO_LARGE` at the first problem
   */
  push(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      const avail = chunk.length - i;
      switch (this.#mode) {
        case Mode.Header:
        case Mode.SecondEnd: {
          if (this.#fill === 0 && avail >= BLOCK) {
            this.#header(chunk.subarray(i, i + BLOCK));
            i += BLOCK;
          } else {
            const n = Math.min(BLOCK - this.#fill, avail);
            this.#block.set(chunk.subarray(i, i + n), this.#fill);
            this.#fill += n;
            i += n;
            if (this.#fill === BLOCK) {
              this.#fill = 0;
              this.#header(this.#block);
            }
          }
          break;
        }
        case Mode.Data: {
          const n = Math.min(this.#remaining, avail);
          this.#parts.push(chunk.slice(i, i + n));
          this.#remaining -= n;
          this.#offset += n;
          i += n;
          if (this.#remaining === 0) this.#endOfData();
          break;
        }
        case Mode.Padding:
        case Mode.Done: {
          const n = this.#mode === Mode.Done ? avail : Math.min(this.#remaining, avail);
          const k = chunk.subarray(i, i + n).findIndex((b) => b !== 0);
          if (k !== -1) this.#nonZero(this.#offset + k);
          if (this.#mode === Mode.Done && this.#offset + n - this.#end > RECORD_PADDING_MAX) this.#tooMuchPadding();
          this.#remaining -= n;
          this.#offset += n;
          i += n;
          if (this.#mode === Mode.Padding && this.#remaining === 0) this.#mode = Mode.Header;
          break;
        }
      }
    }
  }

  #tooMuchPadding(): never {
    throw invalid("trailing-data", `the capsule has more than ${RECORD_PADDING_MAX} zero bytes after its end-of-archive ` +
      `blocks (at tar byte ${this.#end}); tars pad to a record of at most that — the capsule was altered or is a gzip bomb`,
      { offset: this.#end + RECORD_PADDING_MAX });
  }

  /** Refuse a non-zero byte in padding or after the end marker. */
  #nonZero(at: number): never {
    if (this.#mode === Mode.Done) {
      throw invalid("trailing-data", `the capsule has data after its end-of-archive blocks (tar byte ${at}); only zero ` +
        "blocks may follow them — the capsule was altered", { offset: at });
    }
    throw invalid("padding", `capsule entry #${this.#entry} ${showName(this.#path)}: the padding after its ` +
      `${this.#size} bytes holds non-zero data (tar byte ${at}); the capsule was altered or damaged`,
      { entry: this.#entry, path: this.#path, offset: at });
  }

  /**
   * Check that the tar stream ended where it should, and return its entries.
   * @returns the entries, path → bytes, in ascending byte order of their paths
   * @throws ReachError `REPLAY_CAPSULE_INVALID` (reason `missing-end`, `truncated` or `conflict`)
   */
  finish(): Map<string, Uint8Array> {
    if (this.#mode !== Mode.Done) this.#unfinished();
    const clash = this.#paths.firstConflict();
    if (clash !== undefined) {
      throw invalid("conflict", `capsule entry #${clash.entry} ${showName(clash.path)} ${clash.problem.text}; the capsule ` +
        "was altered", { entry: clash.entry, path: clash.path });
    }
    return new Map([...this.#entries].sort(([a], [b]) => byPath(a, b)));
  }

  #unfinished(): never {
    if (this.#mode === Mode.Header && this.#fill === 0) {
      const after = this.#entry === 0 ? "before its first entry" : `after entry #${this.#entry} ${showName(this.#path)}`;
      throw invalid("missing-end", `the capsule's tar stream stops ${after} without the two end-of-archive blocks; ` +
        "it is incomplete — write it again", { offset: this.#offset });
    }
    if (this.#mode === Mode.SecondEnd && this.#fill === 0) {
      throw invalid("missing-end", "the capsule's tar stream ends with one zero block instead of two; it is incomplete",
        { offset: this.#offset });
    }
    const inside = this.#mode === Mode.Data || this.#mode === Mode.Padding
      ? `inside entry #${this.#entry} ${showName(this.#path)}`
      : "inside a header block";
    throw invalid("truncated", `the capsule is truncated: its tar stream stops ${inside} (tar byte ${this.#offset + this.#fill}); ` +
      "copy it again from its source", { offset: this.#offset + this.#fill });
  }

  #header(block: Uint8Array): void {
    const at = this.#offset;
    this.#offset += BLOCK;
    if (isZero(block)) {
      if (this.#mode === Mode.Header && (this.#pax !== undefined || this.#long !== undefined)) {
        const ext = this.#pax?.entry ?? this.#long!.entry;
        throw invalid("extension-header", `capsule entry #${ext} is a pax or GNU long-name header that no entry follows ` +
          `(the end-of-archive marker comes next, at tar byte ${at}); the capsule is damaged`, { entry: ext, offset: at });
      }
      this.#mode = this.#mode === Mode.Header ? Mode.SecondEnd : Mode.Done;
      this.#end = this.#offset;
      return;
    }
    if (this.#mode === Mode.SecondEnd) {
      throw invalid("end-marker", `the capsule has a header at tar byte ${at} after a zero block; the end-of-archive marker ` +
        "is two zero blocks and only zero blocks may follow it — the capsule was altered", { offset: at });
    }
    const entry = ++this.#entry;
    const h = decodeHeader(block, entry, at);
    if (h.type === "x" || h.type === "g" || h.type === "L") this.#extension(h, entry, at);
    else this.#member(h, entry, at);
  }

  /** A pax (`x`, `g`) or GNU long-name (`L`) header: read its data next. */
  #extension(h: RawHeader, entry: number, at: number): void {
    const where = { entry, offset: at };
    const kind = h.type === "L" ? "GNU long-name" : h.type === "g" ? "pax global" : "pax";
    const pending = h.type === "x" ? this.#pax : h.type === "L" ? this.#long : this.#pax ?? this.#long;
    if (pending !== undefined) {
      throw invalid("extension-header", `capsule entry #${entry} (tar header at byte ${at}) is a second ${kind} header ` +
        `before the entry that entry #${pending.entry} describes; the capsule is damaged or crafted`, where);
    }
    if (h.size > EXTENSION_MAX) {
      throw invalid("extension-header", `capsule entry #${entry} (tar header at byte ${at}) is a ${kind} header of ` +
        `${h.size} bytes, more than the ${EXTENSION_MAX} a capsule's paths could need; the capsule is refused`, where);
    }
    this.#checkBudget(entry, h.path, h.size);
    this.#target = h.type as Target;
    this.#startData(h.path, h.size);
  }

  /** A file, a directory, or a type that is refused. */
  #member(h: RawHeader, entry: number, at: number): void {
    const where = `capsule entry #${entry} (tar header at byte ${at})`;
    const stored = this.#pax?.overrides.path ?? this.#long?.name ?? h.path;
    const size = this.#pax?.overrides.size ?? h.size;
    this.#pax = undefined;
    this.#long = undefined;
    const directory = h.type === "5";
    if (!directory && h.type !== "0" && h.type !== "\u0000" && h.type !== "7") {
      const [reason, what] = refusedType(h.type);
      const target = reason === "link" && h.linkname !== "" ? ` pointing to ${showName(h.linkname)}` : "";
      throw invalid(reason, `${where} ${showName(stored)} is ${what}${target}; capsules hold regular files only, so this ` +
        "archive is refused", { entry, offset: at, path: stored, type: h.type });
    }
    const path = normaliseRead(stored, directory);
    const problem = directory && path === "" ? undefined : pathProblem(path);
    if (problem !== undefined) {
      throw invalid("path", `${where} ${showName(stored)} ${problem}; the capsule is malicious or damaged — nothing was extracted`,
        { entry, offset: at, path: stored });
    }
    if (directory && size !== 0) {
      throw invalid("directory", `${where} ${showName(stored)} is a directory entry that declares ${size} bytes of data; ` +
        "the capsule is damaged or crafted", { entry, offset: at, path: stored });
    }
    this.#checkLimits(entry, path, size);
    const clash = path === "" ? undefined : this.#paths.add(path, entry, directory);
    if (clash !== undefined) {
      throw invalid(clash.reason, `capsule entry #${entry} ${showName(stored)} ${clash.text}; the capsule was not written ` +
        "by reach-wasm or was altered", { entry, path });
    }
    if (directory) return;
    this.#target = "file";
    this.#startData(path, size);
  }

  #checkLimits(entry: number, path: string, size: number): void {
    const limits = this.#limits;
    if (++this.#count > limits.maxEntries) {
      throw tooLarge("too-many-entries", `the capsule has more than ${limits.maxEntries} entries (limits.maxEntries); ` +
        "raise the limit only for capsules you trust", { entry, path });
    }
    if (size > limits.maxEntryBytes) {
      throw tooLarge("entry-too-large", `capsule entry #${entry} ${showName(path)} is ${size} bytes, more than ` +
        `limits.maxEntryBytes (${limits.maxEntryBytes}); raise the limit only for capsules you trust`, { entry, path, size });
    }
    this.#checkBudget(entry, path, size);
  }

  #checkBudget(entry: number, path: string, size: number): void {
    const projected = this.#offset + padded(size) + 2 * BLOCK;
    if (projected > this.#budget.bytes) {
      throw overBudget(this.#budget, `capsule entry #${entry} ${showName(path)} (${size} bytes) makes the tar stream ` +
        `${projected} bytes,`, { entry, path, size });
    }
  }

  #startData(path: string, size: number): void {
    this.#path = path;
    this.#size = size;
    this.#remaining = size;
    this.#parts = [];
    if (size === 0) this.#endOfData();
    else this.#mode = Mode.Data;
  }

  #endOfData(): void {
    const parts = this.#parts;
    const bytes = parts.length === 1 ? parts[0]! : concatBytes(parts, this.#size);
    this.#parts = [];
    const where = { entry: this.#entry, offset: this.#offset - this.#size - BLOCK };
    if (this.#target === "file") this.#entries.set(this.#path, bytes);
    else if (this.#target === "L") this.#long = { name: longName(bytes), entry: this.#entry };
    else {
      const overrides = parsePax(bytes, this.#target === "g", where);
      if (this.#target === "x") this.#pax = { overrides, entry: this.#entry };
    }
    this.#remaining = padded(this.#size) - this.#size;
    this.#mode = this.#remaining === 0 ? Mode.Header : Mode.Padding;
  }
}

function isZero(block: Uint8Array): boolean {
  for (let i = 0; i < block.length; i++) if (block[i] !== 0) return false;
  return true;
}
