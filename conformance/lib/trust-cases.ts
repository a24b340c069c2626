/**
 * Trust conformance cases (seed 003 §5.4, §8.3): strict Ed25519 against every Wycheproof result and
 * the RFC 8032 §7.1 known answers, and known-answer key files, pack signatures and proofs from a fixed seed, so that
 * Node and Deno are seen to produce the same bytes. Runtime-neutral: file access comes from the runner's
 * `ConformanceIO`.
 * @module
 */
import { bytesToHex, hexToBytes } from "../../src/canonical/hex.ts";
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { ReachError } from "../../src/protocol/errors.ts";
import { formatKeyFiles, generateKeyPair, parsePrivateKeyFile } from "../../src/trust/keys.ts";
import {
  formatPackSignature,
  PACK_SIGNATURE_PATH,
  signPack,
  verifyPackSignature,
} from "../../src/trust/pack-signature.ts";
import { formatProof, parseProof, signProof, verifyProof } from "../../src/trust/proofs.ts";
import { publicKeyFromPrivateKey, signEd25519, verifyEd25519 } from "../../src/trust/verify.ts";
import { check } from "./types.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";

/** Where the Wycheproof file lives under `conformance/`. */
export const WYCHEPROOF_ED25519 = "vectors/wycheproof/ed25519_test.json";

type WycheproofTest = { tcId: number; comment: string; flags: string[]; msg: string; sig: string; result: string };
type WycheproofFile = { numberOfTests: number; testGroups: { publicKey: { pk: string }; tests: WycheproofTest[] }[] };

/** One Wycheproof verdict: what the file says and what reach-wasm decided. */
export type WycheproofVerdict = { tcId: number; flags: string[]; result: string; accepted: boolean };

/**
 * Run reach-wasm's verifier over every Wycheproof Ed25519 test.
 * @param io file access rooted at `conformance/`
 * @returns one verdict per test, in file order
 */
export function wycheproofVerdicts(io: ConformanceIO): WycheproofVerdict[] {
  const file = JSON.parse(io.readText(WYCHEPROOF_ED25519)) as WycheproofFile;
  const out: WycheproofVerdict[] = [];
  for (const group of file.testGroups) {
    const pk = hexToBytes(group.publicKey.pk);
    for (const t of group.tests) {
      out.push({
        tcId: t.tcId,
        flags: t.flags,
        result: t.result,
        accepted: verifyEd25519(hexToBytes(t.sig), hexToBytes(t.msg), pk),
      });
    }
  }
  check(out.length === file.numberOfTests, `wycheproof: read ${out.length} tests, the file says ${file.numberOfTests}`);
  return out;
}

/**
 * Whether a verdict agrees with Wycheproof: `valid` must be accepted; `invalid` and `acceptable` must be rejected
 * (reach-wasm is strict; see `vectors/wycheproof/ORIGIN.md`).
 */
export function agrees(v: WycheproofVerdict): boolean {
  return v.result === "valid" ? v.accepted : !v.accepted;
}

