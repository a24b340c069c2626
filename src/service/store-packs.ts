/**
 * Registered packs: archive bytes stored once by their SHA-256, and each tenant's packs by pack digest. A tenant can
 * run only the packs it registered or uploaded.
 * @module
 */
import type { SqlExecutor } from "./ports.ts";
import type { PackInspection } from "./engine-adapter.ts";
import type { RunPack } from "./store-runs.ts";

/**
 * Register a checked pack for a tenant (re-registering the same digest replaces the archive, e.g. once signed).
 * @param tx the database or a transaction
 * @param tenant the tenant
 * @param archive the archive bytes and their SHA-256
 * @param pack what {@link inspectPack} found
 * @returns the pack as runs refer to it
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const p = await registerPack(db, "local", { bytes, sha256 }, inspection);
 */
export async function registerPack(tx: SqlExecutor, tenant: string, archive: { bytes: Uint8Array; sha256: string }, pack: PackInspection): Promise<RunPack> {
  await tx.query("INSERT INTO reach_wasm.pack_archives (archive_sha256, bytes, size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [archive.sha256, archive.bytes, archive.bytes.length]);
  await tx.query(
    `INSERT INTO reach_wasm.packs (tenant, pack_digest, archive_sha256, pack_id, pack_version, signed, signer) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant, pack_digest) DO UPDATE SET archive_sha256 = excluded.archive_sha256, signed = excluded.signed, signer = excluded.signer, registered_at = now()`,
    [tenant, pack.digest, archive.sha256, pack.id, pack.version, pack.signed, pack.signer],
  );
  return { digest: pack.digest, archiveSha256: archive.sha256, id: pack.id, version: pack.version };
}

/**
 * A tenant's registered pack.
 * @param db the database
 * @param tenant the tenant
 * @param digest the pack digest
 * @returns the pack, or null when this tenant has not registered it
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const p = await findPack(db, "local", digest);
 */
export async function findPack(db: SqlExecutor, tenant: string, digest: string): Promise<RunPack | null> {
  const rows = await db.query<{ archive_sha256: string; pack_id: string; pack_version: string }>(
    "SELECT archive_sha256, pack_id, pack_version FROM reach_wasm.packs WHERE tenant = $1 AND pack_digest = $2",
    [tenant, digest],
  );
  const r = rows[0];
  return r === undefined ? null : { digest, archiveSha256: r.archive_sha256, id: r.pack_id, version: r.pack_version };
}

/**
 * The bytes of a stored pack archive.
 * @param db the database
 * @param sha256 the archive's SHA-256
 * @returns the bytes, or null
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const bytes = await readPackArchive(db, sha);
 */
export async function readPackArchive(db: SqlExecutor, sha256: string): Promise<Uint8Array | null> {
  const rows = await db.query<{ bytes: Uint8Array }>("SELECT bytes FROM reach_wasm.pack_archives WHERE archive_sha256 = $1", [sha256]);
  return rows[0] === undefined ? null : new Uint8Array(rows[0].bytes);
}
