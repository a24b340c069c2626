/**
 * Run and step proofs (seed 003 §8.3: "Run Proof: signed run hash attesting to execution; Step Proofs: individual
 * step attestations; third parties can verify without re-execution"), written to a capsule's `proof.json`.
 *
 * **What is signed** (Ed25519, strict RFC 8032; each message is the UTF-8 bytes of RFC 8785 canonical JSON):
 * ```
 * run proof:  JCS({"type": "reach-wasm/run-proof", "runHash", "capsuleIndexDigest"})
 * step proof: JCS({"type": "reach-wasm/step-proof", "runHash", "stepId", "firstEventIndex", "lastEventIndex",
 *                  "firstEventHash", "lastEventHash"})
 * ```
 * `runHash`, `capsuleIndexDigest` and the event hashes are 64 lowercase hex digits; `stepId` is a plan step id;
 * event indexes are 0-based positions in `events.jsonl` with `firstEventIndex <= lastEventIndex`. The `type` field
 * separates the two kinds from each other and from pack signatures made with the same key. A step proof binds its
 * step to the run through `runHash`, and to the hash chain through its first and last event hashes (every event
 * in between is fixed by the chain).
 *
 * **proof.json**, version 1 (written as canonical JSON, seed 003 §8.2; no unknown fields):
 * ```
 * {
 *   "version": 1,
 *   "publicKey": "<64 hex: the signer's Ed25519 public key>",
 *   "run": { "runHash", "capsuleIndexDigest", "signature": "<128 hex>" },
 *   "steps": [ { "stepId", "firstEventIndex", "lastEventIndex", "firstEventHash", "lastEventHash",
 *                "signature": "<128 hex>" }, … ]
 * }
 * ```
 * Signatures and keys are hex here (like every hash in a capsule); only the upstream pack `Signature` uses base64.
 * @module
 */
import { z } from "zod";
import { bytesToHex, hexToBytes } from "../canonical/mod.ts";
import { canonicalBytes, canonicalize } from "../canonical/mod.ts";
import { issueMessage, ReachError } from "../protocol/mod.ts";
import { PlanStepSchema } from "../protocol/mod.ts";
import { hex32, HEX32_RE, hex64, HEX64_RE, parseDocument, parseJsonText, sha256Hex, strictObject } from "./_schema.ts";
import type { TrustStore } from "./trust-store.ts";
import { publicKeyFromPrivateKey, publicKeyProblem, signEd25519, verifyEd25519 } from "./verify.ts";
import { lazySchema } from "../protocol/mod.ts";

/** `type` of the run proof statement. */
export const RUN_PROOF_TYPE = "reach-wasm/run-proof";
/** `type` of the step proof statement. */
export const STEP_PROOF_TYPE = "reach-wasm/step-proof";
/** The proof.json version this code writes and reads. */
export const PROOF_VERSION = 1;

const digest = lazySchema(() => sha256Hex());
const eventIndex = lazySchema(() => z.int().min(0));

/** What a run proof attests. */
export const RunProofStatementSchema = lazySchema(() => strictObject("run proof", { runHash: digest(), capsuleIndexDigest: digest() }));
/** What a step proof attests (its `runHash` comes from the run proof). */
export const StepProofStatementSchema = lazySchema(() => strictObject("step proof", {
  stepId: PlanStepSchema().shape.id,
  firstEventIndex: eventIndex(),
  lastEventIndex: eventIndex(),
  firstEventHash: digest(),
  lastEventHash: digest(),
}).refine((s) => s.firstEventIndex <= s.lastEventIndex, {
  path: ["lastEventIndex"],
  message: "lastEventIndex must not be below firstEventIndex",
}));

/** A signed run proof. */
export const RunProofSchema = lazySchema(() => strictObject("proof.json run", {
  ...RunProofStatementSchema().shape,
  signature: hex64("an Ed25519 signature"),
}));
/** A signed step proof. */
export const StepProofSchema = lazySchema(() => strictObject("proof.json steps[]", {
  ...StepProofStatementSchema().shape,
  signature: hex64("an Ed25519 signature"),
}).refine((s) => s.firstEventIndex <= s.lastEventIndex, {
  path: ["lastEventIndex"],
  message: "lastEventIndex must not be below firstEventIndex",
}));

