import { describe, expect, it } from "vitest";
import { bytesToHex, hexToBytes } from "../canonical/hex.ts";
import { canonicalize } from "../canonical/jcs.ts";
import { sha256Hex, utf8 } from "../canonical/sha256.ts";
import { ReachError } from "../protocol/errors.ts";
import { generateKeyPair } from "./keys.ts";
import {
  formatProof,
  parseProof,
  runProofMessage,
  signProof,
  signRunProof,
  signStepProof,
  stepProofMessage,
  verifyProof,
  verifyRunProof,
  verifyStepProof,
} from "./proofs.ts";
import type { ProofDocument, ProofExpectations, StepProofStatement } from "./proofs.ts";
import { TrustStore } from "./trust-store.ts";
import { verifyEd25519 } from "./verify.ts";

const signer = generateKeyPair(new Uint8Array(32).fill(9));
const other = generateKeyPair(new Uint8Array(32).fill(10));
const events = Array.from({ length: 8 }, (_, i) => sha256Hex(`event ${i}`));
const runHash = sha256Hex(events.join(""));
const capsuleIndexDigest = sha256Hex("capsule.json");
const steps: StepProofStatement[] = [
  { stepId: "fetch", firstEventIndex: 1, lastEventIndex: 3, firstEventHash: events[1]!, lastEventHash: events[3]! },
  { stepId: "write.out", firstEventIndex: 4, lastEventIndex: 6, firstEventHash: events[4]!, lastEventHash: events[6]! },
];
const doc = signProof({ runHash, capsuleIndexDigest, steps }, signer.privateKey);
const expect_ = { runHash, capsuleIndexDigest, eventHashes: events };
const failed = (doc_: ProofDocument, e: ProofExpectations = expect_) =>
  verifyProof(doc_, e).checks.filter((c) => !c.ok).map((c) => c.name);

describe("signed messages", () => {
  it("the run proof signs JCS({type, runHash, capsuleIndexDigest})", () => {
    const message = utf8(canonicalize({ type: "reach-wasm/run-proof", runHash, capsuleIndexDigest }));
    expect(runProofMessage({ runHash, capsuleIndexDigest })).toEqual(message);
    expect(verifyEd25519(hexToBytes(doc.run.signature), message, signer.publicKey)).toBe(true);
  });
  it("a step proof signs JCS({type, runHash, stepId, first/last index and hash})", () => {
    const message = utf8(canonicalize({ type: "reach-wasm/step-proof", runHash, ...steps[0]! }));
    expect(stepProofMessage(runHash, steps[0]!)).toEqual(message);
    expect(verifyEd25519(hexToBytes(doc.steps[0]!.signature), message, signer.publicKey)).toBe(true);
  });
  it("refuses malformed statements with a TypeError", () => {
    expect(() => runProofMessage({ runHash: "abc", capsuleIndexDigest })).toThrow(/runHash/);
    expect(() => stepProofMessage("x", steps[0]!)).toThrow(TypeError);
    expect(() => stepProofMessage(runHash, { ...steps[0]!, lastEventIndex: 0 })).toThrow(/lastEventIndex/);
    expect(() => stepProofMessage(runHash, { ...steps[0]!, stepId: "a b" })).toThrow(TypeError);
    expect(() => stepProofMessage(runHash, { ...steps[0]!, firstEventIndex: -1 })).toThrow(TypeError);
    expect(() => signRunProof({ runHash, capsuleIndexDigest, extra: 1 } as never, signer.privateKey)).toThrow(
      /unknown field/,
    );
  });
});

describe("proof.json", () => {
  it("has the documented shape, is canonical JSON and round-trips", () => {
    expect(Object.keys(doc)).toEqual(["version", "publicKey", "run", "steps"]);
    expect(doc.publicKey).toBe(bytesToHex(signer.publicKey));
    expect(doc.run).toEqual({ runHash, capsuleIndexDigest, signature: expect.stringMatching(/^[0-9a-f]{128}$/) });
    const text = formatProof(doc);
    expect(text).toBe(canonicalize(JSON.parse(text)));
    expect(parseProof(text)).toEqual(doc);
    expect(parseProof(utf8(text))).toEqual(doc);
    expect(signProof({ runHash, capsuleIndexDigest, steps }, signer.privateKey)).toEqual(doc);
  });
  const bad: [string, unknown, RegExp][] = [
    ["non-JSON", "{", /not valid JSON/],
    ["non-UTF-8", new Uint8Array([0xc3]), /not UTF-8/],
    ["a wrong version", { ...doc, version: 2 }, /version 1 only/],
    ["an unknown field", { ...doc, algorithm: "Ed25519" }, /unknown field "algorithm"/],
    ["an unknown run field", { ...doc, run: { ...doc.run, at: 1 } }, /proof.json run: unknown field "at"/],
    ["a base64 key", { ...doc, publicKey: "A".repeat(43) + "=" }, /at publicKey/],
    [
      "an uppercase signature",
      { ...doc, run: { ...doc.run, signature: doc.run.signature.toUpperCase() } },
      /128 lowercase hex/,
    ],
    [
      "an inverted range",
      { ...doc, steps: [{ ...doc.steps[0]!, firstEventIndex: 5 }] },
      /lastEventIndex must not be below/,
    ],
    [
      "a fractional index",
      { ...doc, steps: [{ ...doc.steps[0]!, lastEventIndex: 3.5 }] },
      /at steps\[0\]\.lastEventIndex/,
    ],
    ["missing steps", { version: 1, publicKey: doc.publicKey, run: doc.run }, /at steps/],
  ];
  it.each(bad)("parseProof refuses %s with REPLAY_PROOF_INVALID", (_name, input, message) => {
    try {
      parseProof(input);
      throw new Error("not refused");
    } catch (err) {
      expect(err).toBeInstanceOf(ReachError);
      expect((err as ReachError).code).toBe("REPLAY_PROOF_INVALID");
      expect((err as Error).message).toMatch(message);
    }
  });
});

