// Capsule archive: determinism, the pinned format, round trips, agreement with tar-stream (the project's tar
// dependency) and with the protocol's entry-path pattern, and the writer's refusals.
import { createHash } from "node:crypto";
import { gunzipSync } from "fflate";
import tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { ENTRY_PATH_RE } from "../protocol/_common.ts";
import { ReachError } from "../protocol/errors.ts";
import { crc32Update } from "./_crc32.ts";
import { pathProblem } from "./_path.ts";
import { enc, FIXED_ARCHIVE_SHA256 as PINNED, fixedEntries } from "./_test-tar.ts";
import { DEFAULT_ARCHIVE_LIMITS, GZIP_OPTIONS, isArchiveRefusal, readArchive, resolveLimits, writeArchive } from "./mod.ts";
import type { ArchiveEntry } from "./mod.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function refusal(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    return err as ReachError;
  }
  throw new Error("expected a ReachError, nothing was thrown");
}

async function tarStreamPack(entries: ArchiveEntry[]): Promise<Uint8Array> {
  const pack = tar.pack();
  const chunks: Uint8Array[] = [];
  pack.on("data", (c: unknown) => void chunks.push(c as Uint8Array));
  const done = new Promise<void>((resolve) => pack.on("end", () => resolve()));
  for (const e of entries) {
    pack.entry({ name: e.path, size: e.bytes.length, mode: 0o644, uid: 0, gid: 0, uname: "", gname: "", mtime: new Date(0) }, e.bytes as never);
  }
  pack.finalize();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

async function tarStreamExtract(bytes: Uint8Array): Promise<Array<[string, string, Uint8Array]>> {
  const extract = tar.extract();
  const out: Array<[string, string, Uint8Array]> = [];
  const done = new Promise<void>((resolve, reject) => {
    extract.on("finish", () => resolve());
    extract.on("error", (err: unknown) => reject(err));
  });
  extract.on("entry", (h, stream, next) => {
    const parts: Buffer[] = [];
    stream.on("data", (c: unknown) => void parts.push(c as Buffer));
    stream.on("end", () => { out.push([h.name, h.type ?? "", new Uint8Array(Buffer.concat(parts))]); next(); });
  });
  extract.end(Buffer.from(bytes));
  await done;
  return out;
}

describe("writeArchive: determinism and format", () => {
  it("pins the bytes of a small fixed archive (a change here changes every capsule)", () => {
    expect(sha(writeArchive(fixedEntries()))).toBe(PINNED);
  });

  it("gives the same bytes for the same entries in any order, every time", () => {
    const entries = fixedEntries();
    const want = writeArchive(entries);
    const orders = [[...entries].reverse(), [entries[3]!, entries[0]!, entries[5]!, entries[1]!, entries[4]!, entries[2]!]];
    for (const order of orders) expect(sha(writeArchive(order))).toBe(sha(want));
    expect(sha(writeArchive(entries))).toBe(sha(want));
  });

  it("writes the capsule gzip header and a single member with a correct trailer", () => {
    const gz = writeArchive(fixedEntries());
    expect(Array.from(gz.subarray(0, 10))).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
    const tarBytes = gunzipSync(gz);
    const view = new DataView(gz.buffer, gz.byteOffset + gz.length - 8);
    expect(view.getUint32(0, true)).toBe(crc32Update(0, tarBytes));
    expect(view.getUint32(4, true)).toBe(tarBytes.length);
    expect(GZIP_OPTIONS).toEqual({ level: 6, mem: 7, mtime: 0 });
  });

  it("writes ustar headers: sorted, mode 0644, uid/gid 0, no owner names, mtime 0, two end blocks and nothing more", () => {
    const tarBytes = gunzipSync(writeArchive(fixedEntries()));
    const text = (at: number, len: number) => String.fromCharCode(...tarBytes.subarray(at, at + len));
    const names: string[] = [];
    let at = 0;
    for (;;) {
      if (tarBytes.subarray(at, at + 512).every((b) => b === 0)) break;
      const prefix = text(at + 345, 155).replace(/\0+$/, "");
      names.push((prefix ? prefix + "/" : "") + text(at, 100).replace(/\0+$/, ""));
      expect(text(at + 100, 8)).toBe("000644 \0");
      expect(text(at + 108, 16)).toBe("000000 \u0000000000 \u0000");
      expect(text(at + 136, 12)).toBe("00000000000 ");
      expect(text(at + 156, 1)).toBe("0");
      expect(text(at + 257, 8)).toBe("ustar\u000000");
      expect(tarBytes.subarray(at + 265, at + 329).every((b) => b === 0)).toBe(true); // uname, gname
      const size = parseInt(text(at + 124, 11), 8);
      at += 512 + Math.ceil(size / 512) * 512;
    }
    expect(names).toEqual([...names].sort());
    expect(names).toHaveLength(6);
    expect(tarBytes.length).toBe(at + 1024);
    expect(tarBytes.subarray(at).every((b) => b === 0)).toBe(true);
  });

  it("writes the same tar bytes as tar-stream's pack for the same entries", async () => {
    const entries = [...fixedEntries()].sort((a, b) => (a.path < b.path ? -1 : 1));
    const ours = gunzipSync(writeArchive(entries));
    expect(sha(await tarStreamPack(entries))).toBe(sha(ours));
  });

  it("is read back by tar-stream's extract as the same regular files", async () => {
    const got = await tarStreamExtract(gunzipSync(writeArchive(fixedEntries())));
    const want = [...fixedEntries()].sort((a, b) => (a.path < b.path ? -1 : 1));
    expect(got.map(([n, t]) => [n, t])).toEqual(want.map((e) => [e.path, "file"]));
    got.forEach(([, , bytes], i) => expect(sha(bytes)).toBe(sha(want[i]!.bytes)));
  });

  it("writes an archive with no entries as two zero blocks", () => {
    const gz = writeArchive([]);
    expect(gunzipSync(gz)).toEqual(new Uint8Array(1024));
    expect(readArchive(gz).size).toBe(0);
  });
});

describe("readArchive: round trip", () => {
  it("returns every entry, byte for byte, in path order", () => {
    const entries = fixedEntries();
    const got = readArchive(writeArchive(entries));
    expect([...got.keys()]).toEqual(entries.map((e) => e.path).sort());
    for (const e of entries) expect(sha(got.get(e.path)!)).toBe(sha(e.bytes));
  });

  it("round-trips sizes around block boundaries, a 255-character path, and megabytes of mixed data", () => {
    let x = 1;
    const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 16) & 0xff;
    const entries: ArchiveEntry[] = [0, 1, 511, 512, 513, 1023, 1024, 1025, 65536, 100_000].map((n) => ({
      path: `sizes/${String(n).padStart(6, "0")}`,
      bytes: Uint8Array.from({ length: n }, rnd),
    }));
    entries.push({ path: "p".repeat(100) + "/" + "q".repeat(54) + "/" + "n".repeat(99), bytes: enc("deep") });
    entries.push({ path: "a b/c-d_e.f~g!h(i)j[k]l{m}n@o#p$q%r^s&t+u=v,w;x'y`z:", bytes: enc("punctuation") });
    entries.push({ path: "big/random", bytes: Uint8Array.from({ length: 3 << 20 }, rnd) });
    entries.push({ path: "big/text", bytes: enc('{"k":"value"},'.repeat(200_000)) });
    const got = readArchive(writeArchive(entries));
    expect(got.size).toBe(entries.length);
    for (const e of entries) expect(sha(got.get(e.path)!), e.path).toBe(sha(e.bytes));
  });

  it("returns copies that do not share memory with one another", () => {
    const got = readArchive(writeArchive(fixedEntries()));
    for (const bytes of got.values()) expect(bytes.byteLength).toBe(bytes.buffer.byteLength);
  });

  it("reads with the same limits it was written with, and refuses with tighter ones", () => {
    const entries = fixedEntries();
    const gz = writeArchive(entries, { maxEntries: 6, maxEntryBytes: 1000 });
    expect(readArchive(gz, { maxEntries: 6, maxEntryBytes: 1000 }).size).toBe(6);
    expect(isArchiveRefusal(refusal(() => readArchive(gz, { maxEntries: 5 })), "too-many-entries")).toBe(true);
    expect(isArchiveRefusal(refusal(() => readArchive(gz, { maxEntryBytes: 999 })), "entry-too-large")).toBe(true);
  });
});

