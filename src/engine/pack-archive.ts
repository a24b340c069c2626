/**
 * The one reader of a `.tar.gz` pack (seed 003 §5): a pack archive read from the host, handed to the library, sent
 * in a delegated run or stored by the run service is read here, with one size bound, and an archive that does not
 * read is `PACK_MALFORMED`, naming where it came from and what was wrong (the capsule reader's refusal, whose
 * `details.reason` it keeps). The archive reader and its inflater load only when an archive is read: a run from a
 * pack directory never loads them.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";

/** Largest pack accepted (all files together), as a directory or an archive. */
export const MAX_PACK_BYTES = 256 * 1024 * 1024;

/**
 * Read a pack archive's files.
 * @param archive the bytes of a `.tar.gz` pack
 * @param where how the refusal names the archive ("the pack archive", a path, …)
 * @param limits the largest compressed archive accepted (default: the capsule reader's bound)
 * @returns relative `/` path → bytes
 * @throws ReachError `PACK_MALFORMED` `<where>: <why>` for an archive that cannot be read or is over a limit
 * @example const files = await packArchiveFiles(bytes, "the pack archive");
 */
export async function packArchiveFiles(archive: Uint8Array, where: string, limits: { maxCompressedBytes?: number } = {}): Promise<Map<string, Uint8Array>> {
  const { readArchive } = await import("../capsule/archive.ts");
  try {
    return readArchive(archive, { maxTotalBytes: MAX_PACK_BYTES, ...limits });
  } catch (err) {
    throw new ReachError("PACK_MALFORMED", `${where}: ${asPackArchive((err as Error).message)}`, { details: err instanceof ReachError ? err.details : {}, cause: err });
  }
}

/** The archive reader's refusal about a pack archive, not a capsule (it reads both; its messages say "capsule"). */
function asPackArchive(message: string): string {
  return message
    .replace(/\bcapsule entry\b/g, "pack archive entry")
    .replace(/\b([Tt]he|[Aa]) capsule\b/g, (_, article: string) => `${article} pack archive`)
    .replace(/\bcapsules\b/g, "pack archives")
    .replace(/written by reach-wasm/g, "written by `reach-wasm pack build`");
}
