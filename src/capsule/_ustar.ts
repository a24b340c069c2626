/**
 * The one ustar header reach-wasm writes, and its strict decoder (internal; ARCHITECTURE "Capsule", POSIX.1-1988
 * ustar as in POSIX `pax` "ustar Interchange Format").
 *
 * Every header is a regular file (`typeflag` '0') with mode 0644, uid/gid 0, empty uname/gname, mtime 0, ustar
 * magic "ustar\0" version "00", and the path split into `prefix`/`name` by {@link splitUstar}. Numbers are written
 * the way tar-stream 3 writes them (so its `pack` produces the same bytes for the same entry, checked by the tests):
 * fixed-width zero-padded octal followed by a space, the 8-byte fields ending in NUL (`"000644 \0"`), the 12-byte
 * fields without one (`"00000000005 "`), and the checksum as six digits, space, NUL (`"012345 \0"`).
 *
 * The decoder accepts exactly these headers: after the checks that give specific messages (checksum, magic, type,
 * path, size), the header is re-encoded and compared byte for byte, so any other value in any field (another
 * mode, an owner name, a link name, garbage after a NUL) is refused as non-canonical, naming the field.
 * @module
 */
import { invalid, showName } from "./_errors.ts";
import type { RefusalReason } from "./_errors.ts";
import { pathProblem, splitUstar } from "./_path.ts";

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
function field(block: Uint8Array, start: number, length: number): string {
  let end = start;
  while (end < start + length && block[end] !== 0) end++;
  return String.fromCharCode(...block.subarray(start, end));
}

/** The raw bytes of a field, printable (for messages). */
function rawField(block: Uint8Array, start: number, length: number): string {
  return showName(String.fromCharCode(...block.subarray(start, start + length)));
}

const TYPE_NAMES: Readonly<Record<string, readonly [RefusalReason, string]>> = {
  "1": ["link", "a hard link"],
  "2": ["link", "a symbolic link"],
  "3": ["device", "a character device"],
  "4": ["device", "a block device"],
  "5": ["directory", "a directory entry (capsules never hold directory entries; directories are implicit)"],
  "6": ["fifo", "a FIFO (named pipe)"],
  "7": ["unknown-type", "a contiguous file (type '7'; reach-wasm writes regular files, type '0')"],
  "\u0000": ["unknown-type", "an old-style regular file (type NUL; reach-wasm writes type '0')"],
  x: ["extension-header", "a pax extended header (type 'x'), which reach-wasm never writes"],
  g: ["extension-header", "a pax global header (type 'g'), which reach-wasm never writes"],
  L: ["extension-header", "a GNU long-name header (type 'L'), which reach-wasm never writes"],
  K: ["extension-header", "a GNU long-link header (type 'K'), which reach-wasm never writes"],
};

/** A decoded, accepted header. */
export type Header = { path: string; size: number };

/**
 * Decode and check one (non-zero) header block.
 * @param block 512 bytes
 * @param entry 1-based entry number, for messages
 * @param offset offset of the block in the tar stream, for messages
 * @returns the path and size
 * @throws ReachError `REPLAY_CAPSULE_INVALID` (reason `header-checksum`, `not-ustar`, `link`, `device`, `fifo`,
 *   `directory`, `extension-header`, `unknown-type`, `path`, `bad-number` or `non-canonical`)
 */
export function decodeHeader(block: Uint8Array, entry: number, offset: number): Header {
  const at = `capsule entry #${entry} (tar header at byte ${offset})`;
  const where = { entry, offset };
  let sum = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += block[i]!;
  const stored = /^ *([0-7]{1,7})[ \0]/.exec(String.fromCharCode(...block.subarray(148, 156)) + " ");
  if (stored === null || parseInt(stored[1]!, 8) !== sum) {
    throw invalid("header-checksum", `${at}: header checksum mismatch (stored ${rawField(block, 148, 8)}, computed ` +
      `${sum.toString(8)}); the capsule is corrupted — copy it again from its source`, where);
  }
  const magic = field(block, 257, 6) + "/" + String.fromCharCode(block[263]!, block[264]!);
  if (magic !== "ustar/00") {
    const gnu = magic === "ustar / \u0000";
    throw invalid("not-ustar", `${at}: not a POSIX ustar header (magic ${rawField(block, 257, 8)}${gnu ? ", GNU tar format" : ""}); ` +
      "capsules are written by reach-wasm in ustar format only", where);
  }
  const prefix = field(block, 345, 155);
  const name = field(block, 0, 100);
  const path = prefix === "" ? name : `${prefix}/${name}`;
  const type = String.fromCharCode(block[156]!);
  if (type !== "0") {
    const [reason, what]: readonly [RefusalReason, string] = TYPE_NAMES[type] ?? (/^[A-Z]$/.test(type)
      ? ["extension-header", `a vendor extension header (type '${type}')`] as const
      : ["unknown-type", `an entry of unknown type ${showName(type)}`] as const);
    const target = reason === "link" ? ` pointing to ${showName(field(block, 157, 100))}` : "";
    throw invalid(reason, `${at} ${showName(path)} is ${what}${target}; capsules hold regular files only, so this one ` +
      "was not written by reach-wasm and is refused", { ...where, path, type });
  }
  const problem = pathProblem(path);
  if (problem !== undefined) {
    throw invalid("path", `${at} ${showName(path)} ${problem}; the capsule is malicious or damaged — nothing was extracted`,
      { ...where, path });
  }
  const digits = /^([0-7]{11}) $/.exec(String.fromCharCode(...block.subarray(124, 136)));
  if (digits === null) {
    throw invalid("bad-number", `${at} ${showName(path)}: the size field ${rawField(block, 124, 12)} is not 11 octal ` +
      "digits and a space (base-256 sizes and other spellings are not written by reach-wasm)", { ...where, path });
  }
  const size = parseInt(digits[1]!, 8);
  const [wantPrefix, wantName] = splitUstar(path);
  const canonical = new Uint8Array(BLOCK);
  encodeHeader(canonical, 0, wantPrefix, wantName, size);
  // The checksum differs whenever another field does, so it is compared last, to name the field that matters.
  for (let k = 0; k < BLOCK; k++) {
    const i = k < BLOCK - 8 ? (k < 148 ? k : k + 8) : k - (BLOCK - 8) + 148;
    if (canonical[i] !== block[i]) {
      const [fname, start, length] = HEADER_FIELDS.find(([, s, l]) => i >= s && i < s + l)!;
      throw invalid("non-canonical", `${at} ${showName(path)}: header field "${fname}" is ${rawField(block, start, length)}, ` +
        `but reach-wasm writes ${rawField(canonical, start, length)} (regular files, mode 0644, uid/gid 0, no owner ` +
        "names, mtime 0); the capsule was not written by reach-wasm or was altered", { ...where, path, field: fname });
    }
  }
  return { path, size };
}
