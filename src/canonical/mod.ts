/**
 * Canonical forms and hashing: RFC 8785 canonical JSON, SHA-256 with a pluggable backend, hex/base64, and
 * deterministic ids. Web-standard only; `src/platform/` installs the native SHA-256 backend.
 * @module
 */
export { base64ToBytes, bytesToBase64, bytesToHex, hexToBytes, isSha256Hex } from "./hex.ts";
export { concatBytes } from "./bytes.ts";
export { getSha256Backend, nobleBackend, setSha256Backend, sha256, sha256Hex, utf8 } from "./sha256.ts";
export type { Sha256Backend } from "./sha256.ts";
export { canonicalBytes, canonicalize, hashCanonical, MAX_DEPTH } from "./jcs.ts";
export { deriveId, uuidFromDigest } from "./ids.ts";
export { uuidFromHex } from "./ids.ts";
export { sortKeys } from "./jcs.ts";
export { commitKey, hmacSha256, SALTED_COMMITMENTS, valueCommit, valueSalt } from "./commit.ts";
