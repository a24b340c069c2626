/**
 * The one place `src/report/` reaches the capsule verifier (`verifyRunCapsule`), so that when the verifier moves
 * only this adapter changes. The report shows the verification it is handed; it never verifies by itself.
 * @module
 */
import { verifyRunCapsule } from "../engine/mod.ts";
import type { CapsuleVerification } from "../engine/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import type { TrustStore } from "../trust/mod.ts";

/** The verification result a report shows. */
export type ReportVerification = CapsuleVerification;

/**
 * Verify a capsule for a report (every check, the proof's signer and whether the trust store knows it).
 * @param capsule the capsule, from `readRunCapsule`
 * @param trustStore the trust store (optional: without it no signer is trusted)
 * @returns the verification
 * @example const v = verifyForReport(readRunCapsule(bytes)); v.valid
 */
export function verifyForReport(capsule: RunCapsule, trustStore?: TrustStore): ReportVerification {
  return verifyRunCapsule(capsule, trustStore);
}
