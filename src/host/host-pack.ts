/**
 * A pack on the host, loaded and checked exactly as a run loads it (`loadPackFrom`): a directory or a `.tar.gz`.
 * @module
 */
import { loadPackFrom } from "../engine/mod.ts";
import type { LoadedPack } from "../engine/mod.ts";
import { defaultEnvironment } from "./environment.ts";
import { readPackFiles } from "./pack-files.ts";

/**
 * Load a pack from the host.
 * @param path a pack directory or `.tar.gz`
 * @returns the loaded pack
 * @throws ReachError `PACK_*` / `PROTO_VERSION_MISMATCH` for a pack that cannot run
 * @example
 * ```ts
 * const loaded = await loadHostPack("packs/hello");
 * console.log(loaded.pack.id, [...loaded.tools.keys()]);
 * ```
 */
export async function loadHostPack(path: string): Promise<LoadedPack> {
  return await loadPackFrom(defaultEnvironment(), { files: await readPackFiles(path) });
}
