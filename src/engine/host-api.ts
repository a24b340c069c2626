/**
 * What the faces (the CLI, the MCP server, the run service, federation nodes) use of the layers below the engine —
 * keys and signatures, capsule archives, canonical JSON — re-exported here so that a face imports the engine and
 * never reaches past it (ARCHITECTURE "Faces over one engine call"). Re-exports only.
 * @module
 */
export { bytesToHex, hexToBytes } from "../canonical/hex.ts";
export { canonicalize, hashCanonical } from "../canonical/jcs.ts";
export { writeArchive, readArchive, archiveIsCanonical } from "../capsule/archive.ts";
export { DEFAULT_ARCHIVE_LIMITS } from "../capsule/limits.ts";
export type { ArchiveLimits } from "../capsule/limits.ts";
export { readRunCapsule, runCapsuleFromEntries } from "../capsule/run-capsule.ts";
export type { RunCapsule } from "../capsule/run-capsule-core.ts";
export { approvalPlanHash, signApproval } from "../trust/approval.ts";
export type { ApprovalRecord } from "../trust/approval.ts";
export { formatKeyFiles, formatPublicKeyFile, generateKeyPair, parsePrivateKeyFile, parsePublicKeyFile } from "../trust/keys.ts";
export type { KeyPair } from "../trust/keys.ts";
export { formatPackSignature, PACK_SIGNATURE_PATH, packDigest, signPack, verifyPackSignature } from "../trust/pack-signature.ts";
export { formatTrustStore, parseTrustStore, TrustStore } from "../trust/trust-store.ts";
export { publicKeyProblem } from "../trust/verify.ts";
export { MAX_ENVELOPE_CHARS } from "../trust/dsse.ts";
export type { TrustedKey, TrustStoreDocument } from "../trust/trust-store.ts";
