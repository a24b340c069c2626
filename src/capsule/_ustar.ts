/**
 * The one ustar header reach-wasm writes, and the tolerant decoder of the headers other tars write (internal;
 * ARCHITECTURE "Capsule", POSIX.1-1988 ustar as in POSIX `pax` "ustar Interchange Format", GNU tar's format).
 *
 * Written: every header is a regular file (`typeflag` '0') with mode 0644, uid/gid 0, empty uname/gname, mtime 0,
 * ustar magic "ustar\0" version "00", and the path split into `prefix`/`name` by `splitUstar` (`_path.ts`). Numbers are
 * written the way tar-stream 3 writes them (so its `pack` produces the same bytes for the same entry, checked by the
 * tests): fixed-width zero-padded octal followed by a space, the 8-byte fields ending in NUL (`"000644 \0"`), the
 * 12-byte fields without one (`"00000000005 "`), and the checksum as six digits, space, NUL (`"012345 \0"`).
 *
 * Read ({@link decodeHeader}): what GNU tar (ustar, pax, gnu formats), bsdtar and Python's tarfile write — any
 * spelling of the numbers, GNU base-256 sizes, the GNU magic, any prefix/name split, any owner, mode or time. What
 * the header's type and path may be is checked by `_tar-reader.ts`, after pax and GNU long-name headers apply.
 * @module
 */
import { invalid, showName } from "./_errors.ts";

/** Size of a tar block. */
export const BLOCK = 512;
/** Largest size the 11 octal digits of the size field hold (8 GiB - 1). */
export const MAX_USTAR_SIZE = 0o77777777777;

/** The header fields: name, offset, length. */
export const HEADER_FIELDS: ReadonlyArray<readonly [string, number, number]> = [
  ["name", 0, 100], ["mode", 100, 8], ["uid", 108, 8], ["gid", 116, 8], ["size", 124, 12], ["mtime", 136, 12],
  ["chksum", 148, 8], ["typeflag", 156, 1], ["linkname", 157, 100], ["magic", 257, 6], ["version", 263, 2],
  ["uname", 265, 32], ["gname", 297, 32], ["devmajor", 329, 8], ["devminor", 337, 8], ["prefix", 345, 155],
  ["(unused)", 500, 12],
];

/** The constant part of every header (name, prefix, size and checksum are zero here). */
const TEMPLATE: Uint8Array = (() => {
  const t = new Uint8Array(BLOCK);
  const put = (at: number, text: string) => { for (let i = 0; i < text.length; i++) t[at + i] = text.charCodeAt(i); };
  put(100, "000644 "); // mode
  put(108, "000000 "); // uid
  put(116, "000000 "); // gid
  put(136, "00000000000 "); // mtime
  put(156, "0"); // typeflag: regular file
  put(257, "ustar\u000000"); // magic "ustar\0", version "00"
  put(329, "000000 "); // devmajor
  put(337, "000000 "); // devminor
  return t;
})();
/** Checksum of the template, counting the checksum field as eight spaces. */
const TEMPLATE_SUM = TEMPLATE.reduce((s, b) => s + b, 0) + 8 * 0x20;

/**
 * Write the header of a regular file into `out` at `at`; those 512 bytes must be zero beforehand.
 * @param out the destination
 * @param at where the header starts
 * @param prefix the ustar prefix (ASCII, at most 155 characters)
 * @param name the ustar name (ASCII, at most 100 characters)
 * @param size the file size, at most {@link MAX_USTAR_SIZE}
 */
export function encodeHeader(out: Uint8Array, at: number, prefix: string, name: string, size: number): void {
  out.set(TEMPLATE, at);
  let sum = TEMPLATE_SUM;
  for (let i = 0; i < name.length; i++) sum += out[at + i] = name.charCodeAt(i);
  for (let i = 0; i < prefix.length; i++) sum += out[at + 345 + i] = prefix.charCodeAt(i);
  const digits = size.toString(8).padStart(11, "0");
  for (let i = 0; i < 11; i++) sum += out[at + 124 + i] = digits.charCodeAt(i);
  sum += out[at + 135] = 0x20;
  const check = sum.toString(8).padStart(6, "0");
  for (let i = 0; i < 6; i++) out[at + 148 + i] = check.charCodeAt(i);
  out[at + 154] = 0x20;
}

/** Text of `block[start, start+length)` up to the first NUL, one char per byte. */
export function field(block: Uint8Array, start: number, length: number): string {
  let end = start;
  while (end < start + length && block[end] !== 0) end++;
  return String.fromCharCode(...block.subarray(start, end));
}

