/**
 * The capsule's gzip writer (internal): fflate's `gzipSync`, byte for byte, compiled to WebAssembly
 * (wasm-tools/deflate/deflate.c, embedded by `_deflate-wasm.ts`).
 *
 * Why not fflate itself: its JavaScript runs once per CLI process, first interpreted and then optimized on a second
 * thread: ~21–27 ms of CPU to write `packs/hello`'s 38 KB capsule, against 13–19 ms here, cold; warm, 1.2 ms against
 * 0.5 ms per 40 KB. And a run that writes a capsule without reading one no longer loads fflate at all (README
 * "Benchmarks": ~10 ms of start-up together). The capsule format pins fflate's bytes (ARCHITECTURE "Capsule"), so the C is
 * fflate's algorithm written out again, and `deflate.test.ts` checks it against fflate on every level and on many
 * inputs. fflate still inflates (`_gunzip.ts`).
 *
 * One instance is kept and reused (its allocator starts over for each archive, and hands out zeroed buffers); after an
 * archive that grew its memory past {@link KEEP_BYTES} it is dropped, so one large capsule does not hold that memory
 * for the life of a process. Compiling the ~13 KB module happens once.
 * @module
 */
import { DEFLATE_WASM_BASE64 } from "./_deflate-wasm.ts";

type DeflateExports = {
  memory: WebAssembly.Memory;
  reset(): void;
  alloc(n: number): number;
  gzip(ptr: number, len: number, level: number, mem: number): number;
  result(): number;
};

/** Memory kept between archives: past this, the instance is dropped after use. */
const KEEP_BYTES = 64 * 1024 * 1024;

let compiled: WebAssembly.Module | undefined;
let kept: DeflateExports | undefined;

function deflateModule(): WebAssembly.Module {
  if (compiled === undefined) {
    const text = atob(DEFLATE_WASM_BASE64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    compiled = new WebAssembly.Module(bytes);
  }
  return compiled;
}

/**
 * gzip `data` as fflate's `gzipSync(data, { level, mem, mtime: 0 })` does (no file name; one member).
 * @param data the bytes to compress
 * @param level deflate level, 1–9
 * @param mem hash size, 0–12 (fflate's `mem`)
 * @returns the gzip bytes
 * @throws RangeError for a level or mem out of range, or when the compressor's memory cannot grow (over ~2 GiB)
 * @example gzipLikeFflate(new TextEncoder().encode("hi"), 6, 7) // 1f 8b 08 00 00 00 00 00 00 03 …
 */
export function gzipLikeFflate(data: Uint8Array, level: number, mem: number): Uint8Array {
  if (!Number.isInteger(level) || level < 1 || level > 9) throw new RangeError(`"level" expected an integer 1-9, got ${level}`);
  if (!Number.isInteger(mem) || mem < 0 || mem > 12) throw new RangeError(`"mem" expected an integer 0-12, got ${mem}`);
  const x = kept ?? (new WebAssembly.Instance(deflateModule(), {}).exports as unknown as DeflateExports);
  kept = undefined; // not reused if this call throws half-way
  x.reset();
  const at = x.alloc(data.length);
  const n = at === 0 ? 0 : (new Uint8Array(x.memory.buffer, at, data.length).set(data), x.gzip(at, data.length, level, mem));
  if (n === 0) throw new RangeError(`gzip: ${data.length} bytes are more than the compressor's memory can hold`);
  const out = new Uint8Array(x.memory.buffer, x.result(), n).slice();
  if (x.memory.buffer.byteLength <= KEEP_BYTES) kept = x;
  return out;
}
