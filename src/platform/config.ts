/**
 * Where reach-wasm looks for user configuration: the trust store of public keys whose packs run unrestricted.
 * `$REACH_WASM_TRUST_STORE`, else `$XDG_CONFIG_HOME/reach-wasm/trust.json`, else `~/.config/reach-wasm/trust.json`.
 * @module
 */
import { readFile } from "./_fs.ts";
import { join } from "node:path";
import process from "node:process";

/**
 * The user's home directory from the environment (`HOME`, `USERPROFILE`), without `os.homedir()`, which Deno
 * guards behind `--allow-sys`.
 * @returns the directory, or "." when unknown
 */
export function homeDir(): string {
  const h = process.env["HOME"] ?? process.env["USERPROFILE"];
  return h !== undefined && h !== "" ? h : ".";
}

/**
 * The default trust store path.
 * @returns the path (the file may not exist)
 */
export function defaultTrustStorePath(): string {
  const env = process.env["REACH_WASM_TRUST_STORE"];
  if (env !== undefined && env !== "") return env;
  const xdg = process.env["XDG_CONFIG_HOME"];
  return join(xdg !== undefined && xdg !== "" ? xdg : join(homeDir(), ".config"), "reach-wasm", "trust.json");
}

/**
 * Read a text file, or null when it does not exist.
 * @param path the file
 * @returns its UTF-8 text or null
 */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return null;
    throw err;
  }
}