/** The `proof.json` document (version 1). */
export const ProofDocumentSchema = lazySchema(() => strictObject("proof.json", {
  version: z.literal(PROOF_VERSION, {
    error: `expected "version": ${PROOF_VERSION}; this reach-wasm reads proof.json of version 1 only`,
  }),
  publicKey: hex32("an Ed25519 public key"),
  run: RunProofSchema(),
  steps: z.array(StepProofSchema()),
}));

/** What a run proof attests. */
export type RunProofStatement = z.output<ReturnType<typeof RunProofStatementSchema>>;
/** What a step proof attests. */
export type StepProofStatement = z.output<ReturnType<typeof StepProofStatementSchema>>;
/** A signed run proof. */
export type RunProof = z.output<ReturnType<typeof RunProofSchema>>;
/** A signed step proof. */
export type StepProof = z.output<ReturnType<typeof StepProofSchema>>;
/** A `proof.json` document. */
export type ProofDocument = z.output<ReturnType<typeof ProofDocumentSchema>>;

/** The outcome of one check. `name` says what was checked (e.g. `proof.steps[2].signature`). */
export type ProofCheck = { name: string; ok: boolean; message: string };

/** The outcome of verifying a whole proof document. */
export type ProofVerification = {
  /** True when every check passed. */
  valid: boolean;
  /** The signer (64 lowercase hex). */
  publicKey: string;
  /** Whether the trust store lists the signer (false without one). */
  trusted: boolean;
  /** The signer's name in the trust store, when trusted. */
  keyName?: string;
  /** Every check in order; the failed ones have `ok: false` and a message naming what is wrong. */
  checks: ProofCheck[];
};

function strictParse<S extends z.ZodType>(schema: S, value: unknown, name: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ` : "") + issueMessage(i));
  throw new TypeError(`"${name}" is malformed: ${issues.join("; ")}`);
}

/**
 * The bytes a run proof signs.
 * @param statement `{runHash, capsuleIndexDigest}`
 * @returns UTF-8 of `JCS({"type": "reach-wasm/run-proof", runHash, capsuleIndexDigest})`
 * @throws TypeError when a field is not 64 lowercase hex digits or an unknown field is present
 * @example new TextDecoder().decode(runProofMessage({ runHash: a, capsuleIndexDigest: b }))
 */
export function runProofMessage(statement: RunProofStatement): Uint8Array {
  const s = strictParse(RunProofStatementSchema(), statement, "statement");
  return canonicalBytes({ type: RUN_PROOF_TYPE, runHash: s.runHash, capsuleIndexDigest: s.capsuleIndexDigest });
}

/**
 * The bytes a step proof signs.
 * @param runHash the run hash (64 lowercase hex)
 * @param step `{stepId, firstEventIndex, lastEventIndex, firstEventHash, lastEventHash}`
 * @returns UTF-8 of `JCS({"type": "reach-wasm/step-proof", runHash, …step})`
 * @throws TypeError when a field is malformed
 * @example stepProofMessage(runHash, { stepId: "s1", firstEventIndex: 2, lastEventIndex: 5, firstEventHash, lastEventHash })
 */
export function stepProofMessage(runHash: string, step: StepProofStatement): Uint8Array {
  if (typeof runHash !== "string" || !HEX32_RE.test(runHash)) {
    throw new TypeError(`"runHash" expected 64 lowercase hex digits`);
  }
  const s = strictParse(StepProofStatementSchema(), step, "step");
  return canonicalBytes({ type: STEP_PROOF_TYPE, runHash, ...s });
}

/**
 * Sign a run proof.
 * @param statement `{runHash, capsuleIndexDigest}`
 * @param privateKey the signer's 32-byte private key seed
 * @returns the statement with its `signature` (128 lowercase hex)
 * @throws TypeError / RangeError for a malformed statement or key
 * @example const run = signRunProof({ runHash, capsuleIndexDigest }, pair.privateKey);
 */
export function signRunProof(statement: RunProofStatement, privateKey: Uint8Array): RunProof {
  const message = runProofMessage(statement);
  const { runHash, capsuleIndexDigest } = statement;
  return { runHash, capsuleIndexDigest, signature: bytesToHex(signEd25519(message, privateKey)) };
}

/**
 * Sign a step proof.
 * @param runHash the run hash
 * @param step the step's id and event range
 * @param privateKey the signer's 32-byte private key seed
 * @returns the step statement with its `signature` (128 lowercase hex)
 * @throws TypeError / RangeError for a malformed statement or key
 * @example const s = signStepProof(runHash, { stepId: "s1", …range }, pair.privateKey);
 */
export function signStepProof(runHash: string, step: StepProofStatement, privateKey: Uint8Array): StepProof {
  const message = stepProofMessage(runHash, step);
  const { stepId, firstEventIndex, lastEventIndex, firstEventHash, lastEventHash } = step;
  const signature = bytesToHex(signEd25519(message, privateKey));
  return { stepId, firstEventIndex, lastEventIndex, firstEventHash, lastEventHash, signature };
}

function keyBytes(publicKey: string | Uint8Array): Uint8Array | undefined {
  if (publicKey instanceof Uint8Array) return publicKey;
  return typeof publicKey === "string" && HEX32_RE.test(publicKey) ? hexToBytes(publicKey) : undefined;
}

function checkSignature(
  name: string,
  what: string,
  signature: unknown,
  message: () => Uint8Array,
  key: string | Uint8Array,
): ProofCheck {
  const pk = keyBytes(key);
  if (pk === undefined) return { name, ok: false, message: `${what}: the public key is not 64 lowercase hex digits` };
  if (typeof signature !== "string" || !HEX64_RE.test(signature)) {
    return { name, ok: false, message: `${what}: the signature is not 128 lowercase hex digits` };
  }
  let bytes: Uint8Array;
  try {
    bytes = message();
  } catch (err) {
    return { name, ok: false, message: `${what}: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!verifyEd25519(hexToBytes(signature), bytes, pk)) {
    return { name, ok: false, message: `${what}: the signature does not verify with public key ${bytesToHex(pk)}` };
  }
  return { name, ok: true, message: `${what}: signature valid` };
}

