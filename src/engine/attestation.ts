/**
 * in-toto attestations of run capsules (`reach-wasm attest`, `reach-wasm verify --attestation`): a DSSE envelope
 * (`src/trust/dsse.ts`, payload type `application/vnd.in-toto+json`) holding an in-toto Statement v1
 * (github.com/in-toto/attestation `spec/v1/statement.md`) whose subject is the capsule file and whose predicate
 * (type {@link RUN_PREDICATE_TYPE}, documented in `conformance/ATTESTATION.md`) says what the capsule proves.
 *
 * The statement is a pure function of the capsule bytes, the file name, the signer and the producer version: no
 * clock, no host path, so attesting twice with one key writes the same bytes (Ed25519 is deterministic).
 *
 * Verification (each failure names a code): the envelope and statement must parse (`PROTO_SCHEMA_VIOLATION`, thrown:
 * the file is not an attestation of ours); then checks — `attestation.signature` (a signature verifies with a
 * trusted key: `REPLAY_PROOF_INVALID`), `attestation.signer` (the key that verified is trusted and is the one the
 * predicate names: `FED_TRUST_VIOLATION`), `attestation.subject` (a subject's SHA-256 is the capsule file's:
 * `REPLAY_HASH_MISMATCH`), `attestation.predicate` (every predicate field is what the capsule holds:
 * `REPLAY_HASH_MISMATCH`).
 * @module
 */
import { bytesToHex, hexToBytes } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex, utf8 } from "../canonical/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import { EVENTS_ENTRY, RESULT_ENTRY } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { ErrorCode } from "../protocol/mod.ts";
import { IN_TOTO_PAYLOAD_TYPE, parseEnvelope, signEnvelope, verifyEnvelope } from "../trust/mod.ts";
import { publicKeyFromPrivateKey } from "../trust/mod.ts";
import type { TrustStore } from "../trust/mod.ts";
import type { VerifyCheck } from "./verify.ts";

/** `_type` of an in-toto Statement v1. */
export const IN_TOTO_STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
/** Our predicate type: a reach-wasm run capsule (conformance/ATTESTATION.md). */
export const RUN_PREDICATE_TYPE = "https://reach-wasm.dev/attestation/run/v1";

/** What the capsule itself says: every predicate field that verification derives again and compares. */
export type RunClaims = {
  runHash: string;
  runId: string;
  status: string;
  pack: { id: string; version: string; digest: string };
  planHash: string | null;
  /** Each tool the run invoked, by name, with how many calls. */
  tools: { name: string; calls: number }[];
  /** `result.json`'s post-execution capability audit (seed 003 §4.2); null for a capsule made before it existed. */
  capabilityAudit: unknown;
};

/** The predicate: the claims plus who signed and which reach-wasm wrote it. */
export type RunPredicate = RunClaims & {
  signer: { keyid: string; publicKey: string; algorithm: "Ed25519" };
  producer: { name: "reach-wasm"; version: string };
};

/** A check of an attestation: a verify check with the code of its failure. */
export type AttestationCheck = VerifyCheck & { code?: ErrorCode };

/** The outcome of verifying an attestation. */
export type AttestationVerification = {
  valid: boolean;
  checks: AttestationCheck[];
  /** The key that verified, whether it is trusted, its name in the trust store; null when no key verified. */
  signer: { publicKey: string; trusted: boolean; keyName?: string } | null;
};

const dec = new TextDecoder("utf-8", { fatal: true });

function parseJson(bytes: Uint8Array | undefined, what: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(dec.decode(bytes ?? new Uint8Array()));
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ReachError("REPLAY_CAPSULE_INVALID", `the capsule's ${what} is missing or not a JSON object; run \`reach-wasm verify\` on it`);
}

/**
 * The claims a capsule supports, read from its committed entries (`run.started`, `tool.invoked`, `result.json`).
 * @param capsule a capsule (verify it first: this reads, it does not check)
 * @returns the claims
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when the events or `result.json` cannot be read
 * @example runClaims(readRunCapsule(bytes)).pack.id // "hello"
 */
