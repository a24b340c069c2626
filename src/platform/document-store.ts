/**
 * A disk store for validated documents (`DocumentStore` of `src/engine/document-cache.ts`, handed to the engine as
 * `EngineEnvironment.documents` by `src/host/environment.ts`): what the pack and plan schemas made of a
 * document, so that a new process running the same pack builds no schema. Location: `$REACH_WASM_CACHE/documents`,
 * else `$XDG_CACHE_HOME/reach-wasm/documents`, else `~/.cache/reach-wasm/documents`; `REACH_WASM_CACHE=off` disables it.
 *
 * What is read back stands for a validation, so nothing in the directory is trusted until checked
 * (`_authenticated-store.ts`, as the fuel cache): the directory and its parent owned by this user and writable by
 * nobody else, each entry `MAGIC ‖ HMAC-SHA256(key, cacheKey ‖ bytes) ‖ bytes` under the 32-byte key `documents.key`
 * beside the directory; an entry that fails any check is a miss, validated again and overwritten.
 * @module
 */
import { authenticatedStore, cacheDir } from "./_authenticated-store.ts";
import type { AuthenticatedStore } from "./_authenticated-store.ts";

/**
 * The cache directory, or null when disabled.
 * @returns the directory
 * @throws Error when there is no home directory to fall back on
 * @example documentCacheDir() // "/home/me/.cache/reach-wasm/documents"
 */
export function documentCacheDir(): string | null {
  return cacheDir("documents");
}

/**
 * A store in `dir` (see the module notes). Fails closed: every check that cannot be made counts as failed.
 * @param dir the directory (created 0700 on first use)
 * @param warn called once when the directory cannot be trusted
 * @returns the store
 * @example const store = diskDocumentStore("/home/me/.cache/reach-wasm/documents");
 */
export function diskDocumentStore(dir: string, warn: (message: string) => void = () => {}): AuthenticatedStore {
  return authenticatedStore(dir, { magic: "reachdv1", extension: ".json", keyFile: "documents.key", label: "the validated-document cache" }, warn);
}

