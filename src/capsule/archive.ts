/**
 * The capsule archive: a deterministic `.tar.gz` writer and a bounded, strict reader (seed 003 §8; ARCHITECTURE
 * "Capsule"). Web-standard TypeScript over fflate; synchronous.
 *
 * Format (`writeArchive`), byte-identical on every runtime for the same entries:
 * - tar: one POSIX ustar header per entry, entries in byte order of their paths, regular files only (directories
 *   are implicit, never entries), mode 0644, uid/gid 0, empty uname/gname, mtime 0, paths over 100 characters
 *   split into ustar `prefix`/`name` (never pax or GNU extension headers); data zero-padded to 512 bytes; then two
 *   zero blocks and nothing else (no padding to a 10 KiB record). Header bytes are those tar-stream 3 writes for the
 *   same entry (see `_ustar.ts`).
 * - gzip: fflate `gzipSync`'s bytes with {@link GZIP_OPTIONS} (written by `_deflate.ts`, fflate's deflate compiled to
 *   WebAssembly, which starts ~20 ms faster than fflate's JavaScript) — deflate level 6 (zlib's default: the usual size/speed
 *   balance), hash size pinned (`mem` 7) so that nothing depends on fflate's input-length heuristic, header MTIME 0,
 *   no file name, XFL 0, OS 3 (Unix, fflate's fixed value). One member. The reader accepts any gzip header (a
 *   re-compressed capsule is read and checked entry by entry); `archiveIsCanonical` tells whether the bytes are these.
 *
 * Reading (`readArchive`) accepts that format and what standard tools make of the same files — GNU tar's ustar,
 * pax and gnu formats, bsdtar, Python's tarfile, re-compressed by any gzip (several members too) — because a capsule
 * commits to its entries' paths and bytes (conformance/HASHING.md), not to how they were archived: directory
 * entries, `./` prefixes, pax `path`/`size` (other pax keywords ignored), GNU long names, base-256 and
 * NUL-terminated numbers, any owner, mode or time, any order, record padding (see `_tar-reader.ts`). Everything
 * hostile is refused with a `ReachError` whose `details.reason` says what was wrong (see `_errors.ts`): malformed,
 * malicious or damaged capsules are `REPLAY_CAPSULE_INVALID`, capsules over a limit (`limits.ts`)
 * `REPLAY_CAPSULE_TOO_LARGE`. Nothing is extracted: the entries are returned in memory. `archiveIsCanonical` tells
 * whether the bytes are exactly what `writeArchive` makes of the entries.
 *
 * Why not tar-stream (the project's chosen tar dependency)? Measured on tar-stream 3.2.2 under Node 20 and Deno 2.9
 * (its `pack` output is byte-identical on both): `pack` and `extract` are streamx streams, asynchronous only (no
 * byte is available synchronously after `finalize()`), and its synchronous header codec is not importable
 * (`tar-stream/headers.js` is outside the package's `exports`); `pack` silently writes pax headers for long or
 * non-ASCII names; `extract` silently applies GNU long-name and pax `path` headers (a `../../etc/…` long name
 * comes out as an ordinary file), and accepts a missing end-of-archive, garbage in numeric fields, non-zero
 * padding, absolute paths, duplicates and symlinks. So the header codec here is written out (a few dozen lines),
 * matching tar-stream's bytes, and the tests check our tar against tar-stream's `pack` and `extract`.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { tooLarge } from "./_errors.ts";
import type { RefusalReason } from "./_errors.ts";
import { gunzipCapsule } from "./_gunzip.ts";
import { TarReader } from "./_tar-reader.ts";
import { inflationBudget, resolveLimits } from "./limits.ts";
import type { ArchiveLimits } from "./limits.ts";
import { writeArchive } from "./archive-write.ts";

export { GZIP_OPTIONS, writeArchive } from "./archive-write.ts";
export type { ArchiveEntry } from "./archive-write.ts";

/**
 * Read a capsule archive written by {@link writeArchive} or re-archived by a standard tar (see the module notes),
 * within `limits`. Nothing is written anywhere; inflating stops at the first problem. What a capsule may inflate to
 * is bounded by its own size (`inflationBudget`, limits.ts): `maxInflationRatio` (100) times its compressed bytes, or
 * 8 MiB if more, and never past `maxTotalBytes`. A tar header declaring more than that is refused before its data is
 * inflated, and the inflated stream is cut off as soon as it passes the budget, so a small gzip bomb costs a few
 * megabytes.
 * @param bytes the `.tar.gz` bytes
 * @param limits optional bounds; defaults: 100,000 entries, 512 MiB per entry, 1 GiB inflated, 1 GiB + 1 MiB
 *   compressed, 100 inflated bytes per compressed byte past 8 MiB
 * @returns the entries, path → bytes, in ascending byte order of the paths (directory entries are not returned)
 * @throws TypeError when `bytes` is not a Uint8Array; RangeError for a bad limit
 * @throws ReachError `REPLAY_CAPSULE_INVALID` for anything damaged or hostile — not gzip, gzip flags, truncation
 *   anywhere, trailing data, corrupt deflate data, a CRC-32/ISIZE mismatch in any member, bad header checksum, a
 *   header that is not ustar/pax/GNU, links (also a pax `linkpath`), devices, FIFOs, sparse files, malformed or
 *   oversized pax and long-name headers, unsafe paths however spelled (absolute, `..`, backslash, … in a header, a
 *   pax `path` or a GNU long name), duplicates (also `a` and `./a`), a file used as a directory, non-zero padding,
 *   a missing or malformed end-of-archive, non-zero bytes or more than 1 MiB of zeros after it;
 *   `REPLAY_CAPSULE_TOO_LARGE` when a limit is exceeded (`inflation-ratio` for the ratio cap). `details.reason`
 *   names the refusal, and `details.inflated` how many bytes were inflated before it.
 * @example
 * ```ts
 * declare const bytes: Uint8Array; // a .tar.gz (refused with a ReachError when hostile or over a limit)
 * for (const [path, content] of readArchive(bytes, { maxTotalBytes: 64 * 1024 * 1024 })) console.log(path, content.length);
 * ```
 */
