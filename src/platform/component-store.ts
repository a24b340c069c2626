/**
 * A disk store for component glue (`src/sandbox/component/load.ts` `ComponentGlueStore`), so that a new process
 * does not run jco on the same component again (6–12 s for a 12 MB componentize-js tool). Content-addressed: one
 * entry per component digest and jco release (`glue-<jco>-<sha256>.json`). Location: `$REACH_WASM_CACHE/components`,
 * else `$XDG_CACHE_HOME/reach-wasm/components`, else `~/.cache/reach-wasm/components`; `REACH_WASM_CACHE=off`
 * disables it.
 *
 * The same integrity rules as the fuel cache (`_authenticated-store.ts`): directory and parent owned by this user and
 * writable by nobody else, every entry authenticated with an HMAC under the per-user key `components.key` beside the
 * directory. The sandbox then shape-checks the document and checks its glue exactly as fresh jco output before it is
 * evaluated; anything that fails is transpiled again and overwritten, never executed.
 * @module
 */
import { authenticatedStore, cacheDir } from "./_authenticated-store.ts";
import type { AuthenticatedStore } from "./_authenticated-store.ts";

/**
 * The component cache directory, or null when disabled.
 * @returns the directory
 * @throws Error when there is no home directory to fall back on
 * @example componentCacheDir() // "/home/me/.cache/reach-wasm/components"
 */
export function componentCacheDir(): string | null {
  return cacheDir("components");
}

/**
 * A glue store in `dir`. Fails closed: every check that cannot be made counts as failed.
 * @param dir the directory (created 0700 on first use)
 * @param warn called once when the directory cannot be trusted
 * @returns the store
 * @example const store = diskComponentStore("/home/me/.cache/reach-wasm/components");
 */
export function diskComponentStore(dir: string, warn: (message: string) => void = () => {}): AuthenticatedStore {
  return authenticatedStore(dir, { magic: "reachgl1", extension: ".json", keyFile: "components.key", label: "the component cache" }, warn);
}

