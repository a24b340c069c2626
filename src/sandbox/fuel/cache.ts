/**
 * Instrument once per module digest and keep the compiled, metered `WebAssembly.Module` in a bounded LRU.
 * @module
 */
import { sha256Hex } from "../../canonical/mod.ts";
import { FUEL_EXPORT, instrumentFuel, REFILL_FIELD, REFILL_MODULE } from "./instrument.ts";
import type { InstrumentFuelOptions } from "./instrument.ts";

/** How many compiled metered modules the cache keeps (least recently used first out). */
export const METERED_CACHE_SIZE = 32;

/** A compiled metered module, the digest of the bytes it was made from, and the digest of what runs. */
export type MeteredModule = {
  /** The compiled instrumented module; instantiate it afresh for every invocation. */
  module: WebAssembly.Module;
  /** Lowercase hex SHA-256 of the original (uninstrumented) bytes. */
  digest: string;
  /** Lowercase hex SHA-256 of the instrumented bytes (recorded in a run's events: what actually ran). */
  meteredDigest: string;
};

const cache = new Map<string, Promise<MeteredModule>>();

/**
 * Where instrumented bytes may be kept between processes (the platform hands one in as `EngineEnvironment.meteredModules`;
 * see `src/platform/fuel-store.ts`). Instrumenting loads binaryen (~1 s) and takes 0.1–30 s per module, so a warm
 * process start depends on it. A store is a cache: any failure is ignored and the module is instrumented again.
 */
export type MeteredModuleStore = {
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, bytes: Uint8Array): Promise<void>;
};

/** Bumped whenever `instrumentFuel`'s output changes, so stored modules from older versions are never used. */
export const INSTRUMENTATION_VERSION = "fuel-v2";

/** What an instrumented module must look like: the original's imports plus the refill, its exports plus the counter. */
function isInstrumentationOf(module: WebAssembly.Module, original: WebAssembly.Module): boolean {
  const imports = (m: WebAssembly.Module) => WebAssembly.Module.imports(m).map((i) => `${i.module}\0${i.name}\0${i.kind}`).sort().join("\n");
  const exports = (m: WebAssembly.Module) => WebAssembly.Module.exports(m).map((e) => `${e.name}\0${e.kind}`).sort().join("\n");
  const wantImports = [...WebAssembly.Module.imports(original).map((i) => `${i.module}\0${i.name}\0${i.kind}`), `${REFILL_MODULE}\0${REFILL_FIELD}\0function`].sort().join("\n");
  const wantExports = [...WebAssembly.Module.exports(original).map((e) => `${e.name}\0${e.kind}`), `${FUEL_EXPORT}\0global`].sort().join("\n");
  return imports(module) === wantImports && exports(module) === wantExports;
}

async function instrumentedBytes(copy: Uint8Array, key: string, options: InstrumentFuelOptions, s: MeteredModuleStore | null): Promise<{ module: WebAssembly.Module; meteredDigest: string }> {
  if (s !== null) {
    // The store authenticates its entries (src/platform/fuel-store.ts); the shape is checked here as well.
    const hit = await s.get(key).catch(() => null);
    if (hit !== null) {
      try {
        const module = await WebAssembly.compile(hit as Uint8Array<ArrayBuffer>);
        if (isInstrumentationOf(module, await WebAssembly.compile(copy as Uint8Array<ArrayBuffer>))) return { module, meteredDigest: sha256Hex(hit) };
      } catch {
        // a damaged entry: instrument again and overwrite it
      }
    }
  }
  const bytes = await instrumentFuel(copy, options);
  const module = await WebAssembly.compile(bytes);
  if (s !== null) await s.set(key, bytes).catch(() => {});
  return { module, meteredDigest: sha256Hex(bytes) };
}

/**
 * The compiled, fuel-instrumented module for `wasm`, instrumented and compiled at most once per digest and
 * options while it stays among the {@link METERED_CACHE_SIZE} most recently used. Concurrent calls for the same
 * bytes share one instrumentation. Failures are not cached.
 * @param wasm the bytes of a core WebAssembly module
 * @param options passed to `instrumentFuel` (part of the cache key)
 * @param store where instrumented bytes are kept between processes (null: memory only); only a cache
 * @returns the compiled module (the same object for the same bytes while cached) and the bytes' digest
 * @throws ReachError `PACK_MALFORMED` as `instrumentFuel` does
 * @example
 * const { module } = await getMeteredModule(bytes);
 * const instance = await WebAssembly.instantiate(module, imports);
 */
export async function getMeteredModule(wasm: Uint8Array, options: InstrumentFuelOptions = {}, store: MeteredModuleStore | null = null): Promise<MeteredModule> {
  if (!(wasm instanceof Uint8Array)) throw new TypeError(`"wasm" expected Uint8Array, got ${typeof wasm}`);
  const digest = sha256Hex(wasm);
  const key = `${digest}:${options.initialFuel ?? 0n}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const copy = wasm.slice(); // the caller may reuse its buffer while we wait for binaryen
  const entry = (async (): Promise<MeteredModule> => {
    return { ...(await instrumentedBytes(copy, `${INSTRUMENTATION_VERSION}-${key.replace(":", "-")}`, options, store)), digest };
  })();
  cache.set(key, entry);
  while (cache.size > METERED_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  entry.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
  return entry;
}

/**
 * Forget every cached module (tests; memory pressure).
 * @returns nothing
 * @throws never
 * @example clearMeteredModuleCache()
 */
export function clearMeteredModuleCache(): void {
  cache.clear();
}

/**
 * How many modules the cache holds now.
 * @returns the number of entries, 0..METERED_CACHE_SIZE
 * @throws never
 * @example meteredModuleCacheSize() // 0
 */
export function meteredModuleCacheSize(): number {
  return cache.size;
}
