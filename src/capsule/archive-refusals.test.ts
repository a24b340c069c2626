// readArchive refusals: hand-crafted malicious and damaged archives (raw tar headers, raw gzip members), each
// refused with the expected code and details.reason (sigstore-style "_fail" cases).
import { gzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import type { ErrorCode } from "../protocol/errors.ts";
import type { RefusalReason } from "./_errors.ts";
import { RECORD_PADDING_MAX } from "./_tar-reader.ts";
import { concat, dir, END, enc, file, gz, gzipMember, header } from "./_test-tar.ts";
import { archiveIsCanonical } from "./archive.ts";
import { readArchive, writeArchive } from "./mod.ts";
import type { ArchiveLimits } from "./mod.ts";

const INVALID: ErrorCode = "REPLAY_CAPSULE_INVALID";
const TOO_LARGE: ErrorCode = "REPLAY_CAPSULE_TOO_LARGE";
const x = enc("x");
const ok = (path = "ok") => file(path, x);

type Case = { name: string; bytes: () => Uint8Array; code?: ErrorCode; reason: RefusalReason; says?: string; limits?: Partial<ArchiveLimits> };

function expectRefusal(c: Case): ReachError {
  let thrown: unknown;
  try {
    readArchive(c.bytes(), c.limits);
  } catch (err) {
    thrown = err;
  }
  expect(thrown, "readArchive did not throw").toBeInstanceOf(ReachError);
  const err = thrown as ReachError;
  expect({ code: err.code, reason: err.details.reason, message: err.message }).toMatchObject({ code: c.code ?? INVALID, reason: c.reason });
  if (c.says !== undefined) expect(err.message).toContain(c.says);
  return err;
}

function run(cases: Case[]): void {
  for (const c of cases) it(`${c.name}_fail → ${c.code ?? INVALID} (${c.reason})`, () => void expectRefusal(c));
}

describe("readArchive refuses unsafe paths", () => {
  run([
    { name: "absolute", bytes: () => gz(concat(file("/etc/passwd", x), END)), reason: "path", says: 'entry #1 (tar header at byte 0) "/etc/passwd" escapes the archive (absolute path)' },
    { name: "absolute-via-prefix", bytes: () => gz(concat(file("p", x, { fields: { prefix: "/etc", name: "x" } }), END)), reason: "path", says: '"/etc/x" escapes the archive' },
    { name: "dotdot", bytes: () => gz(concat(ok("a"), ok("b"), file("../x", x, { fields: { name: "../x" } }), END)), reason: "path", says: 'entry #3 (tar header at byte 2048) "../x" escapes the archive' },
    { name: "dotdot-inside", bytes: () => gz(concat(file("a", x, { fields: { name: "a/../../x" } }), END)), reason: "path", says: "'..' segment" },
    { name: "dotdot-in-prefix", bytes: () => gz(concat(file("a", x, { fields: { prefix: "../..", name: "x" } }), END)), reason: "path", says: '"../../x" escapes' },
    { name: "backslash", bytes: () => gz(concat(file("a", x, { fields: { name: "..\\x" } }), END)), reason: "path", says: "backslash" },
    { name: "dot-segment", bytes: () => gz(concat(file("a", x, { fields: { name: "a/./b" } }), END)), reason: "path", says: "'.' segment" },
    { name: "dot-slash-dotdot", bytes: () => gz(concat(file("a", x, { fields: { name: "./../x" } }), END)), reason: "path", says: "'..' segment" },
    { name: "dot-slash-absolute", bytes: () => gz(concat(file("a", x, { fields: { name: ".//etc/x" } }), END)), reason: "path", says: "absolute path" },
    { name: "empty-segment", bytes: () => gz(concat(file("a", x, { fields: { name: "a//b" } }), END)), reason: "path", says: "empty segment" },
    { name: "trailing-slash", bytes: () => gz(concat(file("a", x, { fields: { name: "a/" } }), END)), reason: "path" },
    { name: "empty-name", bytes: () => gz(concat(file("a", x, { fields: { name: "" } }), END)), reason: "path", says: "is empty" },
    { name: "non-ascii", bytes: () => gz(concat(file("a", x, { fields: { name: "caf\u00c3\u00a9" } }), END)), reason: "path", says: '"caf\\xc3\\xa9" contains a non-ASCII' },
    { name: "control-char", bytes: () => gz(concat(file("a", x, { fields: { name: "a\u0001b" } }), END)), reason: "path", says: "control character" },
    { name: "duplicate", bytes: () => gz(concat(ok("a"), ok("a"), END)), reason: "duplicate", says: 'entry #2 "a" appears twice' },
    { name: "duplicate-via-prefix", bytes: () => gz(concat(ok("a/b"), file("x", x, { fields: { prefix: "a", name: "b" } }), END)), reason: "duplicate" },
    { name: "duplicate-after-normalisation", bytes: () => gz(concat(ok("a"), file("x", x, { fields: { name: "./a" } }), END)), reason: "duplicate", says: 'entry #2 "./a" appears twice (also entry #1' },
    { name: "duplicate-unsorted", bytes: () => gz(concat(ok("b"), ok("a"), ok("b"), END)), reason: "duplicate" },
    { name: "file-then-inside-it", bytes: () => gz(concat(ok("a"), ok("a/b"), END)), reason: "conflict", says: 'is inside "a", which is a file' },
    { name: "inside-then-file", bytes: () => gz(concat(ok("a/b/c"), ok("z"), ok("a/b"), END)), reason: "conflict", says: 'entry #1 "a/b/c" is inside "a/b", which is a file (entry #3)' },
    { name: "file-and-directory", bytes: () => gz(concat(ok("a"), dir("a/"), END)), reason: "conflict", says: "is a directory, but entry #1 is a file" },
    { name: "directory-and-file", bytes: () => gz(concat(dir("./a/"), ok("a"), END)), reason: "conflict", says: "is a file, but entry #1 is a directory" },
    { name: "directory-inside-file", bytes: () => gz(concat(ok("a"), dir("a/b/"), END)), reason: "conflict" },
  ]);
});

describe("readArchive refuses everything but regular files", () => {
  const typed = (type: string, fields: Record<string, string> = {}) => () => gz(concat(file("a", new Uint8Array(0), { fields: { typeflag: type, ...fields } }), END));
  run([
    { name: "symlink", bytes: typed("2", { linkname: "/etc/passwd" }), reason: "link", says: 'is a symbolic link pointing to "/etc/passwd"' },
    { name: "hardlink", bytes: typed("1", { linkname: "../outside" }), reason: "link", says: "is a hard link" },
    { name: "char-device", bytes: typed("3"), reason: "device", says: "character device" },
    { name: "block-device", bytes: typed("4"), reason: "device", says: "block device" },
    { name: "directory-with-data", bytes: () => gz(concat(file("d/", x, { fields: { typeflag: "5" } }), END)), reason: "directory", says: "declares 1 bytes of data" },
    { name: "directory-dotdot", bytes: () => gz(concat(dir("../up/"), ok("a"), END)), reason: "path", says: "'..' segment" },
    { name: "directory-absolute", bytes: () => gz(concat(dir("/etc/"), END)), reason: "path" },
    { name: "fifo", bytes: typed("6"), reason: "fifo", says: "FIFO" },
    { name: "gnu-longlink", bytes: typed("K"), reason: "link" },
    { name: "gnu-sparse", bytes: typed("S"), reason: "extension-header", says: "sparse" },
    { name: "vendor-extension", bytes: typed("S"), reason: "extension-header" },
    { name: "unknown-type", bytes: typed("9"), reason: "unknown-type" },
  ]);
});

describe("readArchive refuses malformed headers", () => {
  const f = (fields: Record<string, string>, extra: Partial<Case> = {}) => () => gz(concat(file("a", x, { fields, ...extra }), END));
  run([
    { name: "bad-checksum", bytes: () => gz(concat(file("a", x, { checksum: "wrong" }), END)), reason: "header-checksum", says: "header checksum mismatch" },
    { name: "checksum-not-octal", bytes: () => gz(concat(file("a", x, { checksum: "zzzzzz \0" }), END)), reason: "header-checksum" },
    { name: "checksum-missing", bytes: () => gz(concat(file("a", x, { checksum: "" }), END)), reason: "header-checksum" },
    { name: "v7-no-magic", bytes: f({ magic: "", version: "" }), reason: "not-ustar" },
    { name: "ustar-magic-gnu-version", bytes: f({ magic: "ustar", version: " \0" }), reason: "not-ustar" },
    { name: "size-not-octal", bytes: f({ size: "0000000001x " }), reason: "bad-number", says: "is not an octal number" },
    { name: "size-empty", bytes: f({ size: "" }), reason: "bad-number" },
    { name: "size-digits-after-space", bytes: f({ size: "0000000 0001" }), reason: "bad-number" },
    { name: "size-base256-negative", bytes: f({ size: "\u00ff".repeat(12) }), reason: "bad-number" },
    { name: "size-base256-huge", bytes: f({ size: "\u0080" + "\u00ff".repeat(11) }), code: TOO_LARGE, reason: "entry-too-large" },
  ]);
});

describe("readArchive refuses a malformed tar stream", () => {
  run([
    { name: "non-zero-padding", bytes: () => gz(concat(file("a", x, { padByte: 0x41 }), END)), reason: "padding", says: "padding after its 1 bytes holds non-zero data" },
    { name: "missing-end", bytes: () => gz(ok("a")), reason: "missing-end", says: 'stops after entry #1 "a" without the two end-of-archive blocks' },
    { name: "one-end-block", bytes: () => gz(concat(ok("a"), new Uint8Array(512))), reason: "missing-end", says: "one zero block" },
    { name: "empty-tar", bytes: () => gz(new Uint8Array(0)), reason: "missing-end", says: "before its first entry" },
    { name: "header-after-one-zero-block", bytes: () => gz(concat(ok("a"), new Uint8Array(512), ok("b"), END)), reason: "end-marker" },
    { name: "garbage-after-record-padding", bytes: () => gz(concat(ok("a"), END, new Uint8Array(10240 - 2048), enc("x"))), reason: "trailing-data", says: "after its end-of-archive blocks" },
    { name: "zeros-past-the-largest-record", bytes: () => gz(concat(ok("a"), END, new Uint8Array(RECORD_PADDING_MAX + 1))), reason: "trailing-data", says: "zero bytes after its end-of-archive" },
    { name: "garbage-after-end", bytes: () => gz(concat(ok("a"), END, enc("GARBAGE"))), reason: "trailing-data" },
    { name: "hidden-entry-after-end", bytes: () => gz(concat(ok("a"), END, ok("evil"), END)), reason: "trailing-data" },
    { name: "truncated-in-data", bytes: () => gz(concat(header({ path: "a", size: 1000 }), new Uint8Array(100))), reason: "truncated", says: 'stops inside entry #1 "a"' },
    { name: "truncated-in-header", bytes: () => gz(concat(ok("a"), header({ path: "b" }).subarray(0, 300))), reason: "truncated", says: "inside a header block" },
    { name: "truncated-in-padding", bytes: () => gz(file("a", x).subarray(0, 600)), reason: "truncated" },
  ]);
});

describe("readArchive refuses a malformed gzip layer", () => {
  const good = () => writeArchive([{ path: "a", bytes: x }, { path: "b", bytes: enc("hello") }]);
  const patch = (at: number, value: number) => () => { const b = good().slice(); b[at] = value; return b; };
  run([
    { name: "empty-file", bytes: () => new Uint8Array(0), reason: "empty" },
    { name: "not-gzip", bytes: () => enc("hello, world, this is not gzip"), reason: "not-gzip" },
    { name: "uncompressed-tar", bytes: () => concat(ok("a"), END), reason: "not-gzip", says: "an uncompressed tar" },
    { name: "zlib-not-gzip", bytes: () => Uint8Array.of(0x78, 0x9c, 3, 0, 0, 0, 0, 1), reason: "not-gzip" },
    { name: "method-not-deflate", bytes: patch(2, 7), reason: "gzip-header", says: "compression method 7" },
    { name: "fhcrc-flag-without-crc", bytes: patch(3, 2), reason: "truncated" },
    { name: "reserved-flag", bytes: patch(3, 0x80), reason: "gzip-header", says: "reserved" },
    { name: "shorter-than-gzip", bytes: () => good().subarray(0, 15), reason: "truncated", says: "shorter than the smallest gzip file" },
    { name: "trailer-cut", bytes: () => good().subarray(0, good().length - 3), reason: "truncated", says: "the capsule is truncated" },
    { name: "trailer-missing", bytes: () => good().subarray(0, good().length - 8), reason: "truncated" },
    { name: "deflate-cut", bytes: () => good().subarray(0, good().length - 12), reason: "truncated" },
    { name: "one-stray-byte", bytes: () => concat(good(), Uint8Array.of(0)), reason: "trailing-data", says: "1 stray byte after" },
    { name: "three-stray-bytes", bytes: () => concat(good(), enc("abc")), reason: "trailing-data", says: "3 stray bytes" },
    { name: "stray-gzip-magic", bytes: () => concat(good(), Uint8Array.of(0x1f, 0x8b, 8)), reason: "trailing-data" },
    { name: "trailing-garbage", bytes: () => concat(good(), enc("trailing garbage")), reason: "trailing-data", says: "trailing data after its gzip member" },
    { name: "trailing-zeros", bytes: () => concat(good(), new Uint8Array(1024)), reason: "trailing-data" },
    { name: "second-member-after-the-end", bytes: () => concat(good(), good()), reason: "trailing-data", says: "after its end-of-archive blocks" },
    { name: "first-member-bad-crc", bytes: () => { const a = gz(ok("a")); a[a.length - 8]! ^= 1; return concat(a, gz(END)); }, reason: "crc-mismatch", says: "CRC-32" },
    { name: "second-member-bad-isize", bytes: () => { const b = gz(END); b[b.length - 4]! ^= 1; return concat(gz(ok("a")), b); }, reason: "size-mismatch", says: "(member 2, at byte" },
    { name: "second-member-truncated", bytes: () => concat(gz(ok("a")), gz(END).subarray(0, 15)), reason: "truncated" },
    { name: "garbage-between-members", bytes: () => concat(gz(ok("a")), enc("junk"), gz(END)), reason: "trailing-data" },
    { name: "bad-crc", bytes: () => { const b = good().slice(); b[b.length - 8]! ^= 1; return b; }, reason: "crc-mismatch", says: "CRC-32" },
    { name: "bad-isize", bytes: () => { const b = good().slice(); b[b.length - 4]! ^= 1; return b; }, reason: "size-mismatch" },
    { name: "invalid-block-type", bytes: () => gzipMember(Uint8Array.of(0x07, 0, 0, 0), 0, 0), reason: "deflate-corrupt", says: "compressed data is corrupted" },
    { name: "stored-block-short", bytes: () => gzipMember(concat(Uint8Array.of(1, 0xff, 0x7f, 0, 0x80), new Uint8Array(10)), 0, 0), reason: "truncated" },
  ]);

  it("reads a re-compressed archive (any gzip header a gzip tool writes) and tells it is not canonical", () => {
    const tar = concat(ok("a"), END);
    const level0 = gzipSync(tar, { level: 0, mtime: 0 });
    const variants = {
      fname: gzipSync(tar, { level: 6, mtime: 0, filename: "capsule.tar" }),
      mtime: gzipSync(tar, { level: 6, mtime: 1_700_000_000_000 }),
      level9: gzipSync(tar, { level: 9, mtime: 0 }),
      level0,
      os: patch(9, 255)(),
    };
    for (const [name, bytes] of Object.entries(variants)) {
      const entries = readArchive(bytes);
      expect([...entries.keys()], name).toEqual(name === "os" ? ["a", "b"] : ["a"]);
      expect(archiveIsCanonical(bytes, entries), name).toBe(false);
    }
    const canonical = good();
    expect(archiveIsCanonical(canonical, readArchive(canonical))).toBe(true);
  });
});

describe("readArchive enforces its limits before reading data", () => {
  const three = () => writeArchive([{ path: "a", bytes: new Uint8Array(100) }, { path: "b", bytes: new Uint8Array(2000) }, { path: "c", bytes: x }]);
  run([
    { name: "too-many-entries", bytes: three, limits: { maxEntries: 2 }, code: TOO_LARGE, reason: "too-many-entries", says: "more than 2 entries" },
    { name: "entry-too-large", bytes: three, limits: { maxEntryBytes: 1999 }, code: TOO_LARGE, reason: "entry-too-large", says: 'entry #2 "b" is 2000 bytes' },
    { name: "total-too-large", bytes: three, limits: { maxTotalBytes: 4095 }, code: TOO_LARGE, reason: "total-too-large" },
    { name: "compressed-too-large", bytes: three, limits: { maxCompressedBytes: 10 }, code: TOO_LARGE, reason: "compressed-too-large", says: "nothing was inflated" },
    { name: "huge-size-claim", bytes: () => gz(concat(header({ path: "a", size: 0o77777777777 }), END)), code: TOO_LARGE, reason: "entry-too-large" },
    { name: "size-claim-over-total", bytes: () => gz(concat(header({ path: "a", size: 600 * 2 ** 20 }), header({ path: "b", size: 500 * 2 ** 20 }))), code: TOO_LARGE, reason: "entry-too-large" },
  ]);

  it("accepts exactly at the limits", () => {
    expect(readArchive(three(), { maxEntries: 3, maxEntryBytes: 2000, maxTotalBytes: 5632 }).size).toBe(3);
    expect(readArchive(three(), { maxCompressedBytes: three().length }).size).toBe(3);
    expectRefusal({ name: "one-less", bytes: three, limits: { maxTotalBytes: 5631 }, code: TOO_LARGE, reason: "total-too-large" });
  });

  it("details name the entry and the offset", () => {
    const err = expectRefusal({ name: "d", bytes: () => gz(concat(ok("a"), ok("b"), file("c", x, { fields: { typeflag: "2" } }), END)), reason: "link" });
    expect(err.details).toMatchObject({ entry: 3, offset: 2048, path: "c", type: "2", reason: "link" });
  });
});
