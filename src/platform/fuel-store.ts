/**
 * A disk store for fuel-instrumented modules (`src/sandbox/fuel` `MeteredModuleStore`), so that a new process does
 * not load binaryen and instrument the same module again. Location: `$REACH_WASM_CACHE/fuel`, else
 * `$XDG_CACHE_HOME/reach-wasm/fuel`, else `~/.cache/reach-wasm/fuel`; `REACH_WASM_CACHE=off` disables it.
 *
 * What is read back decides what tools run, so nothing in the directory is trusted until checked:
 * - the directory and its parent must be directories (not links) owned by this user and writable by nobody else
 *   (created 0700); otherwise the store is not used at all (one warning on stderr) and modules are instrumented in
 *   memory only;
 * - each entry is `MAGIC ‖ HMAC-SHA256(key, cacheKey ‖ bytes) ‖ bytes`, a regular file owned by this user. The key
 *   is 32 random bytes in `fuel.key` beside the directory (0600, same ownership rules), so an entry cannot be
 *   forged without reading that key, nor moved to another module's name. An entry that fails any check is ignored,
 *   rebuilt and overwritten — never executed.
 * A run's capsule also records each module's instrumented hash, so a replay on a machine with an empty cache, which
 * instruments again, compares what ran (ARCHITECTURE "Hashing").
 * @module
 */
import { lstat, mkdir, open, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import type { MeteredModuleStore } from "../sandbox/fuel/cache.ts";
import { setMeteredModuleStore } from "../sandbox/fuel/cache.ts";
import { homeDir } from "./config.ts";
import { writeFileAtomic } from "./write.ts";

const KEY_RE = /^[A-Za-z0-9._-]{1,200}$/;
/** Entry header: "reachfv2". */
const MAGIC = new TextEncoder().encode("reachfv2");
const MAC_BYTES = 32;

/**
 * The cache directory, or null when disabled.
 * @returns the directory
 */
export function fuelCacheDir(): string | null {
  const env = process.env["REACH_WASM_CACHE"];
  if (env === "off" || env === "0") return null;
  if (env !== undefined && env !== "") return join(env, "fuel");
  const xdg = process.env["XDG_CACHE_HOME"];
  const base = xdg !== undefined && xdg !== "" ? join(xdg, "reach-wasm") : join(homeDir(), ".cache", "reach-wasm");
  return join(base, "fuel");
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
async function macKey(dir: string): Promise<Uint8Array> {
  const path = join(dirname(dir), "fuel.key");
  const exists = await lstat(path).then(() => true, () => false);
  if (!exists) {
    const fresh = crypto.getRandomValues(new Uint8Array(32));
    try {
      const fh = await open(path, "wx", 0o600);
      try {
        await fh.writeFile(fresh);
      } finally {
        await fh.close();
      }
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

function mac(key: Uint8Array, cacheKey: string, bytes: Uint8Array): Uint8Array {
  const h = hmac.create(nobleSha256, key);
  h.update(new TextEncoder().encode(`${cacheKey}\n`));
  h.update(bytes);
  return h.digest();
}

/**
 * A store in `dir` (see the module notes). Fails closed: every check that cannot be made counts as failed.
 * @param dir the directory (created 0700 on first use)
 * @param warn called once when the directory cannot be trusted
 * @returns the store
 * @example setMeteredModuleStore(diskFuelStore("/home/me/.cache/reach-wasm/fuel"));
 */
export function diskFuelStore(dir: string, warn: (message: string) => void = () => {}): MeteredModuleStore {
  let ready: Promise<Uint8Array | null> | undefined;
  const key = (): Promise<Uint8Array | null> =>
    (ready ??= (async () => {
      const why = await trustedDir(dir);
      if (why !== null) throw new Error(why);
      return await macKey(dir);
    })().catch((err: unknown) => {
      warn(`reach-wasm: warning: the fuel cache ${dir} is not used (${(err as Error).message}); tools are instrumented in memory only\n`);
      return null;
    }));
  return {
    async get(name) {
      const k = KEY_RE.test(name) ? await key() : null;
      if (k === null) return null;
      const path = join(dir, `${name}.wasm`);
      if ((await distrust(path, "file").catch(() => "missing")) !== null) return null;
      const data = new Uint8Array(await readFile(path).catch(() => new Uint8Array()));
      if (data.length <= MAGIC.length + MAC_BYTES || !timingSafeEqual(data.subarray(0, MAGIC.length), MAGIC)) return null;
      const bytes = data.subarray(MAGIC.length + MAC_BYTES);
      return timingSafeEqual(mac(k, name, bytes), data.subarray(MAGIC.length, MAGIC.length + MAC_BYTES)) ? bytes : null;
    },
    async set(name, bytes) {
      const k = KEY_RE.test(name) ? await key() : null;
      if (k === null) return;
      const data = new Uint8Array(MAGIC.length + MAC_BYTES + bytes.length);
      data.set(MAGIC, 0);
      data.set(mac(k, name, bytes), MAGIC.length);
      data.set(bytes, MAGIC.length + MAC_BYTES);
      await writeFileAtomic(join(dir, `${name}.wasm`), data, 0o600);
    },
  };
}

/** Install the disk store for this process (no-op when disabled). */
export function installFuelStore(): void {
  let dir: string | null;
  try {
    dir = fuelCacheDir();
  } catch {
    dir = null; // no home directory, no permission to read the environment: memory only
  }
  if (dir !== null) setMeteredModuleStore(diskFuelStore(dir, (m) => process.stderr.write(m)));
}
