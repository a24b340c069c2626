/**
 * pax extended headers and GNU long names (internal; POSIX `pax` "pax Extended Header", GNU tar's `././@LongLink`):
 * what other tars put in front of an entry to give it a long path or a size past ustar's fields. A capsule is read
 * for its entries' paths and bytes only, so of the pax keywords just `path` and `size` apply; the ones that cannot
 * be honoured without changing what a file holds (`linkpath`, sparse maps) are refused, and every other keyword
 * (times, owners, `charset`, `comment`, `SCHILY.*` extended attributes, `LIBARCHIVE.*`, …) is ignored.
 * @module
 */
import { invalid, showName } from "./_errors.ts";

/** The largest pax or GNU long-name header read (its data bytes): far more than any capsule path needs. */
export const EXTENSION_MAX = 64 * 1024;

/** What a pax header (or a GNU long name) says about the next entry. */
export type Overrides = { path?: string; size?: number };

/** Where a header was, for messages and details. */
type Where = { entry: number; offset: number };

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Keywords that would make the entry's bytes something other than its data: refused. */
function refusedKeyword(key: string): string | undefined {
  if (key === "linkpath") return "a link target (linkpath), but capsules hold regular files only";
  if (key.startsWith("GNU.sparse.") || key === "SUN.holesdata") return `a sparse-file map (${key}): its data would not be the file's bytes`;
  return undefined;
}

/**
 * Parse the records of a pax header, `"%d %s=%s\n"` each (the length counts the whole record), and keep `path` and
 * `size`. A global header (`g`, e.g. git archive's `comment`) may not set either: it would apply to every entry.
 * @param data the header's data bytes
 * @param global whether it is a `g` (global) header
 * @param where the header's position
 * @returns the overrides for the next entry (an empty value, `path=`, removes the override, as POSIX says)
 * @throws ReachError `REPLAY_CAPSULE_INVALID` (reason `extension-header` for a malformed record or a refused or
 *   global `path`/`size`, `link` for `linkpath`)
 */
export function parsePax(data: Uint8Array, global: boolean, where: Where): Overrides {
  const at = `capsule entry #${where.entry} (tar header at byte ${where.offset})`;
  const bad = (what: string) => invalid("extension-header", `${at}: a malformed pax ${global ? "global " : ""}header (${what}); ` +
    "the archive is damaged or was not written by a tar", where);
  const out: Overrides = {};
  let i = 0;
  while (i < data.length) {
    if (data[i] === 0 && data.subarray(i).every((b) => b === 0)) break; // NUL fill after the last record
    let digits = 0;
    let length = 0;
    while (i + digits < data.length && data[i + digits]! >= 0x30 && data[i + digits]! <= 0x39 && digits < 6) {
      length = length * 10 + data[i + digits]! - 0x30;
      digits++;
    }
    if (digits === 0 || data[i + digits] !== 0x20) throw bad(`a record at byte ${i} does not start with its length and a space`);
    if (length <= digits + 1 || i + length > data.length || data[i + length - 1] !== 0x0a) {
      throw bad(`the record at byte ${i} declares ${length} bytes, which do not end with a newline inside the header`);
    }
    let text: string;
    try {
      text = UTF8.decode(data.subarray(i + digits + 1, i + length - 1));
    } catch {
      throw bad(`the record at byte ${i} is not UTF-8`);
    }
    const eq = text.indexOf("=");
    if (eq <= 0) throw bad(`the record at byte ${i} has no keyword=value`);
    apply(out, text.slice(0, eq), text.slice(eq + 1), global, where, at, bad);
    i += length;
  }
  return out;
}

function apply(out: Overrides, key: string, value: string, global: boolean, where: Where, at: string, bad: (w: string) => Error): void {
  const refused = refusedKeyword(key);
  if (refused !== undefined && value !== "") {
    throw invalid(key === "linkpath" ? "link" : "extension-header", `${at}: a pax header gives ${refused}; the archive is refused`,
      { ...where, keyword: key });
  }
  if (key !== "path" && key !== "size") return;
  if (global && value !== "") {
    throw invalid("extension-header", `${at}: a pax global header sets "${key}" for every entry that follows; capsule ` +
      "archives never need one — the archive is refused", { ...where, keyword: key });
  }
  if (key === "path") {
    if (value === "") delete out.path;
    else out.path = value;
    return;
  }
  if (value === "") delete out.size;
  else if (/^[0-9]{1,15}$/.test(value)) out.size = Number(value);
  else throw bad(`size=${showName(value)} is not a decimal number`);
}

/**
 * The name a GNU long-name header (`L`) gives the next entry: its data up to the first NUL.
 * @param data the header's data bytes
 * @returns the name, one char per byte (checked later like any path)
 */
export function longName(data: Uint8Array): string {
  const nul = data.indexOf(0);
  // Past 1024 characters a path is refused as too long whatever follows, so the rest need not be decoded.
  return String.fromCharCode(...data.subarray(0, Math.min(nul === -1 ? data.length : nul, 2048)));
}