/** RFC 8032 §7.1 TEST 1, 2 and 3: seed, public key, message, signature (hex). */
export const RFC8032_VECTORS: readonly { seed: string; publicKey: string; message: string; signature: string }[] = [
  {
    seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature:
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature:
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    seed: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    publicKey: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    message: "af82",
    signature:
      "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
];

/** The fixed seed of the known-answer cases: bytes 0, 1, …, 31. Never use it for anything real. */
export const TEST_SEED: Uint8Array = Uint8Array.from({ length: 32 }, (_, i) => i);

/** A small fixed pack. */
export function testPack(): Map<string, Uint8Array> {
  return new Map([
    ["reach.json", utf8('{"specVersion":"1.0.0","id":"trust-test"}\n')],
    ["tools/echo.js", utf8("export default (x) => x;\n")],
    [".reach/notes.txt", utf8("kept in the listing\n")],
  ]);
}

function expectCode(fn: () => unknown, code: string, check_: string): void {
  try {
    fn();
  } catch (err) {
    check(err instanceof ReachError && err.code === code, `expected ${code}, got ${String(err)}`);
    check(err.details["check"] === check_, `expected details.check ${check_}, got ${String(err.details["check"])}`);
    return;
  }
  throw new Error(`expected ${code} (${check_}), but nothing was thrown`);
}

/**
 * Build the trust cases.
 * @param io file access rooted at `conformance/`
 * @returns the cases; each returns a fingerprint of what it computed
 * @example for (const c of trustCases(io)) c.run()
 */
export function trustCases(io: ConformanceIO): ConformanceCase[] {
  return [
    {
      name: "trust/wycheproof-ed25519",
      run() {
        const verdicts = wycheproofVerdicts(io);
        const wrong = verdicts.filter((v) => !agrees(v)).map((v) => `${v.tcId} (${v.result}, ${v.flags.join("+")})`);
        check(wrong.length === 0, `Ed25519 verification disagrees with Wycheproof on tcId ${wrong.join(", ")}`);
        return sha256Hex(verdicts.map((v) => `${v.tcId}:${v.accepted ? 1 : 0}`).join("\n"));
      },
    },
    {
      name: "trust/rfc8032-known-answers",
      run() {
        for (const v of RFC8032_VECTORS) {
          const pk = bytesToHex(publicKeyFromPrivateKey(hexToBytes(v.seed)));
          check(pk === v.publicKey, `RFC 8032: public key of ${v.seed.slice(0, 8)}… is ${pk}`);
          const sig = bytesToHex(signEd25519(hexToBytes(v.message), hexToBytes(v.seed)));
          check(sig === v.signature, `RFC 8032: signature of "${v.message}" is ${sig}`);
          check(verifyEd25519(hexToBytes(sig), hexToBytes(v.message), hexToBytes(pk)), "RFC 8032: does not verify");
        }
        return "ok";
      },
    },
    {
      name: "trust/key-files",
      run() {
        const files = formatKeyFiles(generateKeyPair(TEST_SEED));
        const back = parsePrivateKeyFile(files.privateKeyFile);
        check(bytesToHex(back.privateKey) === bytesToHex(TEST_SEED), "key file: private key does not round-trip");
        return sha256Hex(files.privateKeyFile + files.publicKeyFile);
      },
    },
    {
      name: "trust/pack-signature",
      run() {
        const pair = generateKeyPair(TEST_SEED);
        const files = testPack();
        const doc = signPack(files, pair.privateKey, "2026-01-01T00:00:00.000Z");
        const text = formatPackSignature(doc);
        files.set(PACK_SIGNATURE_PATH, utf8(text));
        const ok = verifyPackSignature(files, files.get(PACK_SIGNATURE_PATH));
        check(ok.digest === doc.packDigest && ok.publicKey === bytesToHex(pair.publicKey), "pack: wrong verification");
        const tampered = new Map(files).set("tools/echo.js", utf8("export default () => 1;\n"));
        expectCode(() => verifyPackSignature(tampered, text), "PACK_INVALID_SIGNATURE", "files");
        expectCode(
          () =>
            verifyPackSignature(
              files,
              text.replace(doc.signature, doc.signature.replace(/^./, (c) => (c === "A" ? "B" : "A"))),
            ),
          "PACK_INVALID_SIGNATURE",
          "signature",
        );
        return sha256Hex(text);
      },
    },
    {
      name: "trust/proofs",
      run() {
        const pair = generateKeyPair(TEST_SEED);
        const h = (s: string) => sha256Hex(s);
        const events = ["e0", "e1", "e2", "e3", "e4"].map(h);
        const doc = signProof({
          runHash: h("run"),
          capsuleIndexDigest: h("capsule.json"),
          steps: [
            {
              stepId: "s1",
              firstEventIndex: 1,
              lastEventIndex: 2,
              firstEventHash: events[1]!,
              lastEventHash: events[2]!,
            },
            {
              stepId: "s2",
              firstEventIndex: 3,
              lastEventIndex: 3,
              firstEventHash: events[3]!,
              lastEventHash: events[3]!,
            },
          ],
        }, pair.privateKey);
        const text = formatProof(doc);
        const result = verifyProof(parseProof(text), {
          runHash: h("run"),
          capsuleIndexDigest: h("capsule.json"),
          eventHashes: events,
        });
        check(result.valid, `proofs: ${result.checks.filter((c) => !c.ok).map((c) => c.message).join("; ")}`);
        const bad = verifyProof(parseProof(text.replace(`"stepId":"s2"`, `"stepId":"s3"`)));
        check(
          !bad.valid && bad.checks.some((c) => c.name === "proof.steps[1].signature" && !c.ok),
          "proofs: tampering not found",
        );
        return sha256Hex(text);
      },
    },
  ];
}
