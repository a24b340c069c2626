// Damage sweeps and gzip bombs: a real archive truncated at every offset and with every byte flipped, its tar stream
// truncated at every offset, random garbage, and bombs of 2 GiB. Every case must throw a ReachError (never a
// TypeError/RangeError, never hang), within a bounded time and memory.
import { gunzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { pathProblem } from "./_path.ts";
import { concat, dir, END, enc, file, gnuLongName, gzStored, header, pax, tarBomb, zeroBomb } from "./_test-tar.ts";
import { archiveIsCanonical } from "./archive.ts";
import { readArchive, writeArchive } from "./mod.ts";
import type { ArchiveLimits } from "./mod.ts";

const smallEntries = () => [
  { path: "capsule.json", bytes: enc('{"specVersion":"1.0.0","runHash":"' + "ab".repeat(32) + '"}\n') },
  { path: "events.jsonl", bytes: enc('{"type":"run.started","seq":0}\n'.repeat(20)) },
  { path: "blobs/00", bytes: Uint8Array.from({ length: 700 }, (_, i) => (i * 131 + (i >> 3)) & 0xff) },
  { path: "empty", bytes: new Uint8Array(0) },
];

type Outcome = { ms: number; error: unknown };

function attempt(bytes: Uint8Array, limits?: Partial<ArchiveLimits>): Outcome {
  const t0 = performance.now();
  try {
    readArchive(bytes, limits);
    return { ms: performance.now() - t0, error: undefined };
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
}

/** Sweep: every outcome must be a ReachError of the capsule codes; returns the count per reason and the slowest case. */
function sweep(inputs: Iterable<Uint8Array>): { reasons: Record<string, number>; slowest: number; count: number } {
  const reasons: Record<string, number> = {};
  let slowest = 0;
  let count = 0;
  for (const input of inputs) {
    const { ms, error } = attempt(input);
    count++;
    slowest = Math.max(slowest, ms);
    if (!(error instanceof ReachError)) {
      throw new Error(`case ${count - 1}: expected a ReachError, got ${error === undefined ? "success" : String(error)}`, { cause: error });
    }
    expect(["REPLAY_CAPSULE_INVALID", "REPLAY_CAPSULE_TOO_LARGE"]).toContain(error.code);
    const reason = String(error.details.reason);
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  return { reasons, slowest, count };
}

describe("damaged archives", () => {
  const good = writeArchive(smallEntries());

  it("refuses the archive truncated at every offset (all with a ReachError, none slow)", () => {
    const t0 = performance.now();
    const r = sweep((function* () { for (let n = 0; n < good.length; n++) yield good.subarray(0, n); })());
    expect(r.count).toBe(good.length);
    expect(Object.keys(r.reasons).sort()).toEqual(["empty", "not-gzip", "truncated"].filter((k) => k in r.reasons).sort());
    expect(r.reasons.truncated).toBeGreaterThan(good.length - 10);
    expect(r.slowest).toBeLessThan(10_000); // "never hangs", generous: CI machines are shared
    expect(performance.now() - t0).toBeLessThan(120_000);
  });

  it("refuses the archive with any one byte inverted (every offset but gzip's MTIME/XFL/OS, which carry no content)", () => {
    const inverted = (i: number) => { const b = good.slice(); b[i]! ^= 0xff; return b; };
    const contentFree = new Set([4, 5, 6, 7, 8, 9]);
    const r = sweep((function* () { for (let i = 0; i < good.length; i++) if (!contentFree.has(i)) yield inverted(i); })());
    expect(r.count).toBe(good.length - contentFree.size);
    for (const i of contentFree) {
      const b = inverted(i);
      expect(readArchive(b)).toEqual(readArchive(good));
      expect(archiveIsCanonical(b, readArchive(b))).toBe(false); // verify says the file was re-written
    }
    expect(r.slowest).toBeLessThan(10_000); // "never hangs", generous: CI machines are shared
  });

  it("refuses every single-bit flip that changes the content; the rest decode to the very same entries", () => {
    // Deflate has several encodings of the same bytes (e.g. a match distance to an equal earlier copy, the unused
    // bits of the last byte), so a few flips inside the deflate stream are invisible at this layer: the CRC and
    // every entry are unchanged. Content changes are what matter, and none of them gets through.
    const want = readArchive(good);
    const silent: number[] = [];
    for (let i = 0; i < good.length * 8; i++) {
      const b = good.slice();
      b[i >> 3]! ^= 1 << (i & 7);
      const { error } = attempt(b);
      if (error === undefined) {
        const got = readArchive(b);
        expect([...got.keys()]).toEqual([...want.keys()]);
        for (const [k, v] of got) expect(v).toEqual(want.get(k));
        silent.push(i);
      } else {
        expect(error).toBeInstanceOf(ReachError);
      }
    }
    for (const bit of silent) expect(bit >> 3 >= 4 || bit === 3 * 8).toBe(true); // never in gzip's magic or method; of the flags only FTEXT, a hint
    for (const bit of silent) expect(bit >> 3).toBeLessThan(good.length - 8); // never in the trailer
    expect(silent.length).toBeLessThan(good.length * 8 * 0.02);
  });

  it("refuses the tar stream truncated at every offset inside a valid gzip member", () => {
    const tarBytes = gunzipSync(good);
    const r = sweep((function* () { for (let n = 0; n < tarBytes.length; n++) yield gzStored(tarBytes.subarray(0, n)); })());
    expect(r.count).toBe(tarBytes.length);
    expect(Object.keys(r.reasons).sort()).toEqual(["missing-end", "truncated"]);
  });

  it("refuses the tar stream with any header, padding or end byte inverted inside a valid gzip member", () => {
    // Entry data is opaque to the archive layer (capsule.json's digests cover it); every other tar byte is checked.
    const tarBytes = gunzipSync(good);
    const data = new Set<number>();
    for (let at = 0; !tarBytes.subarray(at, at + 512).every((b) => b === 0);) {
      const size = parseInt(String.fromCharCode(...tarBytes.subarray(at + 124, at + 135)), 8);
      for (let k = 0; k < size; k++) data.add(at + 512 + k);
      at += 512 + Math.ceil(size / 512) * 512;
    }
    const flipped = (i: number) => { const t = tarBytes.slice(); t[i]! ^= 0xff; return gzStored(t); };
    const r = sweep((function* () { for (let i = 0; i < tarBytes.length; i++) if (!data.has(i)) yield flipped(i); })());
    expect(r.count).toBe(tarBytes.length - data.size);
    for (const i of data) expect(readArchive(flipped(i)).size).toBe(4);
  });

  it("refuses strided damage to a larger archive (truncations and flips every 499 bytes)", () => {
    let s = 7;
    const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 16) & 0xff;
    const entries = Array.from({ length: 40 }, (_, i) => ({
      path: `files/${i}`,
      bytes: i % 2 ? Uint8Array.from({ length: 4000 + i * 97 }, rnd) : enc(`line ${i}\n`.repeat(300 + i)),
    }));
    const big = writeArchive(entries);
    expect(big.length).toBeGreaterThan(80_000);
    const t0 = performance.now();
    const r = sweep((function* () {
      for (let i = 0; i < big.length; i += 499) {
        yield big.subarray(0, i);
        const b = big.slice();
        b[i]! ^= 0x5a;
        yield b;
      }
    })());
    expect(r.slowest).toBeLessThan(10_000); // "never hangs", generous: CI machines are shared
    expect(r.count).toBeGreaterThan(400);
    expect(performance.now() - t0).toBeLessThan(120_000);
  });

  it("refuses random garbage, with and without a gzip header", () => {
    let s = 99;
    const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 16) & 0xff;
    const r = sweep((function* () {
      for (let n = 0; n < 400; n++) {
        const b = Uint8Array.from({ length: n * 7 }, rnd);
        yield b;
        if (b.length >= 10) {
          b.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
          yield b;
        }
      }
    })());
    expect(r.count).toBeGreaterThan(700);
  });
});

describe("damaged archives in other tars' formats (pax, GNU long names, directories, record padding)", () => {
  const long = "pack/" + "d".repeat(60) + "/" + "f".repeat(60) + ".js";
  const data = Uint8Array.from({ length: 700 }, (_, i) => (i * 131) & 0xff);
  const tarBytes = concat(dir("./"), dir("./pack/"), gnuLongName("./" + long), file(long.slice(0, 100), enc("one"), { fields: { magic: "ustar ", version: " \u0000", uname: "root" } }),
    pax([["path", "./blobs/ab"], ["size", "700"], ["mtime", "1.5"], ["SCHILY.xattr.user.k", "v"]]), file("PaxHeader-name", data, { fields: { size: "00000000000\u0000" } }),
    file("./empty", new Uint8Array(0), { fields: { mode: "0000644\u0000" } }), END, new Uint8Array(4096));
  const endAt = tarBytes.length - 4096; // where the end-of-archive marker ends
  const want = readArchive(gzStored(tarBytes));

  it("reads the fixture (the sweeps below would otherwise prove nothing)", () => {
    expect([...want.keys()]).toEqual(["blobs/ab", "empty", long]);
    expect(want.get("blobs/ab")).toEqual(data);
  });

  it("refuses it truncated before its end marker (every 5th offset, and around every block boundary); after it, reads the same entries", () => {
    const cut = (n: number) => n % 5 === 0 || n % 512 <= 1 || n % 512 >= 510;
    const r = sweep((function* () { for (let n = 0; n < endAt; n++) if (cut(n)) yield gzStored(tarBytes.subarray(0, n)); })());
    expect(Object.keys(r.reasons).sort()).toEqual(["missing-end", "truncated"]);
    for (let n = endAt; n <= tarBytes.length; n += 512) expect(readArchive(gzStored(tarBytes.subarray(0, n)))).toEqual(want);
  });

  it("with any byte inverted: a ReachError, or entries that are all safe paths (never more of them, never a crash)", () => {
    const reasons: Record<string, number> = {};
    let read = 0;
    const headers = new Set<number>();
    for (let b = 0; b < endAt; b += 512) if (String.fromCharCode(...tarBytes.subarray(b + 257, b + 262)) === "ustar") headers.add(b);
    expect(headers.size).toBe(7);
    // every header byte and extension data byte; not the 700 bytes of entry data (opaque here), one byte per run of zeros
    const dataAt = tarBytes.findIndex((_, i) => i % 512 === 0 && tarBytes[i] === data[0] && tarBytes[i + 1] === data[1]);
    for (let i = 0; i < endAt + 512; i++) {
      if (i >= dataAt && i < dataAt + data.length) continue;
      if (!headers.has(i - (i % 512)) && tarBytes[i] === 0 && tarBytes[i - 1] === 0) continue; // one byte per run of padding
      const t = tarBytes.slice();
      t[i]! ^= 0xff;
      const block = i - (i % 512);
      if (headers.has(block) && (i < block + 148 || i >= block + 156)) fixChecksum(t, block); // else only the checksum is tested
      let got: Map<string, Uint8Array> | undefined;
      let error: unknown;
      try {
        got = readArchive(gzStored(t));
      } catch (err) {
        error = err;
      }
      if (got !== undefined) {
        expect(got.size).toBeLessThanOrEqual(want.size);
        for (const path of got.keys()) expect(pathProblem(path), path).toBeUndefined();
        read++;
      } else {
        expect(error).toBeInstanceOf(ReachError);
        const reason = String((error as ReachError).details.reason);
        reasons[reason] = (reasons[reason] ?? 0) + 1;
      }
    }
    // Ignored fields (owners, modes, times, pax times and xattrs) and entry data read; the rest is refused.
    expect(dataAt).toBeGreaterThan(0);
    expect(read).toBeGreaterThan(1000);
    for (const reason of ["header-checksum", "not-ustar", "bad-number", "unknown-type", "extension-header", "path", "padding"]) expect(reasons[reason], reason).toBeGreaterThan(0);
  });
});

/** Rewrite the checksum of the header at `at` (as GNU tar spells it), so that a changed field is what gets tested. */
function fixChecksum(t: Uint8Array, at: number): void {
  let sum = 8 * 0x20;
  for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += t[at + i]!;
  t.set(enc(sum.toString(8).padStart(6, "0") + "\u0000 "), at + 148);
}

describe("gzip bombs", () => {
  const mib = 2 ** 20;

  function bounded(bytes: Uint8Array, limits: Partial<ArchiveLimits> | undefined, ...reasons: string[]): void {
    const before = process.memoryUsage();
    const { ms, error } = attempt(bytes, limits);
    const after = process.memoryUsage();
    expect(error).toBeInstanceOf(ReachError);
    expect(reasons).toContain((error as ReachError).details.reason);
    expect(ms).toBeLessThan(30_000); // refused long before the 2 GiB; the bound only catches a hang
    // Inflating stops early: far less than the bomb's 2 GiB is ever resident.
    expect(after.rss - before.rss).toBeLessThan(300 * mib);
  }

  it("2 GiB of zeros (about 2 MB of gzip) is refused at once with the default limits", () => {
    const bomb = zeroBomb(2048);
    expect(bomb.length).toBeLessThan(3 * mib);
    bounded(bomb, undefined, "trailing-data");
  });

  it("2 GiB of zeros is refused by the inflated-size cap as soon as it is passed, before the tar parser sees it", () => {
    bounded(zeroBomb(2048), { maxTotalBytes: mib }, "total-too-large");
  });

  it("a tar header claiming 2 GiB - 1 bytes, followed by 2 GiB of zeros, is refused at its header", () => {
    bounded(zeroBomb(2048, header({ path: "bomb", size: 2 ** 31 - 1 })), undefined, "entry-too-large");
  });

  it("a plausible 48 MiB entry then a 2 GiB tail is refused once the tar stream passes maxTotalBytes", () => {
    const limits = { maxTotalBytes: 64 * mib, maxEntryBytes: 60 * mib };
    // Which comes first depends on where fflate's output chunks end: the cap, or the tar parser seeing the tail.
    bounded(zeroBomb(2048, header({ path: "a", size: 48 * mib })), limits, "trailing-data", "total-too-large");
    bounded(zeroBomb(2048, header({ path: "a", size: 60 * mib })), limits, "trailing-data", "total-too-large");
  });

  it("a bomb that fits its limits is read (the sweep would otherwise prove nothing)", () => {
    const bomb = zeroBomb(16, header({ path: "a", size: 16 * mib - 1024 }));
    const got = readArchive(bomb, { maxInflationRatio: 1100 });
    expect(got.get("a")!.length).toBe(16 * mib - 1024);
    // with the default ratio (100), the same 16 KB capsule may inflate to 8 MiB only: refused at its header
    const { error } = attempt(bomb);
    expect((error as ReachError).details).toMatchObject({ reason: "inflation-ratio", entry: 1, compressed: bomb.length, ratio: 100 });
    expect((error as ReachError).details["inflated"]).toBeLessThanOrEqual(4 * mib);
  });
});

describe("inflation bounded by the capsule's size", () => {
  const mib = 2 ** 20;
  const inflated = (bytes: Uint8Array, limits?: Partial<ArchiveLimits>): { reason: unknown; inflated: number } => {
    const { error } = attempt(bytes, limits);
    expect(error).toBeInstanceOf(ReachError);
    const details = (error as ReachError).details;
    expect(typeof details["inflated"]).toBe("number");
    return { reason: details.reason, inflated: details["inflated"] as number };
  };

  it("a ~1 MB capsule whose headers declare ~1 GiB is refused at its first header, after a few MiB, not 1 GiB", () => {
    const bomb = tarBomb([["a", 511], ["b", 511]]);
    expect(bomb.length).toBeLessThan(1.2 * mib);
    const r = inflated(bomb);
    expect(r.reason).toBe("inflation-ratio");
    expect(r.inflated).toBeLessThanOrEqual(4 * mib); // the first push (4 KiB of input) at most: bytes, not wall clock
  });

  it("entries that each fit but together pass ratio × compressed size are refused at the header that passes it", () => {
    const bomb = tarBomb(Array.from({ length: 400 }, (_, i) => [`f/${String(i).padStart(3, "0")}`, 1] as const));
    const budget = Math.max(8 * mib, 10 * bomb.length);
    const r = inflated(bomb, { maxInflationRatio: 10 });
    expect(r.reason).toBe("inflation-ratio");
    expect(r.inflated).toBeGreaterThan(budget - 2 * mib); // it read up to the budget…
    expect(r.inflated).toBeLessThan(2 * budget); // …and at most one push past it, not the 400 MiB declared
  });

  it("the ratio never lowers maxTotalBytes' own refusal, and a capsule under 8 MiB is read whatever its ratio", () => {
    expect(inflated(tarBomb([["a", 30]]), { maxTotalBytes: 16 * mib, maxInflationRatio: 1100 }).reason).toBe("total-too-large");
    expect(readArchive(tarBomb([["a", 7]])).get("a")!.length).toBe(7 * mib); // ~7 KB inflating to 7 MiB: exempt
  });

  it("the writer refuses what the reader would refuse for its ratio, and archiveIsCanonical says false, never throws", () => {
    const zeros = [{ path: "z", bytes: new Uint8Array(9 * mib) }];
    expect(() => writeArchive(zeros)).toThrow(/limits\.maxInflationRatio/);
    const written = writeArchive(zeros, { maxInflationRatio: 1100 });
    expect(readArchive(written, { maxInflationRatio: 1100 }).get("z")!.length).toBe(9 * mib);
    expect(attempt(written).error).toMatchObject({ details: { reason: "inflation-ratio" } });
    expect(archiveIsCanonical(written, new Map([["z", zeros[0]!.bytes]]))).toBe(false);
  });
});