/**
 * Verify a run proof's signature. Never throws for bad data: a malformed field is a failed check.
 * @param proof `{runHash, capsuleIndexDigest, signature}`
 * @param publicKey the signer's public key (32 bytes or 64 lowercase hex)
 * @returns the check `proof.run.signature`
 * @example verifyRunProof(doc.run, doc.publicKey).ok // true
 */
export function verifyRunProof(proof: RunProof, publicKey: string | Uint8Array): ProofCheck {
  const { runHash, capsuleIndexDigest } = proof ?? ({} as RunProof);
  return checkSignature(
    "proof.run.signature",
    "run proof",
    proof?.signature,
    () => runProofMessage({ runHash, capsuleIndexDigest }),
    publicKey,
  );
}

/**
 * Verify a step proof's signature. Never throws for bad data: a malformed field is a failed check.
 * @param runHash the run hash the step belongs to
 * @param proof the signed step proof
 * @param publicKey the signer's public key (32 bytes or 64 lowercase hex)
 * @param index the step's position in proof.json, for the check name (default 0)
 * @returns the check `proof.steps[index].signature`
 * @example verifyStepProof(doc.run.runHash, doc.steps[0]!, doc.publicKey).ok // true
 */
export function verifyStepProof(
  runHash: string,
  proof: StepProof,
  publicKey: string | Uint8Array,
  index = 0,
): ProofCheck {
  const { signature, ...step } = proof ?? ({} as StepProof);
  const label = `step proof of "${String(step.stepId)}"`;
  return checkSignature(
    `proof.steps[${index}].signature`,
    label,
    signature,
    () => stepProofMessage(runHash, step),
    publicKey,
  );
}

/**
 * Sign a whole run: the run proof and one step proof per step.
 * @param input `{runHash, capsuleIndexDigest, steps}`
 * @param privateKey the signer's 32-byte private key seed
 * @returns the proof.json document; write it with {@link formatProof}
 * @throws TypeError / RangeError for a malformed statement or key
 * @example const doc = signProof({ runHash, capsuleIndexDigest, steps }, pair.privateKey);
 */
export function signProof(
  input: RunProofStatement & { steps: readonly StepProofStatement[] },
  privateKey: Uint8Array,
): ProofDocument {
  const publicKey = bytesToHex(publicKeyFromPrivateKey(privateKey));
  const run = signRunProof({ runHash: input.runHash, capsuleIndexDigest: input.capsuleIndexDigest }, privateKey);
  const steps = input.steps.map((s) => signStepProof(input.runHash, s, privateKey));
  return { version: PROOF_VERSION, publicKey, run, steps };
}

/**
 * The text of proof.json: canonical JSON (seed 003 §8.2), no trailing newline.
 * @param doc the proof document
 * @returns canonical JSON text
 * @example formatProof(signProof(input, key)).startsWith('{"publicKey":') // true
 */
export function formatProof(doc: ProofDocument): string {
  return canonicalize(doc);
}

