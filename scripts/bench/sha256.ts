/**
 * SHA-256 throughput: reach-wasm's `sha256` with the native backend installed ("ours"), `node:crypto`
 * directly ("native"), and the portable @noble/hashes backend ("noble"). Runs under Node (vite-node) and Deno.
 * @module
 */
import { createHash } from "node:crypto";
import { getSha256Backend, nobleBackend, setSha256Backend, sha256 } from "../../src/canonical/sha256.ts";
import { nativeSha256Backend } from "../../src/platform/native-sha256.ts";
import { n } from "./smoke.ts";

/** Size of the hashed buffer. */
const SIZE = n(64, 1) * 1024 * 1024;

/** Fixed content: byte i = (i * 31 + (i >>> 11)) & 0xff. */
function fixedBuffer(size: number): Uint8Array {
  const buf = new Uint8Array(size);
  for (let i = 0; i < size; i++) buf[i] = (i * 31 + (i >>> 11)) & 0xff;
  return buf;
}

/**
 * Best (highest) MB/s of `runs` timed runs of each function over `bytes` bytes; 1 MB = 10^6 bytes. The functions
 * take turns (a, b, a, b, …), so that on a shared, noisy machine both see the same load.
 */
function bestMBps(bytes: number, runs: number, ...fns: Array<() => unknown>): number[] {
  const best = fns.map(() => Infinity);
  for (let r = 0; r < runs; r++) {
    fns.forEach((fn, k) => {
      const t0 = performance.now();
      fn();
      best[k] = Math.min(best[k]!, performance.now() - t0);
    });
  }
  return best.map((ms) => bytes / 1e6 / (ms / 1000));
}

/**
 * Measure SHA-256 throughput on a 64 MiB buffer with each implementation (best of several runs).
 * Leaves the previously installed backend in place afterwards.
 * @param log receives one human-readable line per measurement
 * @returns MB/s for ours / native / noble, and ratio = ours / native
 * @throws Error when the implementations disagree on the digest
 * @example const r = await benchSha256(console.log); r.ratio > 0.9
 */
export async function benchSha256(
  log: (line: string) => void,
): Promise<{ ours: number; native: number; noble: number; ratio: number }> {
  const data = fixedBuffer(SIZE);
  const previous = getSha256Backend();
  const hex = (d: Uint8Array): string => Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
  try {
    setSha256Backend(nativeSha256Backend);
    const want = createHash("sha256").update(data).digest("hex");
    if (hex(sha256(data)) !== want || hex(nobleBackend.digest(data)) !== want) {
      throw new Error("benchSha256: implementations disagree on the digest of the benchmark buffer");
    }
    const [ours, native] = bestMBps(SIZE, n(7), () => sha256(data), () => createHash("sha256").update(data).digest()) as [number, number];
    log(`sha256 ours (${getSha256Backend().name}): ${ours.toFixed(0)} MB/s`);
    log(`sha256 native (node:crypto createHash): ${native.toFixed(0)} MB/s`);
    await Promise.resolve(); // let the event loop breathe between the fast and the slow part
    const [noble] = bestMBps(SIZE, n(2), () => nobleBackend.digest(data)) as [number];
    log(`sha256 noble (${nobleBackend.name}): ${noble.toFixed(0)} MB/s`);
    const ratio = ours / native;
    log(`sha256 ratio ours/native: ${ratio.toFixed(3)}`);
    return { ours, native, noble, ratio };
  } finally {
    setSha256Backend(previous);
  }
}
