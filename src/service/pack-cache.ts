/**
 * A worker's cache of pack files by archive SHA-256, so that a pack run a thousand times is read from the database
 * and inflated once. Bounded by entries and bytes; the least recently used pack leaves first.
 * @module
 */
import { packArchiveFiles } from "../engine/mod.ts";
import type { SqlExecutor } from "./ports.ts";
import { ReachError } from "../protocol/mod.ts";
import { readPackArchive } from "./store-packs.ts";

type Entry = { files: ReadonlyMap<string, Uint8Array>; bytes: number };

/** Pack files by archive SHA-256. */
export class PackCache {
  readonly #db: SqlExecutor;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  /**
   * @param db where the archives are
   * @param limits most packs and most inflated bytes kept (default 64 packs, 256 MiB)
   */
  constructor(db: SqlExecutor, limits: { maxEntries?: number; maxBytes?: number } = {}) {
    this.#db = db;
    this.#maxEntries = limits.maxEntries ?? 64;
    this.#maxBytes = limits.maxBytes ?? 256 * 1024 * 1024;
  }

  /**
   * The files of a stored pack archive.
   * @param sha256 the archive's SHA-256
   * @returns relative path → bytes
   * @throws ReachError `PACK_NOT_FOUND` when the archive is not stored, `PACK_MALFORMED` when it does not inflate
   * @example const files = await cache.files(run.archiveSha256);
   */
  async files(sha256: string): Promise<ReadonlyMap<string, Uint8Array>> {
    const hit = this.#entries.get(sha256);
    if (hit !== undefined) {
      this.#entries.delete(sha256);
      this.#entries.set(sha256, hit); // most recently used last
      return hit.files;
    }
    const archive = await readPackArchive(this.#db, sha256);
    if (archive === null) throw new ReachError("PACK_NOT_FOUND", `the pack archive ${sha256} is not in the service store; register the pack again (POST /packs)`);
    const files = await packArchiveFiles(archive, `the stored pack archive ${sha256}`);
    let bytes = 0;
    for (const b of files.values()) bytes += b.length;
    this.#entries.set(sha256, { files, bytes });
    this.#bytes += bytes;
    for (const [key, e] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      if (key === sha256) continue;
      this.#entries.delete(key);
      this.#bytes -= e.bytes;
    }
    return files;
  }
}