export function readArchive(bytes: Uint8Array, limits?: Partial<ArchiveLimits>): Map<string, Uint8Array> {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`"bytes" expected a Uint8Array, got ${typeof bytes}`);
  const lim = resolveLimits(limits);
  if (bytes.length > lim.maxCompressedBytes) {
    throw tooLarge("compressed-too-large", `the capsule is ${bytes.length} bytes, more than limits.maxCompressedBytes ` +
      `(${lim.maxCompressedBytes}); nothing was inflated — raise the limit only for capsules you trust`, { compressed: bytes.length });
  }
  const budget = inflationBudget(bytes.length, lim);
  const tar = new TarReader(lim, budget);
  gunzipCapsule(bytes, budget, (chunk) => tar.push(chunk));
  return tar.finish();
}

/**
 * True when `err` is a capsule refusal of the given reason (a `ReachError` with `details.reason === reason`).
 * @param err anything thrown
 * @param reason a `details.reason` slug, e.g. `"truncated"`
 * @returns whether it matches
 * @example try { readArchive(bytes) } catch (e) { if (isArchiveRefusal(e, "truncated")) retryDownload() }
 */
export function isArchiveRefusal(err: unknown, reason: RefusalReason): err is ReachError {
  return err instanceof ReachError && err.details.reason === reason;
}

/**
 * Whether an archive's bytes are exactly what `writeArchive` makes of its entries (the canonical, deterministic
 * encoding). A capsule that was re-compressed or re-packed still reads and verifies entry by entry; this tells that
 * its file is no longer byte-identical to the one the run wrote.
 * @param bytes the `.tar.gz` as read
 * @param entries its entries (`readArchive(bytes)`)
 * @returns true when re-encoding the entries gives the same bytes
 * @example const canonical = archiveIsCanonical(bytes, readArchive(bytes));
 */
export function archiveIsCanonical(bytes: Uint8Array, entries: ReadonlyMap<string, Uint8Array>): boolean {
  let again: Uint8Array;
  try {
    again = writeArchive([...entries].map(([path, content]) => ({ path, bytes: content })));
  } catch (err) {
    // The canonical encoding is over a limit the given bytes were read within (a re-compressed capsule whose
    // level-6 form compresses better than the inflation ratio allows): then they are not those bytes.
    if (err instanceof ReachError && err.code === "REPLAY_CAPSULE_TOO_LARGE") return false;
    throw err;
  }
  if (again.length !== bytes.length) return false;
  for (let i = 0; i < again.length; i++) if (again[i] !== bytes[i]) return false;
  return true;
}
