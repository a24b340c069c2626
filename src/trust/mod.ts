/**
 * Trust: Ed25519 key pairs and key files, strict RFC 8032 verification, pack signatures (`.reach/signature`),
 * the trust store, and run and step proofs (`proof.json`) (seed 003 §5.4, §8.3). Web-standard only.
 * @module
 */
export {
  isValidPublicKey,
  PRIVATE_KEY_LENGTH,
  PUBLIC_KEY_LENGTH,
  publicKeyFromPrivateKey,
  publicKeyProblem,
  SIGNATURE_LENGTH,
  signEd25519,
  verifyEd25519,
} from "./verify.ts";
export {
  formatKeyFiles,
  formatPublicKeyFile,
  generateKeyPair,
  KEY_FILE_VERSION,
  parsePrivateKeyFile,
  parsePublicKeyFile,
  PRIVATE_KEY_FILE_TYPE,
  PrivateKeyFileSchema,
  PUBLIC_KEY_FILE_TYPE,
  PublicKeyFileSchema,
} from "./keys.ts";
export type { KeyFiles, KeyPair, PrivateKeyFile, PublicKeyFile } from "./keys.ts";
export {
  formatTrustStore,
  parseTrustStore,
  TRUST_STORE_VERSION,
  TrustedKeySchema,
  TrustStore,
  TrustStoreSchema,
} from "./trust-store.ts";
export type { TrustedKey, TrustStoreDocument } from "./trust-store.ts";
export {
  formatPackSignature,
  listingDigest,
  PACK_SIGNATURE_PATH,
  PACK_SIGNATURE_TYPE,
  PACK_SIGNATURE_VERSION,
  packDigest,
  PackFileEntrySchema,
  packListing,
  PackSignatureDocumentSchema,
  packSignatureMessage,
  parsePackSignature,
  signPack,
  verifyPackSignature,
} from "./pack-signature.ts";
export type { PackFileEntry, PackFiles, PackSignatureDocument, PackVerification } from "./pack-signature.ts";
export {
  formatProof,
  parseProof,
  PROOF_VERSION,
  ProofDocumentSchema,
  RUN_PROOF_TYPE,
  runProofMessage,
  RunProofSchema,
  RunProofStatementSchema,
  signProof,
  signRunProof,
  signStepProof,
  STEP_PROOF_TYPE,
  stepProofMessage,
  StepProofSchema,
  StepProofStatementSchema,
  verifyProof,
  verifyRunProof,
  verifyStepProof,
} from "./proofs.ts";
export type {
  ProofCheck,
  ProofDocument,
  ProofExpectations,
  ProofVerification,
  RunProof,
  RunProofStatement,
  StepProof,
  StepProofStatement,
} from "./proofs.ts";
export { approvalPlanHash, approves, signApproval } from "./approval.ts";
export type { ApprovalRecord } from "./approval.ts";
export { IN_TOTO_PAYLOAD_TYPE, MAX_ENVELOPE_CHARS, parseEnvelope, signEnvelope, verifyEnvelope } from "./dsse.ts";
