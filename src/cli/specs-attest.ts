/**
 * The declaration of `reach-wasm attest` (its arguments, parsed by `options.ts`, and its help, written by `help.ts`).
 * `verify --attestation` and `verify --key` are declared with `verify` in `specs-run.ts`.
 * @module
 */
import { defineArgs } from "./options.ts";

/** `reach-wasm attest`. */
export const ATTEST = defineArgs({
  name: "attest",
  positionals: ["<capsule>"],
  options: {
    key: { type: "string", value: "FILE", required: true, help: "the private key that signs (see keygen)" },
    out: { type: "string", value: "FILE", help: "where the envelope goes (default: <capsule without .capsule.tar.gz>.intoto.json beside it)" },
    json: { type: "boolean", help: "print one JSON object on stdout: {out, subject: {name, sha256}, runHash, predicateType, publicKey}" },
  },
});

/** The notes of `attest --help`. */
export const ATTEST_NOTES = [
  "Writes a DSSE envelope (payloadType application/vnd.in-toto+json) holding an in-toto Statement v1: subject the",
  "capsule file (name and SHA-256), predicateType https://reach-wasm.dev/attestation/run/v1 with the run hash, pack id,",
  "version and digest, status, tools used, the capability audit and the signer (conformance/ATTESTATION.md). Signed",
  "with Ed25519 over DSSE's pre-authentication encoding. The capsule must verify first; it is never changed.",
  "Check it with: reach-wasm verify CAPSULE --attestation FILE [--trust FILE | --key KEY.pub]",
  "Exit 0 written, 2 bad invocation, unreadable key, or a capsule that does not verify (REPLAY_CAPSULE_INVALID).",
].join("\n");
