// in-toto attestations of capsules (`reach-wasm attest`, `verify --attestation`): a DSSE envelope of an in-toto
// Statement v1, checked by code nobody here wrote — sigstore's JS verifier (@sigstore/core, @sigstore/bundle,
// @sigstore/verify, devDependencies) — and our DSSE encoding checked against the DSSE specification's published test
// vector (secure-systems-lab/dsse protocol.md "Test Vectors": an ECDSA P-256 signature, checked with WebCrypto).
// The capsules are the committed conformance ones (read, never written); the Deno CLI attests and verifies once.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crypto as sigstoreCrypto, dsse as sigstoreDsse } from "@sigstore/core";
import { bundleFromJSON, envelopeFromJSON } from "@sigstore/bundle";
import { toSignedEntity, toTrustMaterial, Verifier } from "@sigstore/verify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { attestCapsule, IN_TOTO_STATEMENT_TYPE, RUN_PREDICATE_TYPE, verifyAttestation } from "../src/engine/attestation.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { bytesToHex } from "../src/canonical/hex.ts";
import { canonicalize } from "../src/canonical/jcs.ts";
import { IN_TOTO_PAYLOAD_TYPE, parseEnvelope, preAuthEncoding, signEnvelope, verifyEnvelope } from "../src/trust/dsse.ts";
import { formatKeyFiles, generateKeyPair } from "../src/trust/keys.ts";
import { TrustStore } from "../src/trust/trust-store.ts";
import { ReachError } from "../src/protocol/errors.ts";
import { cliRuntimes } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-attest-"));
const capsuleOf = (folder: string): string => join(root, "conformance/capsules", folder, readdirSync(join(root, "conformance/capsules", folder))[0]!);
const NOTES = capsuleOf("notes-signed");
const HELLO = capsuleOf("hello");
const pair = generateKeyPair(new Uint8Array(32).fill(7));
const other = generateKeyPair(new Uint8Array(32).fill(9));
const hex = bytesToHex(pair.publicKey);
const keyFile = join(scratch, "me.key");
writeFileSync(keyFile, formatKeyFiles(pair).privateKeyFile, { mode: 0o600 });
writeFileSync(`${keyFile}.pub`, formatKeyFiles(pair).publicKeyFile);
const trustFile = join(scratch, "trust.json");
writeFileSync(trustFile, JSON.stringify({ version: 1, keys: [{ publicKey: hex, name: "release" }] }));
const cli = cliRuntimes(scratch);
beforeAll(() => cli.setup(), 120_000);
afterAll(() => {
  cli.remove();
  rmSync(scratch, { recursive: true, force: true });
});

