/**
 * Reading a pack from the host into memory: a directory (regular files only; links are refused so that a pack can
 * never name a file outside itself) or a `.tar.gz` archive of one (read with the bounded capsule reader).
 * @module
 */
import { lstat } from "./_fs.ts";
import { ReachError } from "../protocol/errors.ts";
import { readDirTree, readHostFile } from "./files.ts";

/** Largest pack accepted (all files together). */
export const MAX_PACK_BYTES = 256 * 1024 * 1024;

/**
 * Read a pack's files.
 * @param path a pack directory or `.tar.gz`
 * @returns relative path → bytes
 * @throws ReachError `PACK_NOT_FOUND` when the path does not exist; `PACK_MALFORMED` for links or an unreadable tree
 * @example
 * ```ts
 * const files = await readPackFiles("packs/hello"); // a directory or a .tar.gz
 * console.log([...files.keys()]);
 * ```
 */
export async function readPackFiles(path: string): Promise<Map<string, Uint8Array>> {
  const st = await lstat(path).catch(() => null);
  if (st === null) throw new ReachError("PACK_NOT_FOUND", `no pack at ${JSON.stringify(path)}; give a pack directory (with reach.json) or a .tar.gz of one`);
  if (st.isFile() && /\.(tar\.gz|tgz)$/.test(path)) {
    const bytes = await readHostFile(path, MAX_PACK_BYTES);
    const { readArchive } = await import("../capsule/archive.ts");
    try {
      return new Map(readArchive(bytes, { maxTotalBytes: MAX_PACK_BYTES }));
    } catch (err) {
      if (err instanceof ReachError) throw new ReachError("PACK_MALFORMED", `${path}: ${err.message}`, { details: err.details, cause: err });
      throw err;
    }
  }
  if (!st.isDirectory()) throw new ReachError("PACK_MALFORMED", `${JSON.stringify(path)} is neither a pack directory nor a .tar.gz pack archive`);
  let tree;
  try {
    tree = await readDirTree(path, { maxTotalBytes: MAX_PACK_BYTES });
  } catch (err) {
    if (err instanceof ReachError) throw new ReachError("PACK_MALFORMED", err.message.replace(/^--dir /, "pack "), { cause: err });
    throw err;
  }
  if (tree.links.size > 0) {
    const [first] = tree.links.keys();
    throw new ReachError("PACK_MALFORMED", `pack ${JSON.stringify(path)}: ${JSON.stringify(first)} is a symbolic link; packs hold regular files only — copy the target in`);
  }
  return tree.files;
}
