/**
 * This process's disk caches, opened once: validated documents (`document-store.ts`), fuel-instrumented modules
 * (`fuel-store.ts`) and component glue (`component-store.ts`). Each is a speed-up only (a run gives the same record
 * without it) and trusted only after its checks (`_authenticated-store.ts`); a folder that cannot be trusted is not
 * used, and said so once on stderr. `REACH_WASM_CACHE=off` disables them all.
 * @module
 */
import process from "node:process";
import type { AuthenticatedStore } from "./_authenticated-store.ts";
import { componentCacheDir, diskComponentStore } from "./component-store.ts";
import { diskDocumentStore, documentCacheDir } from "./document-store.ts";
import { diskFuelStore, fuelCacheDir } from "./fuel-store.ts";

/** The three caches (null: disabled, or no home directory to put them in). */
export type DiskCaches = {
  readonly documents: AuthenticatedStore | null;
  readonly fuel: AuthenticatedStore | null;
  readonly components: AuthenticatedStore | null;
};

let opened: DiskCaches | undefined;

function open(dir: () => string | null, store: (dir: string, warn: (m: string) => void) => AuthenticatedStore): AuthenticatedStore | null {
  let at: string | null;
  try {
    at = dir();
  } catch {
    at = null; // no home directory, no permission to read the environment: memory only
  }
  return at === null ? null : store(at, (m) => process.stderr.write(m));
}

/**
 * The process's disk caches (the same objects at every call).
 * @returns the caches
 * @example const { fuel } = diskCaches(); // null with REACH_WASM_CACHE=off
 */
export function diskCaches(): DiskCaches {
  return (opened ??= {
    documents: open(documentCacheDir, diskDocumentStore),
    fuel: open(fuelCacheDir, diskFuelStore),
    components: open(componentCacheDir, diskComponentStore),
  });
}