const enc = new TextEncoder();
const dec = new TextDecoder();
const attest = (file: string, key = pair.privateKey) => {
  const bytes = new Uint8Array(readFileSync(file));
  return { bytes, capsule: readRunCapsule(bytes), ...attestCapsule({ bytes, capsule: readRunCapsule(bytes), name: file.split("/").pop()!, privateKey: key, producerVersion: "0.1.0" }) };
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed statement, edited freely by the tests
type Doc = Record<string, any>;
const statementOf = (envelope: string) => JSON.parse(dec.decode(parseEnvelope(envelope).payload)) as Doc;
/** A statement re-signed after `edit`: a validly signed attestation that says something else. */
const resigned = (envelope: string, edit: (s: Doc) => void): string => {
  const s = statementOf(envelope);
  edit(s);
  return JSON.stringify(signEnvelope(IN_TOTO_PAYLOAD_TYPE, enc.encode(canonicalize(s)), pair.privateKey, hex));
};

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe("DSSE against the specification's published test vector", () => {
  // protocol.md "Test Vectors": SERIALIZED_BODY, PAYLOAD_TYPE, PAE, the P-256 public point and the resulting envelope.
  const TYPE = "http://example.com/HelloWorld";
  const PAE = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
  const X = 46950820868899156662930047687818585632848591499744589407958293238635476079160n;
  const Y = 5640078356564379163099075877009565129882514886557779369047442380624545832820n;
  const ENVELOPE = '{"payload": "aGVsbG8gd29ybGQ=", "payloadType": "http://example.com/HelloWorld", "signatures": [{"sig": "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA=="}]}';
  const b64url = (n: bigint) => Buffer.from(n.toString(16).padStart(64, "0"), "hex").toString("base64url");
  const p256 = () => crypto.subtle.importKey("jwk", { kty: "EC", crv: "P-256", x: b64url(X), y: b64url(Y) }, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);

  it("our PAE of the vector is the published PAE, and the published signature verifies over our PAE", async () => {
    const env = parseEnvelope(ENVELOPE);
    expect(env.payloadType).toBe(TYPE);
    expect(dec.decode(env.payload)).toBe("hello world");
    expect(env.signatures).toHaveLength(1);
    expect(env.signatures[0]!.keyid).toBe("");
    const pae = preAuthEncoding(env.payloadType, env.payload);
    expect(dec.decode(pae)).toBe(PAE);
    const ok = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, await p256(), new Uint8Array(env.signatures[0]!.sig), new Uint8Array(pae));
    expect(ok).toBe(true);
    // a one-byte change of what we encode no longer verifies: the check is real
    const bad = preAuthEncoding(env.payloadType, enc.encode("hello world!"));
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, await p256(), new Uint8Array(env.signatures[0]!.sig), new Uint8Array(bad))).toBe(false);
  });

  it("reads the URL-safe and unpadded base64 the envelope allows to the same bytes", () => {
    const std = parseEnvelope(ENVELOPE);
    const doc = JSON.parse(ENVELOPE);
    doc.payload = "aGVsbG8gd29ybGQ";
    doc.signatures[0].sig = doc.signatures[0].sig.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    doc.extra = "unknown fields are ignored";
    const url = parseEnvelope(JSON.stringify(doc));
    expect(url.payload).toEqual(std.payload);
    expect(url.signatures[0]!.sig).toEqual(std.signatures[0]!.sig);
  });

  it("PAE counts bytes, not characters", () => {
    expect(dec.decode(preAuthEncoding("é", enc.encode("ü")))).toBe("DSSEv1 2 é 2 ü");
    expect(dec.decode(preAuthEncoding("", new Uint8Array()))).toBe("DSSEv1 0  0 ");
  });
});