export function runClaims(capsule: RunCapsule): RunClaims {
  const read = readJsonl(capsule.entries.get(EVENTS_ENTRY) ?? new Uint8Array());
  const events = read.events as { type: string; payload: Record<string, unknown> }[];
  const started = events[0]?.type === "run.started" ? events[0].payload : undefined;
  if (read.error !== undefined || started === undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", `the capsule's ${EVENTS_ENTRY} does not start with run.started; run \`reach-wasm verify\` on it`);
  const result = parseJson(capsule.entries.get(RESULT_ENTRY), RESULT_ENTRY);
  const calls = new Map<string, number>();
  for (const e of events) {
    if (e.type === "tool.invoked") calls.set(String(e.payload["toolName"]), (calls.get(String(e.payload["toolName"])) ?? 0) + 1);
  }
  return {
    runHash: capsule.index.runHash,
    runId: capsule.index.runId,
    status: String(result["status"]),
    pack: { id: String(started["packId"]), version: String(started["packVersion"]), digest: String(started["packDigest"]) },
    planHash: typeof started["planHash"] === "string" ? started["planHash"] : null,
    tools: [...calls].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, n]) => ({ name, calls: n })),
    capabilityAudit: result["capabilityAudit"] ?? null,
  };
}

/** What {@link attestCapsule} needs. */
export type AttestInput = {
  /** The capsule file's bytes (the subject's digest). */
  bytes: Uint8Array;
  /** The capsule read from those bytes. */
  capsule: RunCapsule;
  /** The subject's name: the capsule file's name. */
  name: string;
  /** The signer's 32-byte Ed25519 seed. */
  privateKey: Uint8Array;
  /** The reach-wasm version that writes the attestation. */
  producerVersion: string;
};

/**
 * The in-toto Statement of a capsule, signed into a DSSE envelope.
 * @param input the capsule, its bytes and name, the key
 * @returns the envelope text (one line of JSON and a newline: also a one-line `.intoto.jsonl`), the subject and the signer
 * @example const { envelope } = attestCapsule({ bytes, capsule: readRunCapsule(bytes), name: "x.capsule.tar.gz", privateKey, producerVersion: "0.1.0" });
 */
export function attestCapsule(input: AttestInput): { envelope: string; subject: { name: string; sha256: string }; publicKey: string } {
  const publicKey = bytesToHex(publicKeyFromPrivateKey(input.privateKey));
  const predicate: RunPredicate = {
    ...runClaims(input.capsule),
    signer: { keyid: publicKey, publicKey, algorithm: "Ed25519" },
    producer: { name: "reach-wasm", version: input.producerVersion },
  };
  const subject = { name: input.name, sha256: sha256Hex(input.bytes) };
  const statement = {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [{ name: subject.name, digest: { sha256: subject.sha256 } }],
    predicateType: RUN_PREDICATE_TYPE,
    predicate,
  };
  const envelope = signEnvelope(IN_TOTO_PAYLOAD_TYPE, utf8(canonicalize(statement)), input.privateKey, publicKey);
  return { envelope: JSON.stringify(envelope) + "\n", subject, publicKey };
}

type Statement = { subject: { digest: Record<string, unknown> }[]; predicate: Record<string, unknown> };

function schemaError(message: string): ReachError {
  return new ReachError("PROTO_SCHEMA_VIOLATION", `attestation: ${message}; write one with \`reach-wasm attest CAPSULE --key FILE\``);
}

/** The statement of the (already parsed) envelope; the same bytes the signature covers. */
function readStatement(payloadType: string, payload: Uint8Array): Statement {
  if (payloadType !== IN_TOTO_PAYLOAD_TYPE) throw schemaError(`payloadType is ${JSON.stringify(payloadType)}, expected ${JSON.stringify(IN_TOTO_PAYLOAD_TYPE)}`);
  let s: Record<string, unknown>;
  try {
    s = JSON.parse(dec.decode(payload)) as Record<string, unknown>;
  } catch {
    throw schemaError("the payload is not JSON text");
  }
  if (s === null || typeof s !== "object" || Array.isArray(s)) throw schemaError("the payload is not a JSON object");
  if (s["_type"] !== IN_TOTO_STATEMENT_TYPE) throw schemaError(`_type is ${JSON.stringify(s["_type"])}, expected ${JSON.stringify(IN_TOTO_STATEMENT_TYPE)}`);
  if (s["predicateType"] !== RUN_PREDICATE_TYPE) throw schemaError(`predicateType is ${JSON.stringify(s["predicateType"])}; reach-wasm verifies ${RUN_PREDICATE_TYPE}`);
  const subject = s["subject"];
  const okSubject = (x: unknown): boolean => x !== null && typeof x === "object" && typeof (x as { digest?: unknown }).digest === "object" && (x as { digest?: unknown }).digest !== null;
  if (!Array.isArray(subject) || subject.length === 0 || !subject.every(okSubject)) throw schemaError("subject must be a non-empty array of {name, digest}");
  const predicate = s["predicate"];
  if (predicate === null || typeof predicate !== "object" || Array.isArray(predicate)) throw schemaError("predicate must be an object");
  return { subject: subject as Statement["subject"], predicate: predicate as Record<string, unknown> };
}

