/**
 * The capsule archive's writer (seed 003 §8; the format is described in `archive.ts`, which re-exports this module
 * beside its reader). Its own module so that writing a capsule loads no inflater: fflate, which the reader uses,
 * costs ~8 ms of CPU to load and warm up, a short `reach-wasm run` writes a capsule and reads none, and a run from a
 * pack archive loads the reader only then (README "Benchmarks"). Web-standard; synchronous.
 * @module
 */
import type { GzipOptions } from "fflate";
import { gzipLikeFflate } from "./_deflate.ts";
import { overBudget, refusal, showName, tooLarge } from "./_errors.ts";
import { byPath, EntryTree, pathProblem, splitUstar } from "./_path.ts";
import { padded } from "./_tar-reader.ts";
import { BLOCK, encodeHeader, MAX_USTAR_SIZE } from "./_ustar.ts";
import { inflationBudget, resolveLimits } from "./limits.ts";
import type { ArchiveLimits } from "./limits.ts";

/** One file of a capsule archive. */
export type ArchiveEntry = {
  /** Relative `/`-separated path of printable ASCII, e.g. `blobs/3a7f….bin` (see `_path.ts`). */
  path: string;
  /** The file's bytes. */
  bytes: Uint8Array;
};

const GZIP_LEVEL = 6;
const GZIP_MEM = 7;
/** The fixed gzip settings of every capsule (part of the format: changing them changes capsule bytes). */
export const GZIP_OPTIONS: Readonly<GzipOptions> = Object.freeze({ level: GZIP_LEVEL, mem: GZIP_MEM, mtime: 0 });

/**
 * Write a deterministic capsule archive (`.tar.gz`) holding `entries` (see the module notes for the format).
 * The same entries, given in any order, always give the same bytes.
 * @param entries the files; their order does not matter
 * @param limits optional bounds (defaults in `limits.ts`): reach-wasm never writes what its reader would refuse
 * @returns the `.tar.gz` bytes
 * @throws TypeError when `entries` is not an array of `{ path: string, bytes: Uint8Array }`
 * @throws RangeError when a limit is not a non-negative safe integer
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad path (absolute, `..`, `.`, empty segment, backslash,
 *   control or non-ASCII character, too long for ustar), a path given twice, or a file used as a directory;
 *   `REPLAY_CAPSULE_TOO_LARGE` when the archive would exceed a limit (`inflation-ratio`: its entries compress more
 *   than `limits.maxInflationRatio` to one and the tar stream is over 8 MiB, which the reader refuses as a bomb)
 * @example
 * ```ts
 * const bytes = writeArchive([{ path: "a/b.txt", bytes: new TextEncoder().encode("hi") }]);
 * console.log(bytes.length); // a deterministic .tar.gz; readArchive (archive.ts) gives the entry back
 * ```
 */
export function writeArchive(entries: readonly ArchiveEntry[], limits?: Partial<ArchiveLimits>): Uint8Array {
  if (!Array.isArray(entries)) throw new TypeError(`"entries" expected an array of { path, bytes }, got ${typeof entries}`);
  const lim = resolveLimits(limits);
  entries.forEach((e, i) => {
    if (typeof e !== "object" || e === null || typeof e.path !== "string" || !(e.bytes instanceof Uint8Array)) {
      throw new TypeError(`"entries[${i}]" expected { path: string, bytes: Uint8Array }`);
    }
    const problem = pathProblem(e.path);
    if (problem !== undefined) {
      throw refusal("PROTO_INVALID_ARGUMENT", "path", `writeArchive: entry #${i + 1} path ${showName(e.path)} ${problem}; ` +
        'use a relative path inside the capsule such as "blobs/3a7f.bin"', { entry: i + 1, path: e.path });
    }
  });
  if (entries.length > lim.maxEntries) {
    throw tooLarge("too-many-entries", `writeArchive: ${entries.length} entries are more than limits.maxEntries ` +
      `(${lim.maxEntries}); the reader would refuse this capsule`, { entries: entries.length });
  }
  const sorted = [...entries].sort((a, b) => byPath(a.path, b.path));
  const tree = new EntryTree();
  let total = 2 * BLOCK;
  for (const e of sorted) {
    const problem = tree.add(e.path);
    if (problem !== undefined) {
      throw refusal("PROTO_INVALID_ARGUMENT", problem.reason, `writeArchive: path ${showName(e.path)} ${problem.text}; ` +
        "give each file once, and never a file where another entry needs a directory", { path: e.path });
    }
    const size = e.bytes.length;
    if (size > lim.maxEntryBytes || size > MAX_USTAR_SIZE) {
      throw tooLarge("entry-too-large", `writeArchive: ${showName(e.path)} is ${size} bytes, more than ` +
        `${size > MAX_USTAR_SIZE ? `ustar's limit (${MAX_USTAR_SIZE})` : `limits.maxEntryBytes (${lim.maxEntryBytes})`}`,
        { path: e.path, size });
    }
    total += BLOCK + padded(size);
  }
  if (total > lim.maxTotalBytes) {
    throw tooLarge("total-too-large", `writeArchive: the tar stream would be ${total} bytes, more than ` +
      `limits.maxTotalBytes (${lim.maxTotalBytes}); the reader would refuse this capsule`, { total });
  }
  const tar = new Uint8Array(total);
  let at = 0;
  for (const e of sorted) {
    const [prefix, name] = splitUstar(e.path);
    encodeHeader(tar, at, prefix, name, e.bytes.length);
    tar.set(e.bytes, at + BLOCK);
    at += BLOCK + padded(e.bytes.length);
  }
  const gz = gzipLikeFflate(tar, GZIP_LEVEL, GZIP_MEM);
  if (gz.length > lim.maxCompressedBytes) {
    throw tooLarge("compressed-too-large", `writeArchive: the capsule would be ${gz.length} bytes, more than ` +
      `limits.maxCompressedBytes (${lim.maxCompressedBytes}); the reader would refuse it`, { compressed: gz.length });
  }
  const budget = inflationBudget(gz.length, lim);
  if (total > budget.bytes) throw overBudget(budget, `writeArchive: the tar stream would be ${total} bytes,`, { total });
  return gz;
}
