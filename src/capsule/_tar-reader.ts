/**
 * A push parser for the tar stream inside a capsule (internal). It is fed the inflated bytes chunk by chunk as the
 * gzip layer produces them, so a bad header or a limit is refused before the rest is inflated.
 *
 * What it accepts is exactly what `writeArchive` writes: canonical ustar headers of regular files (see
 * `_ustar.ts`) in strictly ascending path order, zero padding to each 512-byte boundary, then exactly two zero
 * blocks and nothing after them (not even more zeros: reach-wasm does not pad to a 10 KiB record).
 * Limits are checked on each header, before its data is read: entry count, entry size, and the size the whole tar
 * stream will reach if this entry is the last one, against the capsule's inflation budget (`limits.ts`: the smaller
 * of `maxTotalBytes` and the ratio cap). So a header that declares more than the compressed capsule can honestly
 * hold is refused before a byte of its data is inflated, and the data never run past what the headers declare
 * (after the end blocks, any byte is trailing data).
 * @module
 */
import { invalid, overBudget, showName, tooLarge } from "./_errors.ts";
import { EntryTree } from "./_path.ts";
import { BLOCK, decodeHeader } from "./_ustar.ts";
import type { ArchiveLimits, InflationBudget } from "./limits.ts";
import { concatBytes } from "../canonical/bytes.ts";

/** Parser states. */
const Mode = { Header: 0, Data: 1, Padding: 2, SecondEnd: 3, Done: 4 } as const;
type Mode = (typeof Mode)[keyof typeof Mode];

/** Round up to a whole number of blocks. */
export function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

/** Collects the entries of one tar stream; see the module notes. */
export class TarReader {
  /** The entries read so far, in archive (= path) order. */
  readonly entries: Map<string, Uint8Array> = new Map();
  readonly #limits: ArchiveLimits;
  readonly #budget: InflationBudget;
  readonly #tree = new EntryTree();
  readonly #block = new Uint8Array(BLOCK);
  #fill = 0;
  #mode: Mode = Mode.Header;
  /** Bytes of the tar stream consumed so far. */
  #offset = 0;
  #entry = 0;
  #path = "";
  #size = 0;
  #remaining = 0;
  #parts: Uint8Array[] = [];

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
        case Mode.Padding: {
          const n = Math.min(this.#remaining, avail);
          for (let k = i; k < i + n; k++) {
            if (chunk[k] !== 0) {
              throw invalid("padding", `capsule entry #${this.#entry} ${showName(this.#path)}: the padding after its ` +
                `${this.#size} bytes holds non-zero data (tar byte ${this.#offset + k - i}); the capsule was altered or damaged`,
                { entry: this.#entry, path: this.#path, offset: this.#offset + k - i });
            }
          }
          this.#remaining -= n;
          this.#offset += n;
          i += n;
          if (this.#remaining === 0) this.#mode = Mode.Header;
          break;
        }
        case Mode.Done:
          throw invalid("trailing-data", `the capsule has data after its end-of-archive blocks (tar byte ${this.#offset}); ` +
            "reach-wasm writes nothing after them — the capsule was altered", { offset: this.#offset });
      }
    }
  }

  /**
   * Check that the tar stream ended where it should.
   * @throws ReachError `REPLAY_CAPSULE_INVALID` (reason `missing-end` or `truncated`)
   */
  finish(): void {
    if (this.#mode === Mode.Done) return;
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
      this.#mode = this.#mode === Mode.Header ? Mode.SecondEnd : Mode.Done;
      return;
    }
    if (this.#mode === Mode.SecondEnd) {
      throw invalid("end-marker", `the capsule has a header at tar byte ${at} after a zero block; the end-of-archive marker ` +
        "is two zero blocks and nothing may follow it — the capsule was altered", { offset: at });
    }
    const entry = ++this.#entry;
    const { path, size } = decodeHeader(block, entry, at);
    const limits = this.#limits;
    if (entry > limits.maxEntries) {
      throw tooLarge("too-many-entries", `the capsule has more than ${limits.maxEntries} entries (limits.maxEntries); ` +
        "raise the limit only for capsules you trust", { entry, path });
    }
    if (size > limits.maxEntryBytes) {
      throw tooLarge("entry-too-large", `capsule entry #${entry} ${showName(path)} is ${size} bytes, more than ` +
        `limits.maxEntryBytes (${limits.maxEntryBytes}); raise the limit only for capsules you trust`, { entry, path, size });
    }
    const projected = this.#offset + padded(size) + 2 * BLOCK;
    if (projected > this.#budget.bytes) {
      throw overBudget(this.#budget, `capsule entry #${entry} ${showName(path)} (${size} bytes) makes the tar stream ` +
        `${projected} bytes,`, { entry, path, size });
    }
    const problem = this.#tree.add(path);
    if (problem !== undefined) {
      throw invalid(problem.reason, `capsule entry #${entry} ${showName(path)} ${problem.text}; the capsule was not written ` +
        "by reach-wasm or was altered", { entry, path });
    }
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
    this.entries.set(this.#path, bytes);
    this.#remaining = padded(this.#size) - this.#size;
    this.#mode = this.#remaining === 0 ? Mode.Header : Mode.Padding;
  }
}

function isZero(block: Uint8Array): boolean {
  for (let i = 0; i < block.length; i++) if (block[i] !== 0) return false;
  return true;
}
