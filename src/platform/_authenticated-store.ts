/**
 * A directory of cache entries that decide what runs (fuel-instrumented modules, component glue), trusted only after
 * checks: the directory and its parent must be directories (not links) owned by this user and writable by nobody
 * else (created 0700), else the store is not used at all (one warning); each entry is
 * `MAGIC ‖ HMAC-SHA256(key, cacheKey "\n" ‖ bytes) ‖ bytes` in a regular file owned by this user, keyed by 32 random
 * bytes in a key file beside the directory (0600, same ownership rules). An entry cannot be forged without reading
 * that key, nor moved to another entry's name; one that fails any check is a miss — the caller rebuilds and
 * overwrites it, never runs it. Used by `fuel-store.ts` and `component-store.ts`.
 * @module
 */
import { createHmac } from "node:crypto";
import { createExclusive, lstat, mkdir, readFile } from "./_fs.ts";
import { dirname, join } from "node:path";
import process from "node:process";
import { homeDir } from "./config.ts";
import { writeFileAtomic } from "./write.ts";

const KEY_RE = /^[A-Za-z0-9._-]{1,200}$/;
const MAC_BYTES = 32;

/** What distinguishes one store from another. */
export type StoreFormat = {
  /** 8 ASCII bytes at the start of every entry (bumped when the format changes). */
  magic: string;
  /** File name suffix of the entries (`.wasm`, `.json`). */
  extension: string;
  /** Name of the key file beside the directory. */
  keyFile: string;
  /** What the store holds, for the warning (e.g. "the fuel cache"). */
  label: string;
};

/** A cache: any failure is a miss. */
export type AuthenticatedStore = {
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, bytes: Uint8Array): Promise<void>;
};

/**
 * The cache directory for `name`, or null when disabled: `$REACH_WASM_CACHE/<name>`, else
 * `$XDG_CACHE_HOME/reach-wasm/<name>`, else `~/.cache/reach-wasm/<name>`; `REACH_WASM_CACHE=off` (or `0`) disables.
 * @param name the store's folder
 * @returns the directory
 * @throws Error when there is no home directory to fall back on
 * @example cacheDir("fuel") // "/home/me/.cache/reach-wasm/fuel"
 */
export function cacheDir(name: string): string | null {
  const env = process.env["REACH_WASM_CACHE"];
  if (env === "off" || env === "0") return null;
  if (env !== undefined && env !== "") return join(env, name);
  const xdg = process.env["XDG_CACHE_HOME"];
  const base = xdg !== undefined && xdg !== "" ? join(xdg, "reach-wasm") : join(homeDir(), ".cache", "reach-wasm");
  return join(base, name);
}

function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

function uid(): number | null {
  return typeof process.getuid === "function" ? process.getuid() : null;
}

/** Why a path may not be trusted (a link, another owner, writable by others), or null when it may. */
async function distrust(path: string, kind: "dir" | "file"): Promise<string | null> {
  const st = await lstat(path);
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (kind === "dir" ? !st.isDirectory() : !st.isFile()) return `${path} is not a ${kind === "dir" ? "directory" : "regular file"}`;
  const me = uid();
  if (me !== null && st.uid !== me) return `${path} is owned by uid ${st.uid}, not by this user (${me})`;
  if (me !== null && (st.mode & 0o022) !== 0) return `${path} is writable by its group or others (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/** Create `dir` (0700) and check it and its parent. */
async function trustedDir(dir: string): Promise<string | null> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return (await distrust(dirname(dir), "dir")) ?? (await distrust(dir, "dir"));
}

/** The MAC key beside the directory: read it (checked), or create it (0600) when missing. */
async function macKey(dir: string, keyFile: string): Promise<Uint8Array> {
  const path = join(dirname(dir), keyFile);
  const exists = await lstat(path).then(() => true, () => false);
  if (!exists) {
    const fresh = crypto.getRandomValues(new Uint8Array(32));
    try {
      await createExclusive(path, 0o600, fresh);
      return fresh;
    } catch {
      // another process created it first: read theirs
    }
  }
  const why = await distrust(path, "file");
  if (why !== null) throw new Error(why);
  const key = new Uint8Array(await readFile(path));
  if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte key`);
  return key;
}

/** HMAC-SHA-256 of the entry's name and bytes, natively (a cached module is ~100 KB: in JS this was 5 ms of a run). */
function mac(key: Uint8Array, cacheKey: string, bytes: Uint8Array): Uint8Array {
  const digest = createHmac("sha256", key).update(`${cacheKey}\n`, "utf8").update(bytes).digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
}

/**
 * A store in `dir` (see the module notes). Fails closed: every check that cannot be made counts as failed.
 * @param dir the directory (created 0700 on first use)
 * @param format magic, entry extension, key file and label
 * @param warn called once when the directory cannot be trusted
 * @returns the store
 * @throws TypeError when the magic is not 8 ASCII bytes
 * @example const store = authenticatedStore(dir, { magic: "reachfv2", extension: ".wasm", keyFile: "fuel.key", label: "the fuel cache" });
 */
export function authenticatedStore(dir: string, format: StoreFormat, warn: (message: string) => void = () => {}): AuthenticatedStore {
  const magic = new TextEncoder().encode(format.magic);
  if (magic.length !== 8) throw new TypeError(`"format.magic" expected 8 ASCII bytes, got ${JSON.stringify(format.magic)}`);
  let ready: Promise<Uint8Array | null> | undefined;
  const key = (): Promise<Uint8Array | null> =>
    (ready ??= (async () => {
      const why = await trustedDir(dir);
      if (why !== null) throw new Error(why);
      return await macKey(dir, format.keyFile);
    })().catch((err: unknown) => {
      warn(`reach-wasm: warning: ${format.label} ${dir} is not used (${(err as Error).message}); nothing is kept between runs\n`);
      return null;
    }));
  return {
    async get(name) {
      const k = KEY_RE.test(name) ? await key() : null;
      if (k === null) return null;
      const path = join(dir, `${name}${format.extension}`);
      if ((await distrust(path, "file").catch(() => "missing")) !== null) return null;
      const data = new Uint8Array(await readFile(path).catch(() => new Uint8Array()));
      if (data.length <= magic.length + MAC_BYTES || !timingSafeEqual(data.subarray(0, magic.length), magic)) return null;
      const bytes = data.subarray(magic.length + MAC_BYTES);
      return timingSafeEqual(mac(k, name, bytes), data.subarray(magic.length, magic.length + MAC_BYTES)) ? bytes : null;
    },
    async set(name, bytes) {
      const k = KEY_RE.test(name) ? await key() : null;
      if (k === null) return;
      const data = new Uint8Array(magic.length + MAC_BYTES + bytes.length);
      data.set(magic, 0);
      data.set(mac(k, name, bytes), magic.length);
      data.set(bytes, magic.length + MAC_BYTES);
      await writeFileAtomic(join(dir, `${name}${format.extension}`), data, 0o600, { within: dir });
    },
  };
}
