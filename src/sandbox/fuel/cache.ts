/**
 * Instrument once per module digest and keep the compiled, metered `WebAssembly.Module` in a bounded LRU.
 * @module
 */
import { sha256Hex } from "../../canonical/sha256.ts";
import { DEFAULT_FUEL } from "../types.ts";
import { instrumentFuel } from "./instrument.ts";
import type { InstrumentFuelOptions } from "./instrument.ts";

/** How many compiled metered modules the cache keeps (least recently used first out). */
export const METERED_CACHE_SIZE = 32;

/** A compiled metered module and the digest of the bytes it was made from. */
export type MeteredModule = {
  /** The compiled instrumented module; instantiate it afresh for every invocation. */
  module: WebAssembly.Module;
  /** Lowercase hex SHA-256 of the original (uninstrumented) bytes. */
  digest: string;
};

const cache = new Map<string, Promise<MeteredModule>>();

/**
 * The compiled, fuel-instrumented module for `wasm`, instrumented and compiled at most once per digest and
 * options while it stays among the {@link METERED_CACHE_SIZE} most recently used. Concurrent calls for the same
 * bytes share one instrumentation. Failures are not cached.
 * @param wasm the bytes of a core WebAssembly module
 * @param options passed to `instrumentFuel` (part of the cache key)
 * @returns the compiled module (the same object for the same bytes while cached) and the bytes' digest
 * @throws ReachError `PACK_MALFORMED` as `instrumentFuel` does
 * @example
 * const { module } = await getMeteredModule(bytes);
 * const instance = await WebAssembly.instantiate(module, imports);
 */
export async function getMeteredModule(wasm: Uint8Array, options: InstrumentFuelOptions = {}): Promise<MeteredModule> {
  if (!(wasm instanceof Uint8Array)) throw new TypeError(`"wasm" expected Uint8Array, got ${typeof wasm}`);
  const digest = sha256Hex(wasm);
  const key = `${digest}:${options.initialFuel ?? DEFAULT_FUEL}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const copy = wasm.slice(); // the caller may reuse its buffer while we wait for binaryen
  const entry = (async (): Promise<MeteredModule> => {
    const bytes = await instrumentFuel(copy, options);
    return { module: await WebAssembly.compile(bytes), digest };
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