describe("verification", () => {
  it("passes every check for an untampered proof", () => {
    const result = verifyProof(doc, expect_);
    expect(result.valid).toBe(true);
    expect(result.checks.map((c) => c.name)).toEqual([
      "proof.publicKey",
      "proof.run.runHash",
      "proof.run.capsuleIndexDigest",
      "proof.run.signature",
      "proof.steps[0].signature",
      "proof.steps[0].events",
      "proof.steps[1].signature",
      "proof.steps[1].events",
    ]);
    expect(result.trusted).toBe(false);
    expect(verifyRunProof(doc.run, signer.publicKey).ok).toBe(true);
    expect(verifyStepProof(runHash, doc.steps[1]!, doc.publicKey, 1)).toMatchObject({
      name: "proof.steps[1].signature",
      ok: true,
    });
  });
  it("reports trust from a trust store", () => {
    const store = new TrustStore({ version: 1, keys: [{ publicKey: doc.publicKey, name: "ci" }] });
    expect(verifyProof(doc, { trustStore: store })).toMatchObject({ valid: true, trusted: true, keyName: "ci" });
  });
  it("names the run signature when the run hash or capsule digest was changed in the proof", () => {
    expect(failed({ ...doc, run: { ...doc.run, runHash: events[0]! } }, {})).toEqual([
      "proof.run.signature",
      "proof.steps[0].signature",
      "proof.steps[1].signature",
    ]);
    expect(failed({ ...doc, run: { ...doc.run, capsuleIndexDigest: events[0]! } })).toEqual([
      "proof.run.capsuleIndexDigest",
      "proof.run.signature",
    ]);
  });
  it("names a proof that belongs to another run or capsule", () => {
    expect(failed(doc, { ...expect_, runHash: events[0]! })).toEqual(["proof.run.runHash"]);
    const r = verifyProof(doc, { capsuleIndexDigest: events[0]! });
    expect(r.checks.find((c) => !c.ok)?.message).toMatch(/capsuleIndexDigest is .*, expected/);
  });
  it("names a tampered step", () => {
    const changed = {
      ...doc,
      steps: [doc.steps[0]!, { ...doc.steps[1]!, lastEventIndex: 7, lastEventHash: events[7]! }],
    };
    expect(failed(changed)).toEqual(["proof.steps[1].signature"]);
    const renamed = { ...doc, steps: [{ ...doc.steps[0]!, stepId: "other" }, doc.steps[1]!] };
    expect(failed(renamed)).toEqual(["proof.steps[0].signature"]);
  });
  it("names a step whose events are not the run's (e.g. a step proof moved from another run)", () => {
    const foreign = signStepProof(runHash, { ...steps[0]!, firstEventHash: sha256Hex("elsewhere") }, signer.privateKey);
    expect(failed({ ...doc, steps: [foreign, doc.steps[1]!] })).toEqual(["proof.steps[0].events"]);
    const beyond = signStepProof(
      runHash,
      { ...steps[1]!, lastEventIndex: 9, lastEventHash: events[6]! },
      signer.privateKey,
    );
    const r = verifyProof({ ...doc, steps: [beyond] }, expect_);
    expect(r.checks.find((c) => !c.ok)?.message).toMatch(/the run has only 8 events/);
  });
  it("a step proof from another run does not verify here", () => {
    const elsewhere = signStepProof(sha256Hex("other run"), steps[0]!, signer.privateKey);
    expect(verifyStepProof(runHash, elsewhere, signer.publicKey).ok).toBe(false);
  });
  it("names every signature when the proof was re-keyed or made by another key", () => {
    const rekeyed = { ...doc, publicKey: bytesToHex(other.publicKey) };
    expect(failed(rekeyed)).toEqual(["proof.run.signature", "proof.steps[0].signature", "proof.steps[1].signature"]);
    const r = verifyRunProof(doc.run, other.publicKey);
    expect(r).toMatchObject({ ok: false, name: "proof.run.signature" });
    expect(r.message).toMatch(/does not verify with public key/);
  });
  it("fails (does not throw) on a small-order key or malformed data given directly", () => {
    const identity = "01" + "00".repeat(31);
    expect(failed({ ...doc, publicKey: identity })[0]).toBe("proof.publicKey");
    expect(verifyRunProof({ ...doc.run, signature: "zz" }, signer.publicKey).message).toMatch(/128 lowercase hex/);
    expect(verifyRunProof({ ...doc.run, runHash: "nope" }, signer.publicKey).ok).toBe(false);
    expect(verifyStepProof(runHash, doc.steps[0]!, "nothex").ok).toBe(false);
  });
});