describe("writeArchive: refusals", () => {
  const bad: Array<[string, string]> = [
    ["", "is empty"],
    ["/etc/passwd", "escapes the archive (absolute path)"],
    ["../x", "escapes the archive ('..' segment)"],
    ["a/../../x", "escapes the archive ('..' segment)"],
    ["a/..", "escapes the archive ('..' segment)"],
    ["./a", "has a '.' segment"],
    ["a/./b", "has a '.' segment"],
    ["a//b", "has an empty segment"],
    ["a/", "has an empty segment"],
    ["a\\b", "contains a backslash"],
    ["C:\\x", "contains a backslash"],
    ["a\u0000b", "contains NUL"],
    ["a\nb", "control character"],
    ["a\u007fb", "control character"],
    ["caf\u00e9", "non-ASCII"],
    ["\ud83d\ude00", "non-ASCII"],
    ["x".repeat(101), "segment longer than 100"],
    ["q".repeat(100) + "/" + "r".repeat(100) + "/" + "s".repeat(50), "does not fit a ustar header"],
    ["p".repeat(156) + "/n", "segment longer than 100"],
    ["a/".repeat(200) + "b", "longer than 256"],
  ];
  for (const [path, why] of bad) {
    it(`refuses the path ${JSON.stringify(path.length > 40 ? path.slice(0, 40) + "…" : path)} (${why})`, () => {
      const err = refusal(() => writeArchive([{ path: "ok", bytes: new Uint8Array(1) }, { path, bytes: new Uint8Array(1) }]));
      expect(err.code).toBe("PROTO_INVALID_ARGUMENT");
      expect(err.details.reason).toBe("path");
      expect(err.details.entry).toBe(2);
      expect(err.message).toContain(why);
      expect(err.message).toContain("writeArchive: entry #2 path");
    });
  }

  it("refuses a path given twice, and a file used as a directory", () => {
    const one = new Uint8Array(1);
    const dup = refusal(() => writeArchive([{ path: "a/b", bytes: one }, { path: "c", bytes: one }, { path: "a/b", bytes: one }]));
    expect([dup.code, dup.details.reason]).toEqual(["PROTO_INVALID_ARGUMENT", "duplicate"]);
    expect(dup.message).toContain('"a/b" appears twice');
    const clash = refusal(() => writeArchive([{ path: "a/b/c", bytes: one }, { path: "a/b", bytes: one }]));
    expect([clash.code, clash.details.reason]).toEqual(["PROTO_INVALID_ARGUMENT", "conflict"]);
    expect(clash.message).toContain('is inside "a/b", which is a file');
    // Case is significant, and a name that merely starts like a directory is no clash.
    expect(readArchive(writeArchive([{ path: "A", bytes: one }, { path: "a", bytes: one }, { path: "a-b/c", bytes: one }])).size).toBe(3);
  });

  it("refuses what its reader would refuse under the same limits", () => {
    const e = (path: string, n: number) => ({ path, bytes: new Uint8Array(n) });
    const tooMany = refusal(() => writeArchive([e("a", 0), e("b", 0), e("c", 0)], { maxEntries: 2 }));
    expect([tooMany.code, tooMany.details.reason]).toEqual(["REPLAY_CAPSULE_TOO_LARGE", "too-many-entries"]);
    const big = refusal(() => writeArchive([e("a", 101)], { maxEntryBytes: 100 }));
    expect([big.code, big.details.reason]).toEqual(["REPLAY_CAPSULE_TOO_LARGE", "entry-too-large"]);
    const total = refusal(() => writeArchive([e("a", 512), e("b", 512)], { maxTotalBytes: 3071 }));
    expect([total.code, total.details.reason]).toEqual(["REPLAY_CAPSULE_TOO_LARGE", "total-too-large"]);
    expect(readArchive(writeArchive([e("a", 512), e("b", 512)], { maxTotalBytes: 3072 }), { maxTotalBytes: 3072 }).size).toBe(2);
    const compressed = refusal(() => writeArchive([e("a", 1)], { maxCompressedBytes: 10 }));
    expect([compressed.code, compressed.details.reason]).toEqual(["REPLAY_CAPSULE_TOO_LARGE", "compressed-too-large"]);
  });

  it("throws TypeError/RangeError for arguments of the wrong type", () => {
    expect(() => writeArchive("x" as never)).toThrow(TypeError);
    expect(() => writeArchive([{ path: "a", bytes: [1, 2] as never }])).toThrow(TypeError);
    expect(() => writeArchive([{ path: 1 as never, bytes: new Uint8Array(0) }])).toThrow(TypeError);
    expect(() => writeArchive([null as never])).toThrow(TypeError);
    expect(() => readArchive("x" as never)).toThrow(TypeError);
    expect(() => readArchive(new Uint8Array(0), { maxEntries: -1 })).toThrow(RangeError);
    expect(() => readArchive(new Uint8Array(0), { maxEntries: 1.5 })).toThrow(RangeError);
    expect(() => readArchive(new Uint8Array(0), { maxEntrys: 1 } as never)).toThrow(TypeError);
  });

  it("documents its default limits", () => {
    expect(resolveLimits()).toEqual({ maxEntries: 100_000, maxEntryBytes: 512 * 2 ** 20, maxTotalBytes: 2 ** 30, maxCompressedBytes: 2 ** 30 + 2 ** 20 });
    expect(resolveLimits()).toEqual(DEFAULT_ARCHIVE_LIMITS);
  });
});