describe("reach-wasm attestations, verified by sigstore's JS packages", () => {
  it("the envelope is an in-toto Statement v1 about the capsule file, with our predicate", () => {
    const a = attest(NOTES);
    const env = JSON.parse(a.envelope);
    expect(env.payloadType).toBe("application/vnd.in-toto+json");
    const s = statementOf(a.envelope);
    expect(s._type).toBe(IN_TOTO_STATEMENT_TYPE);
    expect(s.subject).toEqual([{ name: NOTES.split("/").pop(), digest: { sha256: a.subject.sha256 } }]);
    expect(s.predicateType).toBe(RUN_PREDICATE_TYPE);
    const p = s.predicate;
    expect(p.runHash).toBe(a.capsule.index.runHash);
    expect(p.status).toBe("COMPLETED");
    expect(p.pack).toEqual({ id: "notes", version: "1.0.0", digest: "3b2141d6d97e98d37f1e384be3e9cea9e3f1cf24ba849e1a6fd2a9553ace31cb" });
    expect(p.tools.map((t: { name: string }) => t.name)).toEqual(["checksum", "index-notes", "save-note", "slugify", "stats"]);
    expect(p.capabilityAudit.tools.used).toContain("save-note");
    expect(p.signer).toEqual({ keyid: hex, publicKey: hex, algorithm: "Ed25519" });
    // attesting twice gives the same bytes (no clock, Ed25519 is deterministic)
    expect(attest(NOTES).envelope).toBe(a.envelope);
  });

  it("@sigstore/core: its PAE is ours and its verify accepts our signature (and refuses a changed payload)", () => {
    const a = attest(NOTES);
    const env = envelopeFromJSON(JSON.parse(a.envelope));
    const ours = parseEnvelope(a.envelope);
    const pae = sigstoreDsse.preAuthEncoding(env.payloadType, env.payload);
    expect(Buffer.compare(pae, Buffer.from(preAuthEncoding(ours.payloadType, ours.payload)))).toBe(0);
    const spki = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(pair.publicKey)]);
    const key = sigstoreCrypto.createPublicKey(spki, "spki");
    expect(sigstoreCrypto.verify(pae, key, env.signatures[0]!.sig)).toBe(true);
    const changed = sigstoreDsse.preAuthEncoding(env.payloadType, Buffer.concat([env.payload, Buffer.from(" ")]));
    expect(sigstoreCrypto.verify(changed, key, env.signatures[0]!.sig)).toBe(false);
  });

  it("@sigstore/verify: the full Verifier accepts our envelope with a key-only trust root, and refuses it tampered or under another key", () => {
    const a = attest(NOTES);
    const spkiOf = (pub: Uint8Array) => Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(pub)]);
    const verifierFor = (pub: Uint8Array) => new Verifier(toTrustMaterial(
      { mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1", tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] } as never,
      { [hex]: { rawBytes: spkiOf(pub), keyDetails: 7 /* PKIX_ED25519 */, validFor: undefined } } as never,
    ), { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
    const bundleOf = (envelope: unknown) => toSignedEntity(bundleFromJSON({
      mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
      verificationMaterial: { publicKey: { hint: hex }, tlogEntries: [], timestampVerificationData: { rfc3161Timestamps: [] } },
      dsseEnvelope: envelope,
    }));
    const env = JSON.parse(a.envelope);
    const signer = verifierFor(pair.publicKey).verify(bundleOf(env));
    expect(signer.key).toBeDefined();
    const tampered = { ...env, payload: Buffer.from(canonicalize({ ...statementOf(a.envelope), predicate: { ...statementOf(a.envelope).predicate, status: "FAILED" } })).toString("base64") };
    expect(() => verifierFor(pair.publicKey).verify(bundleOf(tampered))).toThrow(/signature/i);
    expect(() => verifierFor(other.publicKey).verify(bundleOf(env))).toThrow(/signature/i);
  });
});

