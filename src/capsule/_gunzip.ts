/**
 * Bounded, strict gunzip of a capsule (internal; RFC 1952). fflate inflates; this module adds what fflate does not
 * check: gzip members exactly filling the input, each one's CRC-32 and ISIZE, and a cap on the inflated size that
 * stops inflating as soon as it is passed.
 *
 * - The header must be gzip's (magic 1f 8b, method 8: deflate). `writeArchive` writes {@link GZIP_HEADER} (no flags,
 *   MTIME 0, XFL 0, OS 3) and one member; a capsule that was re-compressed (`gzip -9`, a file name, an extra field
 *   or a comment in the header, several members as `pigz`, `gzip -r` or `cat a.gz b.gz` make, RFC 1952 §2.2) is
 *   still read — what a capsule holds is checked entry by entry against hashes the run hash commits to, not by its
 *   compressed bytes — and `archiveIsCanonical` (archive.ts) tells the caller it is no longer byte-identical to what
 *   was written.
 * - The input is pushed to fflate's streaming `Gunzip` in pieces of {@link inputChunk} bytes, so one push inflates
 *   to at most ~1032 × that (deflate's best ratio), and every output chunk is counted before it is used: a gzip
 *   bomb is refused after at most its budget (`inflationBudget` in `limits.ts`: `maxTotalBytes`, or less by the
 *   ratio cap) plus one push's output, never allocated whole. Every refusal raised while inflating records in
 *   `details.inflated` how many bytes had been inflated when it stopped.
 * - Where does the last member end? fflate exposes member boundaries only through `onmember`, called when the
 *   header of a next member has been parsed, with its offset (all output of the member before has been passed on by
 *   then, so its trailer is checked there). So after the input, a constant empty gzip member ({@link SENTINEL}) is
 *   pushed: a well-formed capsule gives an `onmember` call at offset `input.length` while it is pushed, which proves
 *   that the last deflate stream plus its 8-byte trailer end exactly at the end of the input. A parse error on the
 *   bytes after a member is trailing data (seen while pushing the input) or a truncated/stray-byte tail (seen while
 *   pushing the sentinel); a deflate error while pushing the sentinel means the input stopped inside a deflate
 *   stream. Output produced while the sentinel is pushed is held back until the member is proved complete, so a
 *   truncated capsule is reported as truncated, not as whatever garbage the tar parser would have seen.
 * @module
 */
import { Gunzip } from "fflate";
import { ReachError } from "../protocol/mod.ts";
import { crc32Update } from "./_crc32.ts";
import { invalid, overBudget, tooLarge } from "./_errors.ts";
import type { InflationBudget } from "./limits.ts";

/**
 * Compressed bytes per push: maxTotalBytes / 1024, between 4 KiB and 32 KiB. Deflate inflates at most ~1032:1, so
 * one push yields at most about `maxTotalBytes`, and never more than ~33 MiB, before its output is counted (fflate
 * grows its output buffer by doubling, so the transient allocation is at most about twice that). Smaller pushes
 * cost throughput (fflate copies its window and output on every push); 32 KiB measured within noise of 64 KiB.
 */
export function inputChunk(maxTotalBytes: number): number {
  return Math.min(32 * 1024, Math.max(4 * 1024, Math.floor(maxTotalBytes / 1024)));
}

/** An empty gzip member (header with MTIME 0, OS 3; empty final fixed-Huffman block; CRC 0; ISIZE 0). */
const SENTINEL = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0);
/** The gzip header of every capsule (fflate `gzipSync` with level 6 and MTIME 0). */
export const GZIP_HEADER: Uint8Array = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3);
/** Smallest gzip member: header, an empty deflate block, trailer. */
const MIN_MEMBER = 20;

const FLAG_NAMES = ["FTEXT", "FHCRC", "FEXTRA", "FNAME", "FCOMMENT", "reserved 0x20", "reserved 0x40", "reserved 0x80"];

/** Thrown from `onmember` to stop fflate at a member boundary. */
class MemberAt {
  constructor(readonly offset: number) {}
}

