/**
 * Capsules (seed 003 §8; ARCHITECTURE "Capsule"): the deterministic `.tar.gz` archive that holds a run, and its
 * bounded, strict reader. Web-standard only (fflate); synchronous.
 * @module
 */
export { GZIP_OPTIONS, isArchiveRefusal, readArchive, writeArchive } from "./archive.ts";
export type { ArchiveEntry } from "./archive.ts";
export { DEFAULT_ARCHIVE_LIMITS, resolveLimits } from "./limits.ts";
export type { ArchiveLimits } from "./limits.ts";
export type { RefusalReason } from "./_errors.ts";
export {
  AFTER_PREFIX,
  ARTIFACT_PREFIX,
  BEFORE_PREFIX,
  BLOB_PREFIX,
  CAPSULE_INDEX,
  capsuleEntries,
  capsuleIndexDigest,
  entriesUnder,
  EVENTS_ENTRY,
  HEADER_ENTRY,
  PACK_PREFIX,
  PLAN_ENTRY,
  PROOF_ENTRY,
  readRunCapsule,
  REQUEST_ENTRY,
  RESULT_ENTRY,
  TAPE_ENTRY,
  writeRunCapsule,
} from "./run-capsule.ts";
export type { CapsuleSigner, RunCapsule, RunCapsuleContents } from "./run-capsule.ts";
export { archiveIsCanonical } from "./archive.ts";
export { FEDERATION_ENTRY, LINKS_ENTRY, RUN_DOC_ENTRY, TASK_PREFIX, capsuleBody, contentsDigest } from "./run-capsule-core.ts";
export { runCapsuleFromEntries } from "./run-capsule.ts";