describe("verifyAttestation: each failure has its check and code", () => {
  const a = attest(NOTES);
  const store = new TrustStore({ version: 1, keys: [{ publicKey: hex, name: "release" }] });
  const failed = (v: ReturnType<typeof verifyAttestation>) => v.checks.filter((c) => !c.ok).map((c) => `${c.name} ${c.code}`);

  it("passes with the trust store or the explicit key, naming the trusted signer", () => {
    const v = verifyAttestation({ envelope: a.envelope, bytes: a.bytes, capsule: a.capsule, trustStore: store });
    expect(failed(v)).toEqual([]);
    expect(v.valid).toBe(true);
    expect(v.signer).toEqual({ publicKey: hex, trusted: true, keyName: "release" });
    expect(verifyAttestation({ envelope: a.envelope, bytes: a.bytes, capsule: a.capsule, publicKey: pair.publicKey }).valid).toBe(true);
    expect(verifyEnvelope(parseEnvelope(a.envelope), pair.publicKey)).toBe(true);
  });

  it("a signer outside the trust store: FED_TRUST_VIOLATION; the wrong explicit key: REPLAY_PROOF_INVALID", () => {
    expect(failed(verifyAttestation({ envelope: a.envelope, bytes: a.bytes, capsule: a.capsule }))).toEqual(["attestation.signer FED_TRUST_VIOLATION"]);
    expect(failed(verifyAttestation({ envelope: a.envelope, bytes: a.bytes, capsule: a.capsule, publicKey: other.publicKey }))).toEqual(["attestation.signature REPLAY_PROOF_INVALID"]);
  });

  it("a changed payload under the old signature: REPLAY_PROOF_INVALID", () => {
    const env = JSON.parse(a.envelope);
    env.payload = Buffer.from(canonicalize({ ...statementOf(a.envelope), predicateType: RUN_PREDICATE_TYPE, subject: [{ name: "x", digest: { sha256: "0".repeat(64) } }] })).toString("base64");
    const v = verifyAttestation({ envelope: JSON.stringify(env), bytes: a.bytes, capsule: a.capsule, trustStore: store });
    expect(failed(v)).toEqual(["attestation.signature REPLAY_PROOF_INVALID", "attestation.subject REPLAY_HASH_MISMATCH"]);
  });

  it("another capsule's bytes: the subject and the predicate do not match (REPLAY_HASH_MISMATCH)", () => {
    const hello = new Uint8Array(readFileSync(HELLO));
    const v = verifyAttestation({ envelope: a.envelope, bytes: hello, capsule: readRunCapsule(hello), trustStore: store });
    expect(failed(v)).toEqual(["attestation.subject REPLAY_HASH_MISMATCH", "attestation.predicate REPLAY_HASH_MISMATCH"]);
    expect(v.checks.find((c) => c.name === "attestation.predicate")!.message).toMatch(/runHash/);
  });

  it("a validly signed predicate that lies about the capsule: REPLAY_HASH_MISMATCH naming each field", () => {
    for (const [field, edit] of [
      ["status", (s: Doc) => void (s.predicate.status = "FAILED")],
      ["pack", (s: Doc) => void (s.predicate.pack.version = "9.9.9")],
      ["tools", (s: Doc) => void s.predicate.tools.pop()],
      ["capabilityAudit", (s: Doc) => void (s.predicate.capabilityAudit.hosts.contacted = ["evil.example"])],
      ["runHash", (s: Doc) => void (s.predicate.runHash = "0".repeat(64))],
    ] as const) {
      const v = verifyAttestation({ envelope: resigned(a.envelope, edit), bytes: a.bytes, capsule: a.capsule, trustStore: store });
      expect(failed(v), field).toEqual(["attestation.predicate REPLAY_HASH_MISMATCH"]);
      expect(v.checks.find((c) => !c.ok)!.message).toContain(field);
    }
    const wrongSigner = resigned(a.envelope, (s) => void (s.predicate.signer.publicKey = bytesToHex(other.publicKey)));
    expect(failed(verifyAttestation({ envelope: wrongSigner, bytes: a.bytes, capsule: a.capsule, trustStore: store }))).toEqual(["attestation.signer FED_TRUST_VIOLATION"]);
  });

  it("what is not our in-toto envelope is refused with PROTO_SCHEMA_VIOLATION", () => {
    const cases = [
      "not json",
      "[]",
      JSON.stringify({ payloadType: IN_TOTO_PAYLOAD_TYPE, signatures: [] }),
      JSON.stringify({ ...JSON.parse(a.envelope), signatures: [] }),
      JSON.stringify({ ...JSON.parse(a.envelope), payload: "%%%" }),
      JSON.stringify({ ...JSON.parse(a.envelope), payloadType: "application/json" }),
      resigned(a.envelope, (s) => void (s._type = "https://in-toto.io/Statement/v0.1")),
      resigned(a.envelope, (s) => void (s.predicateType = "https://slsa.dev/provenance/v1")),
      resigned(a.envelope, (s) => void (s.subject = [])),
    ];
    for (const envelope of cases) {
      let err: unknown;
      try {
        verifyAttestation({ envelope, bytes: a.bytes, capsule: a.capsule, trustStore: store });
      } catch (e) {
        err = e;
      }
      expect(err, envelope.slice(0, 60)).toBeInstanceOf(ReachError);
      expect((err as ReachError).code).toBe("PROTO_SCHEMA_VIOLATION");
    }
  });
});