/** What {@link verifyAttestation} needs. */
export type VerifyAttestationInput = {
  /** The envelope file's text. */
  envelope: string;
  /** The capsule file's bytes and the capsule read from them. */
  bytes: Uint8Array;
  capsule: RunCapsule;
  /** The key the attestation must be signed by (the caller vouches for it); else the trust store decides. */
  publicKey?: Uint8Array;
  trustStore?: TrustStore;
};

/** Which candidate key verifies the envelope, and whether it counts as trusted. */
function findSigner(input: VerifyAttestationInput, verifies: (key: Uint8Array) => boolean, claimed: unknown): AttestationVerification["signer"] {
  if (input.publicKey !== undefined) return verifies(input.publicKey) ? { publicKey: bytesToHex(input.publicKey), trusted: true } : null;
  for (const k of input.trustStore?.keys ?? []) {
    if (verifies(hexToBytes(k.publicKey))) return { publicKey: k.publicKey, trusted: true, keyName: k.name };
  }
  if (typeof claimed === "string" && /^[0-9a-f]{64}$/.test(claimed) && verifies(hexToBytes(claimed))) return { publicKey: claimed, trusted: false };
  return null;
}

/**
 * Verify an attestation of a capsule.
 * @param input the envelope text, the capsule, and the key or trust store that decides who may sign
 * @returns every check; valid when all pass
 * @throws ReachError `PROTO_SCHEMA_VIOLATION` when the text is not a DSSE envelope holding our in-toto statement
 * @example verifyAttestation({ envelope: text, bytes, capsule: readRunCapsule(bytes), trustStore }).valid // true
 */
export function verifyAttestation(input: VerifyAttestationInput): AttestationVerification {
  const env = parseEnvelope(input.envelope);
  const statement = readStatement(env.payloadType, env.payload);
  const claimedSigner = (statement.predicate["signer"] as { publicKey?: unknown } | undefined)?.publicKey;
  const checks: AttestationCheck[] = [];
  const add = (name: string, ok: boolean, message: string, code: ErrorCode): void => void checks.push(ok ? { name, ok, message } : { name, ok, message, code });
  const signer = findSigner(input, (key) => verifyEnvelope(env, key), claimedSigner);
  const keySource = input.publicKey !== undefined ? "the key given" : "any key in the trust store";
  add("attestation.signature", signer !== null, signer === null
    ? `no signature verifies with ${keySource} (nor with the key the predicate names): the envelope was altered or signed by another key`
    : `the DSSE signature over the statement verifies with ${signer.publicKey}`, "REPLAY_PROOF_INVALID");
  if (signer !== null) {
    const named = claimedSigner === signer.publicKey;
    add("attestation.signer", signer.trusted && named, !signer.trusted
      ? `signed by ${signer.publicKey}, which is not in the trust store: trust it (reach-wasm trust add KEY.pub) or pass --key KEY.pub`
      : named ? `signed by ${signer.keyName ?? signer.publicKey} (trusted)` : `the predicate names signer ${String(claimedSigner)}, but ${signer.publicKey} signed it`, "FED_TRUST_VIOLATION");
  }
  const digest = sha256Hex(input.bytes);
  const match = statement.subject.some((s) => s.digest["sha256"] === digest);
  add("attestation.subject", match, match ? `the subject's SHA-256 is the capsule file's (${digest})`
    : `no subject has the capsule file's SHA-256 ${digest} (the statement names ${statement.subject.map((s) => String(s.digest["sha256"])).join(", ")}): this attestation is about another file`, "REPLAY_HASH_MISMATCH");
  const claims = runClaims(input.capsule) as Record<string, unknown>;
  const wrong = Object.keys(claims).filter((k) => canonicalize(statement.predicate[k] ?? null) !== canonicalize(claims[k] ?? null));
  add("attestation.predicate", wrong.length === 0, wrong.length === 0 ? `the predicate (${RUN_PREDICATE_TYPE}) matches the capsule: run hash ${input.capsule.index.runHash}`
    : `the predicate's ${wrong.join(", ")} ${wrong.length === 1 ? "differs" : "differ"} from the capsule's (e.g. ${wrong[0]}: ${canonicalize(claims[wrong[0]!] ?? null).slice(0, 120)})`, "REPLAY_HASH_MISMATCH");
  return { valid: checks.every((c) => c.ok), checks, signer };
}
