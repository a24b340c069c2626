/**
 * A disk store for validated documents (`src/engine/document-cache.ts`): what the pack and plan schemas made of a
 * document, so that a new process running the same pack builds no schema. Location: `$REACH_WASM_CACHE/documents`,
 * else `$XDG_CACHE_HOME/reach-wasm/documents`, else `~/.cache/reach-wasm/documents`; `REACH_WASM_CACHE=off` disables it.
 *
 * What is read back stands for a validation, so nothing in the directory is trusted until checked
 * (`_authenticated-store.ts`, as the fuel cache): the directory and its parent owned by this user and writable by
 * nobody else, each entry `MAGIC ‖ HMAC-SHA256(key, cacheKey ‖ bytes) ‖ bytes` under the 32-byte key `documents.key`
 * beside the directory; an entry that fails any check is a miss, validated again and overwritten.
 * @module
 */
import process from "node:process";
import type { DocumentStore } from "../engine/document-cache.ts";
import { setDocumentStore } from "../engine/document-cache.ts";
import { authenticatedStore, cacheDir } from "./_authenticated-store.ts";

/**
 * A store in `dir` (see the module notes). Fails closed: every check that cannot be made counts as failed.
 * @param dir the directory (created 0700 on first use)
 * @param warn called once when the directory cannot be trusted
 * @returns the store
 * @example setDocumentStore(diskDocumentStore("/home/me/.cache/reach-wasm/documents"));
 */
export function diskDocumentStore(dir: string, warn: (message: string) => void = () => {}): DocumentStore {
  return authenticatedStore(dir, { magic: "reachdv1", extension: ".json", keyFile: "documents.key", label: "the validated-document cache" }, warn);
}

/**
 * Install the disk store for this process (memory only when there is no cache directory).
 * @example installDocumentStore();
 */
export function installDocumentStore(): void {
  let dir: string | null;
  try {
    dir = cacheDir("documents");
  } catch {
    dir = null; // no home directory, no permission to read the environment: validate every time
  }
  if (dir !== null) setDocumentStore(diskDocumentStore(dir, (m) => process.stderr.write(m)));
}
