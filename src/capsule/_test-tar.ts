/**
 * Test helpers (not part of the build): raw tar headers with any field overridden, tar streams, gzip members, and
 * gzip bombs built from a repeated sync-flushed deflate fragment. Used by the capsule tests and by
 * `conformance/lib/capsule-archive-cases.ts`; web-standard only, so they run under Node and Deno.
 * @module
 */
import { Deflate, gzipSync } from "fflate";
import { crc32Update } from "./_crc32.ts";
import { splitUstar } from "./_path.ts";
import { BLOCK, encodeHeader, HEADER_FIELDS } from "./_ustar.ts";
import { GZIP_OPTIONS } from "./archive.ts";
import type { ArchiveEntry } from "./archive.ts";

/** A small fixed set of entries (a long path with a ustar prefix, an empty file, a block-sized file, …). */
export function fixedEntries(): ArchiveEntry[] {
  return [
    { path: "capsule.json", bytes: enc('{"specVersion":"1.0.0"}\n') },
    { path: "events.jsonl", bytes: enc('{"type":"run.started"}\n{"type":"run.completed"}\n') },
    { path: "blobs/" + "ab".repeat(32), bytes: Uint8Array.from({ length: 1000 }, (_, i) => (i * 37) & 0xff) },
    { path: "empty", bytes: new Uint8Array(0) },
    { path: "pack/" + "d".repeat(60) + "/" + "f".repeat(90) + ".js", bytes: enc("export default 1;\n") },
    { path: "pack/block.bin", bytes: new Uint8Array(512).fill(7) },
  ];
}

/**
 * SHA-256 of `writeArchive(fixedEntries())`, pinned by the unit tests and the conformance cases on Node and Deno.
 * Changing it changes every capsule: do it deliberately (and regenerate conformance fingerprints).
 */
export const FIXED_ARCHIVE_SHA256 = "a505dd1d4f1afd94d51c629c6d38913ce8844d80b48798b2a863a1253f461e17";

/** UTF-8 bytes of a string. */
export function enc(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** One byte per char (chars must be < 0x100): for putting arbitrary bytes into header fields. */
export function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/** Concatenate byte arrays. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** What to put in a raw header. Fields are written as Latin-1 text, NUL-padded to the field's length. */
export type HeaderSpec = {
  /** The path, split as writeArchive would (ignored when `name` or `prefix` is given in `fields`). */
  path?: string;
  /** The size written in the size field (default 0). */
  size?: number;
  /** Raw field values by field name (`name`, `mode`, `typeflag`, `linkname`, `magic`, `prefix`, …). */
  fields?: Record<string, string>;
  /** "auto" (default): correct checksum; "wrong": correct + 1; "gnu": correct, spelled "dddddd\0 "; or raw text. */
  checksum?: "auto" | "wrong" | "gnu" | string;
};

/**
 * A 512-byte header: the canonical one for `path`/`size`, then `fields` applied, then the checksum.
 * @param spec see {@link HeaderSpec}
 * @returns the block
 */
export function header(spec: HeaderSpec = {}): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const [prefix, name] = splitUstar(spec.path ?? "file");
  encodeHeader(block, 0, prefix, name, spec.size ?? 0);
  for (const [field, value] of Object.entries(spec.fields ?? {})) {
    const f = HEADER_FIELDS.find(([n]) => n === field);
    if (f === undefined) throw new Error(`unknown header field ${field}`);
    const [, start, length] = f;
    if (value.length > length) throw new Error(`value for ${field} is longer than ${length}`);
    block.fill(0, start, start + length);
    block.set(latin1(value), start);
  }
  const checksum = spec.checksum ?? "auto";
  if (checksum === "auto" || checksum === "wrong" || checksum === "gnu") {
    let sum = 8 * 0x20;
    for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += block[i]!;
    if (checksum === "wrong") sum += 1;
    block.fill(0, 148, 156);
    block.set(latin1(sum.toString(8).padStart(6, "0") + (checksum === "gnu" ? "\u0000 " : " ")), 148);
  } else {
    block.fill(0, 148, 156);
    block.set(latin1(checksum), 148);
  }
  return block;
}

/** A header plus its data zero-padded to a block boundary (padding can be overridden with `padByte`). */
export function file(path: string, data: Uint8Array, spec: Omit<HeaderSpec, "path" | "size"> & { padByte?: number } = {}): Uint8Array {
  const padded = new Uint8Array(Math.ceil(data.length / BLOCK) * BLOCK).fill(spec.padByte ?? 0);
  padded.set(data);
  return concat(header({ ...spec, path, size: data.length }), padded);
}

/** The two zero blocks that end a tar stream. */
export const END: Uint8Array = new Uint8Array(2 * BLOCK);

/** Gzip with the capsule settings (one member, capsule header). */
export function gz(tar: Uint8Array): Uint8Array {
  return gzipSync(tar, GZIP_OPTIONS);
}

/**
 * Gzip with stored (uncompressed) deflate blocks and the capsule header: much faster than {@link gz} for sweeps
 * that re-wrap thousands of tar streams, and still exactly what the reader accepts.
 */
