/**
 * What the faces (the CLI, the MCP server, the run service, federation nodes) use of the layers below the engine —
 * keys and signatures, capsule archives, canonical JSON — re-exported here so that a face imports the engine and
 * never reaches past it (ARCHITECTURE "Faces over one engine call"). Re-exports only.
 * @module
 */
export { bytesToHex, hexToBytes } from "../canonical/mod.ts";
export { canonicalize, hashCanonical } from "../canonical/mod.ts";
export { writeArchive, readArchive, archiveIsCanonical } from "../capsule/mod.ts";
export { DEFAULT_ARCHIVE_LIMITS } from "../capsule/mod.ts";
export type { ArchiveLimits } from "../capsule/mod.ts";
export { readRunCapsule, runCapsuleFromEntries } from "../capsule/mod.ts";
export type { RunCapsule } from "../capsule/mod.ts";
export { approvalPlanHash, signApproval } from "../trust/mod.ts";
export type { ApprovalRecord } from "../trust/mod.ts";
export { formatKeyFiles, formatPublicKeyFile, generateKeyPair, parsePrivateKeyFile, parsePublicKeyFile } from "../trust/mod.ts";
export type { KeyPair } from "../trust/mod.ts";
export { formatPackSignature, PACK_SIGNATURE_PATH, packDigest, signPack, verifyPackSignature } from "../trust/mod.ts";
export { formatTrustStore, parseTrustStore, TrustStore } from "../trust/mod.ts";
export { publicKeyProblem } from "../trust/mod.ts";
export { MAX_ENVELOPE_CHARS } from "../trust/mod.ts";
export type { TrustedKey, TrustStoreDocument } from "../trust/mod.ts";