describe("capsule paths agree with the protocol's entry-path pattern", () => {
  it("accepts exactly what ENTRY_PATH_RE accepts, for paths that fit ustar", () => {
    const samples = ["a", "a/b", "a b", "a:b", "~x", "a.b", ".a", "a.", "..a", "a..", "...", "a/.b", "x/...", "-", "a-b/c_d",
      "", ".", "..", "/", "/a", "a/", "a//b", "./a", "a/.", "a/./b", "a/..", "../a", "a\\b", "a\tb", "é", "a\u007f", "[]{}", "`", "|"];
    for (const p of samples) expect(pathProblem(p) === undefined, JSON.stringify(p)).toBe(ENTRY_PATH_RE.test(p));
    for (let c = 0; c < 0x100; c++) {
      const p = `x${String.fromCharCode(c)}y`;
      expect(pathProblem(p) === undefined, `char ${c}`).toBe(ENTRY_PATH_RE.test(p));
    }
  });
});

describe("CRC-32", () => {
  it("matches the check value and is incremental", () => {
    expect(crc32Update(0, enc("123456789"))).toBe(0xcbf43926);
    const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff);
    expect(crc32Update(crc32Update(0, data.subarray(0, 333)), data.subarray(333))).toBe(crc32Update(0, data));
    expect(crc32Update(0, new Uint8Array(0))).toBe(0);
  });
});