export function gzStored(tar: Uint8Array): Uint8Array {
  const out = gzipSync(tar, { level: 0, mtime: 0 });
  out[8] = 0; // fflate writes XFL 4 for level 0; the capsule header has XFL 0
  return out;
}

/** A gzip member around a raw deflate body, with a correct or chosen trailer. */
export function gzipMember(deflateBody: Uint8Array, crc: number, isize: number): Uint8Array {
  const trailer = new Uint8Array(8);
  const view = new DataView(trailer.buffer);
  view.setUint32(0, crc >>> 0, true);
  view.setUint32(4, isize >>> 0, true);
  return concat(Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3), deflateBody, trailer);
}

/** A byte-aligned, self-contained, non-final deflate fragment of `data` (sync flush of a fresh deflater). */
export function deflateFragment(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  const d = new Deflate({ level: 6 }, (chunk) => parts.push(chunk));
  d.push(data, false);
  d.flush(true);
  return concat(...parts);
}

/**
 * A gzip bomb: `prefix`, then `mebibytes` MiB of zeros, as a ~1 KiB deflate fragment per MiB repeated (so 2 GiB
 * is about 2 MB and builds in milliseconds). The trailer's CRC is correct up to 64 MiB of zeros (beyond that it is
 * not computed: readers must refuse long before reaching it).
 * @param mebibytes how many MiB of zeros
 * @param prefix bytes inflated before the zeros (e.g. a tar header)
 * @returns the `.gz` bytes
 */
export function zeroBomb(mebibytes: number, prefix: Uint8Array = new Uint8Array(0)): Uint8Array {
  const unit = deflateFragment(new Uint8Array(1 << 20));
  const head = prefix.length > 0 ? deflateFragment(prefix) : new Uint8Array(0);
  const body = new Uint8Array(head.length + unit.length * mebibytes + 2);
  body.set(head);
  for (let i = 0; i < mebibytes; i++) body.set(unit, head.length + i * unit.length);
  body.set([3, 0], body.length - 2); // empty final fixed-Huffman block
  let crc = crc32Update(0, prefix);
  if (mebibytes <= 64) for (let i = 0; i < mebibytes; i++) crc = crc32Update(crc, new Uint8Array(1 << 20));
  return gzipMember(body, crc, prefix.length + mebibytes * (1 << 20));
}

/** A non-final stored deflate block holding `data` (at most 65,535 bytes), starting and ending on a byte boundary. */
function storedFragment(data: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(0, data.length & 0xff, data.length >> 8, ~data.length & 0xff, (~data.length >> 8) & 0xff), data);
}

/**
 * A bomb of canonical tar entries over zeros: for each `[path, mebibytes]` a header then that many MiB of zeros, then
 * the two end blocks (headers and end blocks as stored blocks, each MiB of zeros a ~1 KiB deflate fragment, so 1 GiB
 * is about 1 MB). The trailer's CRC is correct up
 * to 64 MiB (beyond, it is not computed: readers must refuse long before reaching it); ISIZE is the true size.
 * @param entries paths (in ascending order) and sizes in MiB
 * @returns the `.gz` bytes
 */
export function tarBomb(entries: readonly (readonly [string, number])[]): Uint8Array {
  const unit = deflateFragment(new Uint8Array(1 << 20));
  const zeros = new Uint8Array(1 << 20);
  const parts: Uint8Array[] = [];
  let size = 1024;
  let crc = 0;
  for (const [path, mebibytes] of entries) {
    const h = header({ path, size: mebibytes * (1 << 20) });
    parts.push(storedFragment(h));
    for (let i = 0; i < mebibytes; i++) parts.push(unit);
    size += 512 + mebibytes * (1 << 20);
    if (size <= 64 << 20) for (let i = 0, c = (crc = crc32Update(crc, h)); i < mebibytes; i++) crc = c = crc32Update(c, zeros);
  }
  parts.push(storedFragment(new Uint8Array(1024)), Uint8Array.of(3, 0));
  crc = crc32Update(crc, new Uint8Array(1024));
  return gzipMember(concat(...parts), size <= 64 << 20 ? crc : 0, size % 2 ** 32);
}

/** A directory entry (type '5', no data) with `name` as given (e.g. `"./a/"`). */
export function dir(name: string): Uint8Array {
  return header({ path: "d", fields: { name, typeflag: "5" } });
}

/** One pax record, `"%d %s=%s\n"`, its decimal length counting itself (in UTF-8 bytes). */
export function paxRecord(key: string, value: string): string {
  const body = enc(` ${key}=${value}\n`).length;
  let length = body + 1;
  while (String(length).length + body !== length) length++;
  return `${length} ${key}=${value}\n`;
}

/** A pax extended header (`x`, or `g` for a global one) holding these records, its data padded to a block. */
export function pax(records: ReadonlyArray<readonly [string, string]>, type: "x" | "g" = "x"): Uint8Array {
  return file("PaxHeader/entry", enc(records.map(([k, v]) => paxRecord(k, v)).join("")), { fields: { typeflag: type } });
}

/** A GNU long-name header (`L`, GNU magic) naming the next entry. */
export function gnuLongName(name: string): Uint8Array {
  return file("././@LongLink", enc(name + "\u0000"), { fields: { typeflag: "L", magic: "ustar ", version: " \u0000" } });
}
