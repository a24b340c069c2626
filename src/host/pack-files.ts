/**
 * Reading a pack from the host into memory: a directory, or a `.tar.gz` of one. The platform supplies the bytes
 * (`src/platform/pack-files.ts`); an archive is read by the engine's one pack reader (`src/engine/pack-archive.ts`).
 * @module
 */
import { MAX_PACK_BYTES, packArchiveFiles } from "../engine/mod.ts";
import { readHostPack } from "../platform/pack-files.ts";

/**
 * Read a pack's files.
 * @param path a pack directory or `.tar.gz`
 * @returns relative path → bytes
 * @throws ReachError `PACK_NOT_FOUND` when the path does not exist; `PACK_MALFORMED` for links, an unreadable tree or
 *   an archive that does not read (`<path>: <why>`)
 * @example
 * ```ts
 * const files = await readPackFiles("packs/hello"); // a directory or a .tar.gz
 * console.log([...files.keys()]);
 * ```
 */
export async function readPackFiles(path: string): Promise<Map<string, Uint8Array>> {
  const source = await readHostPack(path, MAX_PACK_BYTES);
  return "files" in source ? source.files : await packArchiveFiles(source.archive, path);
}