/** The raw bytes of a field, printable (for messages). */
function rawField(block: Uint8Array, start: number, length: number): string {
  return showName(String.fromCharCode(...block.subarray(start, start + length)));
}

/**
 * A numeric header field as tar writers spell it: octal digits after optional spaces, ended by spaces and/or NULs
 * or filling the whole field (GNU tar, bsdtar, Python's tarfile and reach-wasm differ only in these), or GNU's
 * base-256 form (first byte 0x80, then a big-endian unsigned number; a value past 2^53 comes back as
 * `Number.MAX_SAFE_INTEGER`, which every limit refuses).
 * @returns the value, or `undefined` when the field is not a number in any of those spellings (also a negative
 *   base-256 number, first byte 0xff)
 */
export function numericField(block: Uint8Array, start: number, length: number): number | undefined {
  const first = block[start]!;
  if (first === 0x80) {
    let value = 0;
    for (let i = start + 1; i < start + length; i++) value = value * 256 + block[i]!;
    return value > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : value;
  }
  const m = /^ *([0-7]+)[ \0]*$/.exec(String.fromCharCode(...block.subarray(start, start + length)));
  if (m === null) return undefined;
  const value = parseInt(m[1]!, 8);
  return value > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : value;
}

/** The two header formats accepted: POSIX ustar (`ustar\0` `00`, also pax) and GNU (`ustar ` ` \0`, also old GNU). */
export type HeaderFormat = "ustar" | "gnu";

/** A header block decoded, before pax and GNU long-name headers are applied (`_tar-reader.ts` applies them). */
export type RawHeader = {
  /** The typeflag, one character (`"0"`, `"5"`, `"x"`, `"\0"`, …). */
  type: string;
  /** The path as the block stores it: `prefix/name` for ustar, `name` alone for GNU (whose prefix area holds times). */
  path: string;
  /** The size field. */
  size: number;
  /** The link name field (only for messages about links). */
  linkname: string;
  /** Which magic the block carries. */
  format: HeaderFormat;
};

/**
 * Decode one (non-zero) header block, tolerantly: any writer's spelling of the checksum and size, the POSIX or GNU
 * magic, any prefix/name split. Mode, owner, times, device numbers and the unused tail are not looked at: a capsule
 * commits to its entries' paths and bytes (conformance/HASHING.md), never to tar metadata, and `archiveIsCanonical`
 * (archive.ts) tells whether the archive is the one reach-wasm wrote.
 * @param block 512 bytes
 * @param entry 1-based header number, for messages
 * @param offset offset of the block in the tar stream, for messages
 * @returns the decoded fields
 * @throws ReachError `REPLAY_CAPSULE_INVALID` (reason `header-checksum`, `not-ustar` or `bad-number`)
 */
export function decodeHeader(block: Uint8Array, entry: number, offset: number): RawHeader {
  const at = `capsule entry #${entry} (tar header at byte ${offset})`;
  const where = { entry, offset };
  let sum = 8 * 0x20;
  let signed = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) {
    if (i >= 148 && i < 156) continue;
    sum += block[i]!;
    signed += block[i]! < 0x80 ? block[i]! : block[i]! - 0x100; // some old tars sum signed chars
  }
  const stored = numericField(block, 148, 8);
  if (stored === undefined || (stored !== sum && stored !== signed)) {
    throw invalid("header-checksum", `${at}: header checksum mismatch (stored ${rawField(block, 148, 8)}, computed ` +
      `${sum.toString(8)}); the capsule is corrupted — copy it again from its source`, where);
  }
  const magic = String.fromCharCode(...block.subarray(257, 265));
  const format: HeaderFormat | undefined = magic === "ustar\u000000" ? "ustar" : magic === "ustar  \u0000" ? "gnu" : undefined;
  if (format === undefined) {
    throw invalid("not-ustar", `${at}: not a ustar, pax or GNU tar header (magic ${rawField(block, 257, 8)}); ` +
      "re-create the archive with a POSIX or GNU tar (for instance `tar --format=pax -czf`)", where);
  }
  const name = field(block, 0, 100);
  const prefix = format === "ustar" ? field(block, 345, 155) : "";
  const path = prefix === "" ? name : `${prefix}/${name}`;
  const size = numericField(block, 124, 12);
  if (size === undefined) {
    throw invalid("bad-number", `${at} ${showName(path)}: the size field ${rawField(block, 124, 12)} is not an octal ` +
      "number or a GNU base-256 number; the capsule is damaged", { ...where, path });
  }
  return { type: String.fromCharCode(block[156]!), path, size, linkname: field(block, 157, 100), format };
}
