// readArchive reads what other tars write (GNU tar's ustar, pax and gnu formats, bsdtar, Python's tarfile: seed 003
// §8, a capsule commits to its entries, not to how they were archived) — hand-built byte fixtures of each variation —
// and still refuses the hostile uses of the same features: a pax path or GNU long name that escapes, a link target
// in a pax header, sparse maps, oversized or malformed extension headers, a pax size past the limits, truncation
// inside an extension header. The real tools' archives of a real capsule are in tests/rearchived-capsules.test.ts.
import { gzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import type { ErrorCode } from "../protocol/errors.ts";
import type { RefusalReason } from "./_errors.ts";
import { EXTENSION_MAX } from "./_pax.ts";
import { concat, dir, END, enc, file, gnuLongName, gz, gzipMember, header, pax } from "./_test-tar.ts";
import { archiveIsCanonical } from "./archive.ts";
import { readArchive, writeArchive } from "./mod.ts";

const x = enc("x");
const ok = (path = "ok") => file(path, x);
const long = "pack/" + "d".repeat(60) + "/" + "f".repeat(90) + ".js"; // 160 characters: needs a prefix, a pax path or an L

/** Read `bytes`, expect exactly `want` (path → text) in path order, and a non-canonical archive. */
function reads(bytes: Uint8Array, want: Record<string, string>): void {
  const got = readArchive(bytes);
  expect([...got.keys()]).toEqual(Object.keys(want).sort());
  for (const [path, text] of Object.entries(want)) expect(new TextDecoder().decode(got.get(path)), path).toBe(text);
  expect(archiveIsCanonical(bytes, got)).toBe(false);
}

describe("readArchive reads what other tars write", () => {
  const f = (fields: Record<string, string>) => gz(concat(file("a", x, { fields }), END));
  const cases: Array<[string, () => Uint8Array, Record<string, string>]> = [
    ["GNU magic (gnu and oldgnu formats)", () => f({ magic: "ustar ", version: " \u0000" }), { a: "x" }],
    ["GNU magic ignores the prefix area (old GNU keeps times there)", () => f({ magic: "ustar ", version: " \u0000", prefix: "\u0001\u0002junk" }), { a: "x" }],
    ["checksum spelled dddddd NUL space (GNU, bsdtar, Python)", () => gz(concat(file("a", x, { checksum: "gnu" }), END)), { a: "x" }],
    ["checksum as a signed sum (old tars)", () => gz(concat(file("a", x, { fields: { uname: "\u00e9" }, checksum: signedSum(file("a", x, { fields: { uname: "\u00e9" } })) }), END)), { a: "x" }],
    ["size NUL-terminated, 7-digit mode (GNU ustar, Python ustar)", () => f({ size: "00000000001\u0000", mode: "0000644\u0000" }), { a: "x" }],
    ["size with leading spaces", () => f({ size: "          1 " }), { a: "x" }],
    ["size filling all 12 bytes", () => f({ size: "000000000001" }), { a: "x" }],
    ["size in GNU base-256", () => f({ size: "\u0080" + "\u0000".repeat(10) + "\u0001" }), { a: "x" }],
    ["owners, mode, mtime, device numbers", () => f({ mode: "0100755\u0000", uid: "0001750\u0000", gid: "0001750\u0000", uname: "root", gname: "wheel", mtime: "14000000000\u0000", devmajor: "0000001\u0000" }), { a: "x" }],
    ["a link name on a regular file, garbage after a name's NUL, the unused tail", () => f({ linkname: "ignored", name: "a\u0000junk", "(unused)": "x" }), { a: "x" }],
    ["old-style regular type NUL and contiguous type 7", () => gz(concat(file("a", x, { fields: { typeflag: "\u0000" } }), file("b", x, { fields: { typeflag: "7" } }), END)), { a: "x", b: "x" }],
    ["a longer prefix than needed (GNU splits at the last slash)", () => gz(concat(file("d/e/a", x, { fields: { prefix: "d/e", name: "a" } }), END)), { "d/e/a": "x" }],
    ["entries in any order (readdir order)", () => gz(concat(ok("b"), ok("a/c"), ok("a".repeat(3)), END)), { b: "x", "a/c": "x", aaa: "x" }],
    ["directory entries, ./ prefixes and the root", () => gz(concat(dir("./"), dir("./a/"), file("./a/b", x), dir("a"), file("././c", x), dir("."), END)), { "a/b": "x", c: "x" }],
    ["a pax header: path, size, times, owners, SCHILY xattrs, charset, comment", () => gz(concat(pax([["path", long], ["mtime", "1700000000.123456789"], ["atime", "1"], ["ctime", "2"], ["uid", "1000"], ["gid", "1000"], ["uname", "me"], ["gname", "us"], ["SCHILY.xattr.user.x", "v"], ["LIBARCHIVE.creationtime", "3"], ["hdrcharset", "ISO-IR 10646 2000 UTF-8"], ["comment", "c"], ["size", "1"]]), file("PaxHeader-ignored-name", x, { fields: { size: "00000000000 " } }), END)), { [long]: "x" }],
    ["a pax path with ./ and an empty value removing an override", () => gz(concat(pax([["path", "./p/q"], ["size", "5"], ["size", ""]]), ok("ignored"), END)), { "p/q": "x" }],
    ["a pax global header with a comment (git archive)", () => gz(concat(pax([["comment", "0123abcd"]], "g"), ok("a"), END)), { a: "x" }],
    ["a GNU long name", () => gz(concat(gnuLongName(long), file(long.slice(0, 100), x, { fields: { magic: "ustar ", version: " \u0000" } }), END)), { [long]: "x" }],
    ["a GNU long name and a pax header for one entry (pax wins)", () => gz(concat(gnuLongName("l/one"), pax([["path", "p/two"]]), ok("h"), END)), { "p/two": "x" }],
    ["a pax size larger than the size field", () => gz(concat(pax([["size", "600"]]), file("a", new Uint8Array(600).fill(0x41), { fields: { size: "00000000000 " } }), END)), { a: "A".repeat(600) }],
    ["record padding: zero blocks up to a 10 KiB record", () => gz(concat(ok("a"), END, new Uint8Array(10240 - 2048))), { a: "x" }],
    ["an odd number of zero bytes after the end", () => gz(concat(ok("a"), END, new Uint8Array(700))), { a: "x" }],
    ["several gzip members (pigz, cat a.gz b.gz), one splitting a header", () => { const t = concat(ok("a"), ok("b"), END); return concat(gz(t.subarray(0, 700)), gz(new Uint8Array(0)), gz(t.subarray(700))); }, { a: "x", b: "x" }],
    ["gzip header with FEXTRA, FNAME, FCOMMENT and FHCRC", () => fancyGzip(concat(ok("a"), END)), { a: "x" }],
    ["gzip -9 with a file name and a time", () => gzipSync(concat(ok("a"), END), { level: 9, mtime: 1_700_000_000_000, filename: "c.tar" }), { a: "x" }],
  ];
  for (const [name, bytes, want] of cases) it(name, () => reads(bytes(), want));

  it("every variation above is refused by a reader that ignored it (each fixture differs from the canonical bytes)", () => {
    const canonical = writeArchive([{ path: "a", bytes: x }]);
    for (const [name, bytes] of cases) expect(Buffer.from(bytes()).equals(Buffer.from(canonical)), name).toBe(false);
  });
});

type Case = { name: string; bytes: () => Uint8Array; code?: ErrorCode; reason: RefusalReason; says?: string };

describe("readArchive refuses the hostile uses of pax headers and GNU long names", () => {
  const cases: Case[] = [
    { name: "pax-path-dotdot", bytes: () => gz(concat(pax([["path", "../../etc/passwd"]]), ok("a"), END)), reason: "path", says: '"../../etc/passwd" escapes the archive' },
    { name: "pax-path-dot-slash-dotdot", bytes: () => gz(concat(pax([["path", "./../x"]]), ok("a"), END)), reason: "path" },
    { name: "pax-path-absolute", bytes: () => gz(concat(pax([["path", "/etc/cron.d/x"]]), ok("a"), END)), reason: "path", says: "absolute path" },
    { name: "pax-path-non-ascii", bytes: () => gz(concat(pax([["path", "caf\u00e9"]]), ok("a"), END)), reason: "path", says: "non-ASCII" },
    { name: "pax-path-too-long", bytes: () => gz(concat(pax([["path", "a/".repeat(200) + "b"]]), ok("a"), END)), reason: "path", says: "longer than" },
    { name: "pax-path-on-a-symlink", bytes: () => gz(concat(pax([["path", "a"]]), file("s", new Uint8Array(0), { fields: { typeflag: "2", linkname: "/etc/passwd" } }), END)), reason: "link", says: '"a" is a symbolic link pointing to "/etc/passwd"' },
    { name: "pax-linkpath", bytes: () => gz(concat(pax([["linkpath", "/etc/passwd"]]), ok("a"), END)), reason: "link", says: "linkpath" },
    { name: "pax-sparse", bytes: () => gz(concat(pax([["GNU.sparse.size", "1048576"]]), ok("a"), END)), reason: "extension-header", says: "sparse" },
    { name: "pax-duplicate-path", bytes: () => gz(concat(ok("a"), pax([["path", "a"]]), ok("b"), END)), reason: "duplicate", says: "appears twice" },
    { name: "pax-global-path", bytes: () => gz(concat(pax([["path", "x"]], "g"), ok("a"), END)), reason: "extension-header", says: "global header sets \"path\"" },
    { name: "pax-global-size", bytes: () => gz(concat(pax([["size", "0"]], "g"), ok("a"), END)), reason: "extension-header" },
    { name: "pax-size-bomb", bytes: () => gz(concat(pax([["size", String(2 ** 40)]]), ok("a"), END)), code: "REPLAY_CAPSULE_TOO_LARGE", reason: "entry-too-large" },
    { name: "pax-size-not-decimal", bytes: () => gz(concat(pax([["size", "0x10"]]), ok("a"), END)), reason: "extension-header", says: "not a decimal number" },
    { name: "pax-record-length-wrong", bytes: () => gz(concat(file("P", enc("99 path=a\n"), { fields: { typeflag: "x" } }), ok("a"), END)), reason: "extension-header", says: "malformed pax header" },
    { name: "pax-record-no-length", bytes: () => gz(concat(file("P", enc("path=a\n"), { fields: { typeflag: "x" } }), ok("a"), END)), reason: "extension-header" },
    { name: "pax-record-no-equals", bytes: () => gz(concat(file("P", enc("9 pathab\n"), { fields: { typeflag: "x" } }), ok("a"), END)), reason: "extension-header" },
    { name: "pax-record-not-utf8", bytes: () => gz(concat(file("P", Uint8Array.of(0x38, 0x20, 0x70, 0x3d, 0xff, 0xfe, 0x61, 0x0a), { fields: { typeflag: "x" } }), ok("a"), END)), reason: "extension-header", says: "not UTF-8" },
    { name: "pax-too-large", bytes: () => gz(concat(header({ path: "P", size: EXTENSION_MAX + 1, fields: { typeflag: "x" } }), END)), reason: "extension-header", says: `more than the ${EXTENSION_MAX}` },
    { name: "pax-truncated", bytes: () => gz(concat(pax([["path", long]])).subarray(0, 600)), reason: "truncated" },
    { name: "pax-twice", bytes: () => gz(concat(pax([["path", "a"]]), pax([["path", "b"]]), ok("c"), END)), reason: "extension-header", says: "second pax header" },
    { name: "pax-then-end", bytes: () => gz(concat(ok("a"), pax([["path", "b"]]), END)), reason: "extension-header", says: "no entry follows" },
    { name: "pax-global-between-pax-and-entry", bytes: () => gz(concat(pax([["path", "a"]]), pax([["comment", "c"]], "g"), ok("c"), END)), reason: "extension-header" },
    { name: "gnu-longname-dotdot", bytes: () => gz(concat(gnuLongName("../../etc/" + "p".repeat(120)), ok("a"), END)), reason: "path", says: "escapes the archive" },
    { name: "gnu-longname-absolute", bytes: () => gz(concat(gnuLongName("/tmp/x"), ok("a"), END)), reason: "path" },
    { name: "gnu-longname-duplicate", bytes: () => gz(concat(ok(long), gnuLongName("./" + long), ok("a"), END)), reason: "duplicate" },
    { name: "gnu-longname-twice", bytes: () => gz(concat(gnuLongName("a"), gnuLongName("b"), ok("c"), END)), reason: "extension-header" },
    { name: "gnu-longname-huge", bytes: () => gz(concat(gnuLongName("a".repeat(5000)), ok("a"), END)), reason: "path", says: "longer than" },
    { name: "gnu-longname-truncated", bytes: () => gz(gnuLongName(long).subarray(0, 530)), reason: "truncated" },
    { name: "gnu-longname-on-a-hardlink", bytes: () => gz(concat(gnuLongName("a"), file("h", new Uint8Array(0), { fields: { typeflag: "1", linkname: "../outside" } }), END)), reason: "link" },
    { name: "directory-entry-is-a-dotdot-via-pax", bytes: () => gz(concat(pax([["path", "../d/"]]), dir("d/"), END)), reason: "path" },
  ];
  for (const c of cases) {
    it(`${c.name}_fail → ${c.code ?? "REPLAY_CAPSULE_INVALID"} (${c.reason})`, () => {
      let thrown: unknown;
      try {
        readArchive(c.bytes());
      } catch (err) {
        thrown = err;
      }
      expect(thrown, "readArchive did not throw").toBeInstanceOf(ReachError);
      const err = thrown as ReachError;
      expect({ code: err.code, reason: err.details.reason }).toEqual({ code: c.code ?? "REPLAY_CAPSULE_INVALID", reason: c.reason });
      if (c.says !== undefined) expect(err.message).toContain(c.says);
    });
  }
});

/** The checksum field for `block` summed as signed chars, spelled like old tars. */
function signedSum(block: Uint8Array): string {
  let sum = 8 * 0x20;
  for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += block[i]! < 0x80 ? block[i]! : block[i]! - 0x100;
  return sum.toString(8).padStart(6, "0") + "\u0000 ";
}

/** A gzip member of `data` whose header carries every optional field (RFC 1952 §2.3.1). */
function fancyGzip(data: Uint8Array): Uint8Array {
  const plain = gzipSync(data, { level: 6, mtime: 0 });
  const extra = Uint8Array.of(6, 0, 0x42, 0x43, 2, 0, 0x10, 0x00); // XLEN 6: subfield "BC" (BGZF), 2 bytes
  const head = concat(Uint8Array.of(0x1f, 0x8b, 8, 4 | 8 | 16 | 2, 0, 0, 0, 0, 0, 3), extra, enc("c.tar\u0000"), enc("a comment\u0000"), Uint8Array.of(0xab, 0xcd));
  const body = plain.subarray(10, plain.length - 8);
  const trailer = plain.subarray(plain.length - 8);
  const view = new DataView(trailer.buffer, trailer.byteOffset, 8);
  return concat(head, gzipMember(body, view.getUint32(0, true), view.getUint32(4, true)).subarray(10));
}
