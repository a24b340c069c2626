/**
 * A disk store for fuel-instrumented modules (`src/sandbox/fuel` `MeteredModuleStore`), so that a new process does
 * not load binaryen and instrument the same module again. Location: `$REACH_WASM_CACHE`, else
 * `$XDG_CACHE_HOME/reach-wasm`, else `~/.cache/reach-wasm`; `REACH_WASM_CACHE=off` disables it.
 *
 * Each entry is `<key>.wasm` holding the SHA-256 of the instrumented bytes followed by the bytes; an entry whose
 * digest does not match is ignored (and rewritten). Entries are written atomically. The store is a cache: it never
 * decides anything — the key is the original module's SHA-256, the fuel options and the instrumentation version.
 * @module
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { sha256 } from "../canonical/sha256.ts";
import type { MeteredModuleStore } from "../sandbox/fuel/cache.ts";
import { setMeteredModuleStore } from "../sandbox/fuel/cache.ts";
import { homeDir } from "./config.ts";
import { writeFileAtomic } from "./write.ts";

const KEY_RE = /^[A-Za-z0-9._-]{1,200}$/;

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

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

/**
 * A store in `dir`.
 * @param dir the directory (created on first write)
 * @returns the store
 */
export function diskFuelStore(dir: string): MeteredModuleStore {
  return {
    async get(key) {
      if (!KEY_RE.test(key)) return null;
      const data = new Uint8Array(await readFile(join(dir, `${key}.wasm`)).catch(() => new Uint8Array()));
      if (data.length <= 32) return null;
      const bytes = data.subarray(32);
      return equal(sha256(bytes), data.subarray(0, 32)) ? bytes : null;
    },
    async set(key, bytes) {
      if (!KEY_RE.test(key)) return;
      await mkdir(dir, { recursive: true });
      const data = new Uint8Array(32 + bytes.length);
      data.set(sha256(bytes), 0);
      data.set(bytes, 32);
      await writeFileAtomic(join(dir, `${key}.wasm`), data);
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
  if (dir !== null) setMeteredModuleStore(diskFuelStore(dir));
}
