/**
 * The trust store file: `--trust FILE`, else `$REACH_WASM_TRUST_STORE`, else `~/.config/reach-wasm/trust.json`
 * (`config.ts`). A missing default file means "no key is trusted"; a missing explicit file, a path that is not a
 * readable regular file, or a malformed store is a `ReachError` that names the path.
 * @module
 */
import { lstat } from "./_fs.ts";
import { defaultTrustStorePath, readTextIfExists } from "./config.ts";
import process from "node:process";
import { ReachError } from "../protocol/mod.ts";
import { groupId, POSIX_MODES, userId } from "./_safe-fs.ts";
import type { TrustStore } from "../trust/mod.ts";

/**
 * Load the trust store.
 * @param explicit the `--trust` path, if given
 * @returns the store, or null when there is none
 * @example
 * ```ts
 * const store = await loadTrustStore(); // the default trust store, or null when there is none
 * console.log(store?.keys.length ?? 0);
 * ```
 */
export async function loadTrustStore(explicit?: string): Promise<TrustStore | null> {
  const text = await readTrustStoreText(explicit);
  if (text === null) return null;
  const path = explicit ?? defaultTrustStorePath();
  // imported here, not above: `reach-wasm run` reads the text on its main thread and leaves parsing (and the schema
  // library) to the engine thread
  const { parseTrustStore } = await import("../trust/trust-store.ts");
  try {
    return parseTrustStore(text);
  } catch (err) {
    if (err instanceof ReachError) throw new ReachError(err.code, `trust store ${path}: ${err.message}`, { details: err.details });
    throw err;
  }
}

/**
 * Why a trust store may not be trusted (checked on open, like the caches' files): owned by another user (root
 * excepted: a system-wide store), writable by others, or writable by a group other than this user's own.
 */
function openToOthers(st: { uid: number; gid: number; mode: number }): string | null {
  if (!POSIX_MODES) return null;
  const me = userId();
  if (me !== null && st.uid !== me && st.uid !== 0) return `is owned by uid ${st.uid}, not by this user (${me}) or root`;
  const group = groupId();
  if ((st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && (group === null || st.gid !== group))) {
    return `is writable by other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")})`;
  }
  return null;
}

/**
 * The trust store's text, or null when the default file does not exist.
 * @param explicit the `--trust` path, if given
 * @param options `creating`: the caller makes the store (`reach-wasm trust`), so an explicit path may be missing too
 * @returns the text
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file is missing (explicit, unless creating), a directory, or
 *   unreadable
 * @example
 * ```ts
 * const text = await readTrustStoreText("trust.json");
 * console.log(text === null ? "no store" : text);
 * ```
 */
export async function readTrustStoreText(explicit?: string, options: { creating?: boolean } = {}): Promise<string | null> {
  const path = explicit ?? defaultTrustStorePath();
  const where = explicit !== undefined ? "--trust" : process.env["REACH_WASM_TRUST_STORE"] !== undefined ? "$REACH_WASM_TRUST_STORE" : "the default trust store";
  const st = await lstat(path).catch(() => null);
  if (st !== null && !st.isFile()) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `${where} ${JSON.stringify(path)} is ${st.isDirectory() ? "a directory" : "not a regular file"}; point it at a trust store JSON file (reach-wasm trust add creates one)`);
  }
  if (st !== null) {
    const why = openToOthers(st);
    if (why !== null) throw new ReachError("PROTO_INVALID_ARGUMENT", `${where} ${JSON.stringify(path)} ${why}; whoever can change it decides which packs run unrestricted — fix its owner or run \`chmod 600 ${path}\``);
  }
  let text: string | null;
  try {
    text = await readTextIfExists(path);
  } catch (err) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `${where} ${JSON.stringify(path)} cannot be read (${(err as { code?: string }).code ?? (err as Error).message}); check its permissions`, { cause: err });
  }
  if (text === null && explicit !== undefined && options.creating !== true) throw new ReachError("PROTO_INVALID_ARGUMENT", `the trust store ${JSON.stringify(path)} does not exist; create it with \`reach-wasm trust add KEY.pub --trust ${path}\``);
  return text;
}

/**
 * The trust store as it is now, for a process that runs for a long time (a service worker, `serve`): the file is
 * looked at before every use and read again whenever it changed (its size, modification time or inode: `trust add`
 * replaces it atomically), so a key added or removed reaches the next run without a restart. A store that became
 * unreadable, malformed or (given with `--trust`) missing trusts no key until it is fixed, and says so once through
 * `onError`; at start such a store is still a refusal.
 * @param explicit the `--trust` path, if given
 * @param onError where a store that can no longer be read is reported
 * @returns a function giving the store now (null: no key is trusted)
 * @throws ReachError as {@link loadTrustStore} for the store at start
 * @example
 * ```ts
 * const trust = await watchTrustStore(undefined, (line) => console.error(line));
 * console.log((await trust())?.keys.length ?? 0); // again after `reach-wasm trust add`: one more
 * ```
 */
export async function watchTrustStore(explicit?: string, onError: (message: string) => void = () => {}): Promise<() => Promise<TrustStore | null>> {
  const path = explicit ?? defaultTrustStorePath();
  const stampOf = async (): Promise<string> => {
    const st = await lstat(path).catch(() => null);
    return st === null ? "missing" : `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  };
  let stamp = await stampOf();
  let current = await loadTrustStore(explicit);
  let reading: Promise<TrustStore | null> | null = null;
  return async () => {
    const now = await stampOf();
    if (now === stamp) return await (reading ?? Promise.resolve(current));
    stamp = now;
    reading = loadTrustStore(explicit).catch((err: unknown) => {
      onError(`the trust store ${path} can no longer be read (${err instanceof Error ? err.message : String(err)}); no key is trusted until it is fixed`);
      return null;
    });
    current = await reading;
    return current;
  };
}
