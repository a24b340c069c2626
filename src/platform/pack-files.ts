/**
 * A pack's bytes on the host: a directory's files (regular files only; links are refused so that a pack can never
 * name a file outside itself), or the bytes of a `.tar.gz` of one, which the engine's pack reader reads
 * (`src/engine/pack-archive.ts`; `readPackFiles` of `src/host/pack-files.ts` puts the two together).
 * @module
 */
import { lstat } from "./_fs.ts";
import { ReachError } from "../protocol/mod.ts";
import { readDirTree, readHostFile } from "./files.ts";

/**
 * Read a pack directory's files, or a pack archive's bytes.
 * @param path a pack directory or `.tar.gz`
 * @param maxBytes the most bytes read (all files of a directory together, or the archive)
 * @returns the directory's files (relative path → bytes), or the archive's bytes
 * @throws ReachError `PACK_NOT_FOUND` when the path does not exist; `PACK_MALFORMED` for links or an unreadable tree
 * @example
 * ```ts
 * const source = await readHostPack("packs/hello", 256 * 1024 * 1024);
 * console.log("files" in source ? [...source.files.keys()] : source.archive.length);
 * ```
 */
export async function readHostPack(path: string, maxBytes: number): Promise<{ files: Map<string, Uint8Array> } | { archive: Uint8Array }> {
  const st = await lstat(path).catch(() => null);
  if (st === null) throw new ReachError("PACK_NOT_FOUND", `no pack at ${JSON.stringify(path)}; give a pack directory (with reach.json) or a .tar.gz of one`);
  if (st.isFile() && /\.(tar\.gz|tgz)$/.test(path)) return { archive: await readHostFile(path, maxBytes) };
  if (!st.isDirectory()) throw new ReachError("PACK_MALFORMED", `${JSON.stringify(path)} is neither a pack directory nor a .tar.gz pack archive`);
  let tree;
  try {
    tree = await readDirTree(path, { maxTotalBytes: maxBytes });
  } catch (err) {
    if (err instanceof ReachError) throw new ReachError("PACK_MALFORMED", err.message.replace(/^--dir /, "pack "), { cause: err });
    throw err;
  }
  if (tree.links.size > 0) {
    const [first] = tree.links.keys();
    throw new ReachError("PACK_MALFORMED", `pack ${JSON.stringify(path)}: ${JSON.stringify(first)} is a symbolic link; packs hold regular files only — copy the target in`);
  }
  return { files: tree.files };
}