describe("reach-wasm attest / verify --attestation (CLI)", () => {
  it("attest writes the envelope beside the capsule; verify --attestation passes with --trust or --key, fails (exit 1) otherwise", async () => {
    const capsule = join(scratch, "notes.capsule.tar.gz");
    writeFileSync(capsule, readFileSync(NOTES));
    const w = await run(["attest", capsule, "--key", keyFile, "--json"]);
    expect(w.code, w.stderr).toBe(0);
    const out = JSON.parse(w.stdout);
    expect(out.out).toBe(join(scratch, "notes.intoto.json"));
    expect(out.runHash).toBe(readRunCapsule(new Uint8Array(readFileSync(NOTES))).index.runHash);
    const withTrust = await run(["verify", capsule, "--attestation", out.out, "--trust", trustFile, "--json"]);
    expect(withTrust.code, withTrust.stderr).toBe(0);
    expect(JSON.parse(withTrust.stdout).attestation.signer).toEqual({ publicKey: hex, trusted: true, keyName: "release" });
    expect((await run(["verify", capsule, "--attestation", out.out, "--key", `${keyFile}.pub`])).code).toBe(0);
    expect((await run(["verify", capsule, "--attestation", out.out, "--key", hex])).code).toBe(0);
    const untrusted = await run(["verify", capsule, "--attestation", out.out, "--json"]);
    expect(untrusted.code).toBe(1);
    expect(JSON.parse(untrusted.stdout).checks.find((c: { ok: boolean }) => !c.ok)).toMatchObject({ name: "attestation.signer", code: "FED_TRUST_VIOLATION" });
    const otherCapsule = await run(["verify", HELLO, "--attestation", out.out, "--trust", trustFile]);
    expect(otherCapsule.code).toBe(1);
    expect(otherCapsule.stderr).toMatch(/FAIL attestation\.subject/);
  });

  it("refuses: a damaged capsule (nothing written), a private key as --key, --key without --attestation, a non-envelope", async () => {
    const damaged = join(scratch, "damaged.capsule.tar.gz");
    const bytes = new Uint8Array(readFileSync(HELLO));
    const { readArchive, writeArchive } = await import("../src/capsule/archive.ts");
    const entries = readArchive(bytes);
    entries.set("result.json", enc.encode(dec.decode(entries.get("result.json")!).replace("COMPLETED", "FAILED")));
    writeFileSync(damaged, writeArchive([...entries].map(([path, b]) => ({ path, bytes: b }))));
    const r = await run(["attest", damaged, "--key", keyFile, "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe("REPLAY_CAPSULE_INVALID");
    expect(existsSync(join(scratch, "damaged.intoto.json"))).toBe(false);
    expect((await run(["attest", HELLO, "--key", keyFile, "--out", HELLO])).code).toBe(2);
    const envelope = join(scratch, "hello.intoto.json");
    expect((await run(["attest", HELLO, "--key", keyFile, "--out", envelope])).code).toBe(0);
    const priv = await run(["verify", HELLO, "--attestation", envelope, "--key", keyFile]);
    expect(priv.code).toBe(2);
    expect(priv.stderr).toMatch(/PRIVATE key file/);
    expect((await run(["verify", HELLO, "--key", `${keyFile}.pub`])).code).toBe(2);
    const junk = join(scratch, "junk.json");
    writeFileSync(junk, '{"payload":"aGk=","payloadType":"text/plain","signatures":[{"sig":"AA=="}]}');
    const j = await run(["verify", HELLO, "--attestation", junk, "--json"]);
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout).error.code).toBe("PROTO_SCHEMA_VIOLATION");
  });

  it("on Deno, the CLI attests and verifies the same bytes as on Node", () => {
    const deno = cli.runtimes.find(([name]) => name === "deno")![1];
    const capsule = join(scratch, "deno.capsule.tar.gz");
    writeFileSync(capsule, readFileSync(NOTES));
    const env = { ...process.env, NO_COLOR: "1" };
    const w = spawnSync(deno[0]!, [...deno.slice(1), "attest", capsule, "--key", keyFile], { cwd: scratch, encoding: "utf8", env });
    expect(w.status, w.stderr).toBe(0);
    expect(readFileSync(join(scratch, "deno.intoto.json"), "utf8")).toBe(attest(capsule).envelope);
    const v = spawnSync(deno[0]!, [...deno.slice(1), "verify", capsule, "--attestation", join(scratch, "deno.intoto.json"), "--trust", trustFile, "--json"], { cwd: scratch, encoding: "utf8", env });
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout).checks.filter((c: { name: string; ok: boolean }) => c.name.startsWith("attestation.") && c.ok)).toHaveLength(4);
  });
});
