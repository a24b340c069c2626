/**
 * A disk store for fuel-instrumented modules (`src/sandbox/fuel` `MeteredModuleStore`), so that a new process does
 * not load binaryen and instrument the same module again. Location: `$REACH_WASM_CACHE/fuel`, else
 * `$XDG_CACHE_HOME/reach-wasm/fuel`, else `~/.cache/reach-wasm/fuel`; `REACH_WASM_CACHE=off` disables it.
 *
 * What is read back decides what tools run, so nothing in the directory is trusted until checked
 * (`_authenticated-store.ts`): the directory and its parent owned by this user and writable by nobody else, each
 * entry `MAGIC ‖ HMAC-SHA256(key, cacheKey ‖ bytes) ‖ bytes` under the 32-byte key `fuel.key` beside the directory;
 * an entry that fails any check is ignored, rebuilt and overwritten — never executed. The sandbox also checks that
 * an entry is an instrumentation of the module it is stored for (`src/sandbox/fuel/cache.ts`).
 * A run's capsule also records each module's instrumented hash, so a replay on a machine with an empty cache, which
 * instruments again, compares what ran (ARCHITECTURE "Hashing").
 * @module
 */
import { authenticatedStore, cacheDir } from "./_authenticated-store.ts";
import type { AuthenticatedStore } from "./_authenticated-store.ts";

/**
 * The cache directory, or null when disabled.
 * @returns the directory
 * @throws Error when there is no home directory to fall back on
 * @example fuelCacheDir() // "/home/me/.cache/reach-wasm/fuel"
 */
export function fuelCacheDir(): string | null {
  return cacheDir("fuel");
}

/**
 * A store in `dir` (see the module notes). Fails closed: every check that cannot be made counts as failed.
 * @param dir the directory (created 0700 on first use)
 * @param warn called once when the directory cannot be trusted
 * @returns the store
 * @example const store = diskFuelStore("/home/me/.cache/reach-wasm/fuel");
 */
export function diskFuelStore(dir: string, warn: (message: string) => void = () => {}): AuthenticatedStore {
  return authenticatedStore(dir, { magic: "reachfv2", extension: ".wasm", keyFile: "fuel.key", label: "the fuel cache" }, warn);
}

