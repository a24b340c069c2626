/**
 * The run capsule (seed 003 §8; ARCHITECTURE "Capsule"): which files a capsule holds, its index, the digest a
 * run proof signs (`run-capsule-core.ts`, re-exported here), and {@link readRunCapsule}, the strict reader of a
 * capsule's archive.
 * @module
 */
import { readArchive } from "./archive.ts";
import type { ArchiveLimits } from "./limits.ts";
import { runCapsuleFromEntries } from "./run-capsule-core.ts";
import type { RunCapsule } from "./run-capsule-core.ts";

export { CAPSULE_INDEX, EVENTS_ENTRY, TAPE_ENTRY, PROOF_ENTRY, REQUEST_ENTRY, PLAN_ENTRY, HEADER_ENTRY, RESULT_ENTRY, RUN_DOC_ENTRY, TASK_PREFIX, PACK_PREFIX, BLOB_PREFIX, BEFORE_PREFIX, AFTER_PREFIX, ARTIFACT_PREFIX, FEDERATION_ENTRY, LINKS_ENTRY, capsuleBody, contentsDigest, capsuleEntries, capsuleIndexDigest, writeRunCapsule, runCapsuleFromEntries, entriesUnder } from "./run-capsule-core.ts";
export type { RunCapsuleContents, CapsuleSigner, CapsuleBodyParts, RunCapsule } from "./run-capsule-core.ts";

/**
 * Read a capsule: the archive (bounded and strict), the index (schema), and every entry against the index.
 * Damaged entries are reported in `damaged` rather than thrown, so that `verify` can name every one.
 * @param bytes the `.tar.gz`
 * @param limits archive limits
 * @returns the capsule
 * @throws ReachError `REPLAY_CAPSULE_INVALID` / `REPLAY_CAPSULE_TOO_LARGE` for an archive that cannot be read, and
 *   `REPLAY_CAPSULE_INVALID` for a missing or malformed index
 * @example
 * ```ts
 * declare const bytes: Uint8Array; // a capsule's .tar.gz bytes
 * const capsule = readRunCapsule(bytes);
 * console.log(capsule.index.runHash, capsule.damaged.length === 0 ? "intact" : capsule.damaged);
 * ```
 */
export function readRunCapsule(bytes: Uint8Array, limits?: Partial<ArchiveLimits>): RunCapsule {
  return runCapsuleFromEntries(readArchive(bytes, limits));
}