/**
 * Read a proof.json strictly.
 * @param input the text or UTF-8 bytes, or an already parsed JSON value
 * @returns the document
 * @throws ReachError `REPLAY_PROOF_INVALID` when it is not a valid version-1 proof document
 * @example const doc = parseProof(capsuleFiles.get("proof.json")!);
 */
export function parseProof(input: unknown): ProofDocument {
  const hint = "proof.json is written by `reach-wasm run --key FILE`; the capsule is damaged if this one is not valid";
  let value = input;
  if (value instanceof Uint8Array) {
    try {
      value = new TextDecoder("utf-8", { fatal: true }).decode(value);
    } catch (err) {
      throw new ReachError("REPLAY_PROOF_INVALID", `proof.json is not UTF-8 text; ${hint}`, { cause: err });
    }
  }
  if (typeof value === "string") value = parseJsonText(value, "REPLAY_PROOF_INVALID", "proof.json", hint);
  return parseDocument(ProofDocumentSchema(), value, "REPLAY_PROOF_INVALID", "proof.json", hint);
}

/** What to check a proof against, besides its own signatures. */
export type ProofExpectations = {
  /** The run hash recomputed from the events; checked against `run.runHash`. */
  runHash?: string;
  /** The capsule index digest recomputed from the capsule; checked against `run.capsuleIndexDigest`. */
  capsuleIndexDigest?: string;
  /** Every event hash of the run, in order; each step's index range and first/last hashes are checked against it. */
  eventHashes?: readonly string[];
  /** Decides `trusted`. */
  trustStore?: TrustStore;
};

/**
 * Verify a proof document: the public key, the run proof, every step proof, and (when given) that the proof is
 * about this run, this capsule index and these events. Never throws for bad data.
 * @param doc a parsed proof document (see {@link parseProof})
 * @param expect what the proof must match
 * @returns `valid` and every check; `checks.filter((c) => !c.ok)` names what failed
 * @example const { valid, checks } = verifyProof(parseProof(text), { runHash, eventHashes });
 */
export function verifyProof(doc: ProofDocument, expect: ProofExpectations = {}): ProofVerification {
  const checks: ProofCheck[] = [];
  const pk = HEX32_RE.test(doc.publicKey) ? hexToBytes(doc.publicKey) : new Uint8Array(0);
  const problem = publicKeyProblem(pk);
  checks.push({ name: "proof.publicKey", ok: problem === undefined, message: `public key ${problem ?? "is usable"}` });
  const equal = (name: string, label: string, expected: string | undefined, actual: string) => {
    if (expected === undefined) return;
    const ok = expected === actual;
    checks.push({ name, ok, message: ok ? `${label} matches` : `${label} is ${actual}, expected ${expected}` });
  };
  equal("proof.run.runHash", "the proof's runHash", expect.runHash, doc.run.runHash);
  equal(
    "proof.run.capsuleIndexDigest",
    "the proof's capsuleIndexDigest",
    expect.capsuleIndexDigest,
    doc.run.capsuleIndexDigest,
  );
  checks.push(verifyRunProof(doc.run, pk));
  doc.steps.forEach((step, i) => {
    checks.push(verifyStepProof(doc.run.runHash, step, pk, i));
    if (expect.eventHashes !== undefined) checks.push(checkEventRange(step, i, expect.eventHashes));
  });
  const out: ProofVerification = { valid: checks.every((c) => c.ok), publicKey: doc.publicKey, trusted: false, checks };
  const name = problem === undefined ? expect.trustStore?.nameOf(doc.publicKey) : undefined;
  if (name !== undefined) {
    out.trusted = true;
    out.keyName = name;
  }
  return out;
}

function checkEventRange(step: StepProof, i: number, hashes: readonly string[]): ProofCheck {
  const name = `proof.steps[${i}].events`;
  const label = `step "${step.stepId}" events ${step.firstEventIndex}..${step.lastEventIndex}`;
  if (step.lastEventIndex >= hashes.length) {
    return { name, ok: false, message: `${label}: the run has only ${hashes.length} events` };
  }
  for (
    const [which, index, hash] of [
      ["first", step.firstEventIndex, step.firstEventHash],
      ["last", step.lastEventIndex, step.lastEventHash],
    ] as const
  ) {
    if (hashes[index] !== hash) {
      return {
        name,
        ok: false,
        message: `${label}: the ${which} event hash is ${hashes[index]}, the proof says ${hash}`,
      };
    }
  }
  return { name, ok: true, message: `${label}: event hashes match` };
}
