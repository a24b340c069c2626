/**
 * Capsule archive throughput (README "Benchmarks": capsule write and read in MB/s). 64 MiB of mixed entries — JSON-like
 * event lines, incompressible blobs, and repetitive binary records, in sizes from 1 KiB to 4 MiB — are written with
 * `writeArchive` and read back with `readArchive`. Baseline measured in the same run: fflate `gzipSync` (same
 * options) and `gunzipSync` of the concatenated entry bytes, i.e. the compression floor without tar, path checks,
 * CRC checking, bounds or copies. MB/s count entry bytes (1 MB = 10^6 bytes); each figure is the best of 3 rounds,
 * run interleaved with the baseline.
 * @module
 */
import { gunzipSync, gzipSync } from "fflate";
import { GZIP_OPTIONS, readArchive, writeArchive } from "../../src/capsule/mod.ts";
import type { ArchiveEntry } from "../../src/capsule/mod.ts";
import { n } from "./smoke.ts";

const MiB = 1024 * 1024;
const SIZES = [1024, 16 * 1024, 256 * 1024, MiB, 4 * MiB];

/** Deterministic mixed entries totalling `total` bytes (xorshift32 PRNG, fixed seed). */
export function mixedEntries(total: number): ArchiveEntry[] {
  let s = 0x9e3779b9;
  const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
  const entries: ArchiveEntry[] = [];
  const encoder = new TextEncoder();
  for (let used = 0, i = 0; used < total; i++) {
    const size = Math.min(SIZES[i % SIZES.length]!, total - used);
    const kind = i % 3;
    let bytes: Uint8Array;
    if (kind === 0) {
      let text = "";
      for (let k = 0; text.length < size; k++) {
        text += `{"seq":${k},"type":"tool.completed","outputHash":"${next().toString(16).padStart(8, "0")}","ms":${next() % 1000}}\n`;
      }
      bytes = encoder.encode(text.slice(0, size));
    } else if (kind === 1) {
      bytes = new Uint8Array(size);
      for (let k = 0; k < size; k += 4) {
        const r = next();
        bytes[k] = r;
        bytes[k + 1] = r >>> 8;
        bytes[k + 2] = r >>> 16;
        bytes[k + 3] = r >>> 24;
      }
    } else {
      bytes = new Uint8Array(size);
      for (let k = 0; k < size; k++) bytes[k] = (k % 64 < 48 ? k % 13 : next() & 0xff);
    }
    entries.push({ path: `${["events", "blobs", "records"][kind]}/${String(i).padStart(5, "0")}.bin`, bytes });
    used += size;
  }
  return entries;
}

/** Milliseconds taken by `fn`. */
function timed(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

/**
 * Measure capsule write/read throughput against the raw fflate baseline.
 * @param log line printer
 * @param total bytes of entry data (default 64 MiB)
 * @returns MB/s of ours and of the baseline, and the ratios ours/baseline
 * @throws Error when the archive does not read back to the same entries
 * @example benchCapsule(console.log, 8 * 1024 * 1024)
 */
export function benchCapsule(log: (line: string) => void, total = n(64, 1) * MiB): {
  writeMBps: number; readMBps: number; gzipMBps: number; gunzipMBps: number; writeRatio: number; readRatio: number;
} {
  const entries = mixedEntries(total);
  const payload = new Uint8Array(total);
  let o = 0;
  for (const e of entries) {
    payload.set(e.bytes, o);
    o += e.bytes.length;
  }
  // Interleaved rounds (ours, baseline, ours, baseline, …) so that machine noise hits both sides alike; best of each.
  let archive: Uint8Array = new Uint8Array(0);
  let gz: Uint8Array = new Uint8Array(0);
  let read = new Map<string, Uint8Array>();
  const best = { write: Infinity, gzip: Infinity, read: Infinity, gunzip: Infinity };
  for (let round = 0; round < n(3); round++) {
    best.write = Math.min(best.write, timed(() => void (archive = writeArchive(entries))));
    best.gzip = Math.min(best.gzip, timed(() => void (gz = gzipSync(payload, GZIP_OPTIONS))));
    best.read = Math.min(best.read, timed(() => void (read = readArchive(archive))));
    best.gunzip = Math.min(best.gunzip, timed(() => void gunzipSync(gz)));
  }
  if (read.size !== entries.length || entries.some((e) => read.get(e.path)?.length !== e.bytes.length)) {
    throw new Error("benchCapsule: the archive did not read back to the same entries");
  }
  const mbps = (ms: number) => total / 1e6 / (ms / 1000);
  const [writeMBps, gzipMBps, readMBps, gunzipMBps] = [mbps(best.write), mbps(best.gzip), mbps(best.read), mbps(best.gunzip)];
  const writeRatio = writeMBps / gzipMBps;
  const readRatio = readMBps / gunzipMBps;
  const mb = (n: number) => (n / 1e6).toFixed(1);
  log(`capsule: ${entries.length} entries, ${mb(total)} MB of entry data → ${mb(archive.length)} MB .tar.gz ` +
    `(raw gzip ${mb(gz.length)} MB)`);
  log(`capsule write: ${writeMBps.toFixed(1)} MB/s; baseline fflate gzipSync ${gzipMBps.toFixed(1)} MB/s; ratio ${writeRatio.toFixed(2)}`);
  log(`capsule read: ${readMBps.toFixed(1)} MB/s; baseline fflate gunzipSync ${gunzipMBps.toFixed(1)} MB/s; ratio ${readRatio.toFixed(2)}`);
  return { writeMBps, readMBps, gzipMBps, gunzipMBps, writeRatio, readRatio };
}