function u32le(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/** Check the gzip header; see the module notes. */
function checkHeader(bytes: Uint8Array): void {
  const n = bytes.length;
  if (n === 0) throw invalid("empty", "the capsule is empty (0 bytes); a capsule is a .tar.gz file written by reach-wasm");
  const magicOk = bytes[0] === 0x1f && (n < 2 || bytes[1] === 0x8b);
  if (!magicOk) {
    const tar = n >= 262 && String.fromCharCode(...bytes.subarray(257, 262)) === "ustar";
    throw invalid("not-gzip", `the capsule is not gzip data (it starts with ${hexBytes(bytes.subarray(0, 4))}` +
      `${tar ? ", an uncompressed tar" : ""}); a capsule is a .tar.gz file written by reach-wasm`);
  }
  if (n >= 3 && bytes[2] !== 8) {
    throw invalid("gzip-header", `the capsule's gzip header names compression method ${bytes[2]}, not 8 (deflate)`);
  }
  if (n >= 4 && (bytes[3]! & 0xe0) !== 0) {
    const flags = FLAG_NAMES.filter((_, i) => (bytes[3]! & (1 << i)) !== 0).join(", ");
    throw invalid("gzip-header", `the capsule's gzip header sets reserved flags (${flags}); it is not a gzip file reach-wasm can read`);
  }
  if (n < MIN_MEMBER) {
    throw invalid("truncated", `the capsule is truncated: ${n} bytes is shorter than the smallest gzip file (${MIN_MEMBER}); ` +
      "copy it again from its source", { offset: n });
  }
}

function hexBytes(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(" ");
}

/**
 * Inflate a capsule, passing the tar stream to `sink` chunk by chunk.
 * @param bytes the whole `.tar.gz`
 * @param budget the most inflated bytes allowed (`inflationBudget`)
 * @param sink receives the inflated bytes in order; it may throw to stop
 * @throws ReachError `REPLAY_CAPSULE_INVALID` (reasons `empty`, `not-gzip`, `gzip-header`, `truncated`,
 *   `trailing-data`, `deflate-corrupt`, `crc-mismatch`, `size-mismatch`),
 *   `REPLAY_CAPSULE_TOO_LARGE` (`total-too-large`, `inflation-ratio`), or whatever `sink` throws; a `ReachError`
 *   raised while inflating has `details.inflated`
 */
export function gunzipCapsule(bytes: Uint8Array, budget: InflationBudget, sink: (chunk: Uint8Array) => void): void {
  checkHeader(bytes);
  let inflated = 0;
  try {
    inflate(bytes, budget, sink, (n) => (inflated = n));
  } catch (err) {
    if (err instanceof ReachError) err.details["inflated"] ??= inflated;
    throw err;
  }
}

/** The running CRC-32 and length of the gzip member being inflated. */
type Member = { index: number; start: number; crc: number; size: number };

/**
 * Check the trailer of a member that ends at `end` (its CRC-32 and ISIZE are the 8 bytes before `end`).
 * @throws ReachError `crc-mismatch` or `size-mismatch`
 */
function checkTrailer(bytes: Uint8Array, end: number, m: Member): void {
  const which = m.index === 0 ? "" : ` (member ${m.index + 1}, at byte ${m.start})`;
  const storedCrc = u32le(bytes, end - 8);
  if (storedCrc !== m.crc) {
    throw invalid("crc-mismatch", `the capsule's gzip CRC-32 is ${hex(storedCrc)} but its data gives ${hex(m.crc)}${which}; ` +
      "the capsule is corrupted — copy it again from its source", { offset: end - 8 });
  }
  const storedSize = u32le(bytes, end - 4);
  if (storedSize !== m.size % 2 ** 32) {
    throw invalid("size-mismatch", `the capsule's gzip trailer records ${storedSize} inflated bytes (mod 2^32) but it ` +
      `inflates to ${m.size}${which}; the capsule is corrupted — copy it again from its source`, { offset: end - 4 });
  }
}

/** {@link gunzipCapsule} after the header check; `progress` is told the inflated count as it grows. */
function inflate(bytes: Uint8Array, budget: InflationBudget, sink: (chunk: Uint8Array) => void, progress: (inflated: number) => void): void {
  const maxTotalBytes = budget.bytes;
  const n = bytes.length;
  let inflated = 0;
  let member: Member = { index: 0, start: 0, crc: 0, size: 0 };
  let sentinel = false;
  const held: Uint8Array[] = [];
  const gunzip = new Gunzip((chunk: Uint8Array) => {
    inflated += chunk.length;
    progress(inflated);
    if (inflated > maxTotalBytes) {
      if (budget.byRatio) throw overBudget(budget, "the capsule inflates to", { inflated });
      throw tooLarge("total-too-large", `the capsule inflates to more than limits.maxTotalBytes (${maxTotalBytes} bytes); ` +
        "inflating stopped there (a gzip bomb, or a capsule larger than the limit you chose)", { inflated });
    }
    if (sentinel) held.push(chunk);
    else if (chunk.length > 0) sink(chunk); // before the CRC: a refusal by the tar parser costs no CRC work
    member.crc = crc32Update(member.crc, chunk);
    member.size += chunk.length;
  });
  let closed = false;
  gunzip.onmember = (offset: number) => {
    if (sentinel) {
      if (offset !== n) throw new MemberAt(offset);
      closed = true;
      return;
    }
    // Another member of the capsule starts at `offset` (gzip -r, pigz, `cat a.gz b.gz`): fflate has passed on all
    // the output of the one before, whose trailer ends there.
    checkTrailer(bytes, offset, member);
    member = { index: member.index + 1, start: offset, crc: 0, size: 0 };
  };
  try {
    // Ramp up from 4 KiB, so that a bomb's first push yields ~4 MiB, not ~33 MiB.
    const max = inputChunk(maxTotalBytes);
    for (let i = 0, step = 4096; i < n; i += step, step = Math.min(max, step * 2)) {
      gunzip.push(bytes.subarray(i, Math.min(n, i + step)), false);
    }
  } catch (err) {
    if (err instanceof ReachError) throw err;
    if (flateCode(err) === 6) {
      throw invalid("trailing-data", "the capsule has trailing data after its gzip member; only further gzip members may " +
        "follow one — the capsule was altered");
    }
    throw invalid("deflate-corrupt", `the capsule's compressed data is corrupted (${describe(err)}); copy it again from its source`,
      {}, err);
  }

  sentinel = true;
  let failure: unknown;
  try {
    gunzip.push(SENTINEL, true);
  } catch (err) {
    if (err instanceof ReachError) throw err;
    failure = err;
  }
  if (failure !== undefined || !closed) unclosed(bytes, member, failure);
  checkTrailer(bytes, n, member);
  for (const chunk of held) if (chunk.length > 0) sink(chunk);
}

/** The last member does not end exactly at the end of the input: stray bytes, or a truncated capsule. */
function unclosed(bytes: Uint8Array, member: Member, failure: unknown): never {
  const n = bytes.length;
  if (failure instanceof MemberAt && failure.offset < n) {
    throw invalid("trailing-data", `the capsule has ${n - failure.offset} bytes of trailing data after its gzip member; ` +
      "only further gzip members may follow one — the capsule was altered", { offset: failure.offset });
  }
  for (let k = 1; k <= 3; k++) {
    const t = n - 8 - k;
    if (t >= member.start + 10 && member.size > 0 && u32le(bytes, t) === member.crc && u32le(bytes, t + 4) === member.size % 2 ** 32) {
      throw invalid("trailing-data", `the capsule has ${k} stray byte${k > 1 ? "s" : ""} after its gzip member; ` +
        "reach-wasm writes nothing after it — the capsule was altered", { offset: n - k });
    }
  }
  throw invalid("truncated", "the capsule is truncated: its gzip stream does not end at the end of the file " +
    `(${n} bytes); copy it again from its source`, { offset: n }, failure);
}

function flateCode(err: unknown): unknown {
  return typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
}

function describe(err: unknown): string {
  return err instanceof Error ? `deflate: ${err.message}` : `deflate: ${String(err)}`;
}

function hex(n: number): string {
  return n.toString(16).padStart(8, "0");
}
