import { describe, expect, it } from "vitest";
import { writeArchive } from "../capsule/archive.ts";
import { FEDERATION_ENTRY, readRunCapsule } from "../capsule/run-capsule.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { packFromDisk } from "../../tests/support/pack.ts";
import { runEngine } from "../engine/engine.ts";
import { readJsonl } from "../ledger/jsonl.ts";
import { readQuickJsEngineWasm, readPythonWasm } from "../../tests/support/platform.ts";
import type { Delegation } from "../protocol/delegation.ts";
import { ReachError } from "../protocol/errors.ts";
import { signPack } from "../trust/pack-signature.ts";
import { checkDelegatedCapsule } from "./capsule-check.ts";
import { requestDelegatedRun } from "./delegated-client.ts";
import type { DelegatedRunRequest } from "./delegated-client.ts";
import { signDelegation } from "./delegation.ts";
import { publicKeyHex } from "./identity.ts";
import { TestNetwork } from "../../tests/support/federation.ts";
import type { TestNode } from "../../tests/support/federation.ts";

const iso = (ms: number): string => new Date(ms).toISOString();
const archiveOf = (files: Map<string, Uint8Array>): Uint8Array => writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));

async function net(): Promise<{ n: TestNetwork; a: TestNode; b: TestNode; c: TestNode; ab: Delegation; bc: Delegation }> {
  const n = new TestNetwork();
  const [a, b, c] = [await n.add(1), await n.add(2), await n.add(3)];
  await n.meshAll();
  const t = n.clock.now;
  const ab = signDelegation({ delegator: a.id, delegate: b.id, scope: ["tool:wordcount", "tool:stats", "permission:network"], issuedAt: iso(t), expiresAt: iso(t + 3_600_000) }, a.self.keys.privateKey);
  const bc = signDelegation({ delegator: b.id, delegate: c.id, scope: ["tool:wordcount"], issuedAt: iso(t), expiresAt: iso(t + 1_800_000), parent: ab.delegationId }, b.self.keys.privateKey);
  return { n, a, b, c, ab, bc };
}

function request(chain: Delegation[], files = packFromDisk("hello")): DelegatedRunRequest {
  return { archive: archiveOf(files), input: { text: "one two three" }, seed: "42", approve: false, restricted: true, chain };
}

async function refusal(p: Promise<unknown>): Promise<ReachError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ReachError);
  return err as ReachError;
}

describe("delegated runs (seed 003 §6.2)", () => {
  it("C runs a pack for A under A→B→C: same run hash as a local run, annex chained on it, proof signed by C", async () => {
    const { n, a, c, ab, bc } = await net();
    const run = await requestDelegatedRun(n.client(a), c.self.identity, request([ab, bc]));
    const local = await runEngine({ quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm }, { pack: { files: packFromDisk("hello") }, input: { text: "one two three" }, seed: "42" });
    expect(run.status).toBe("COMPLETED");
    expect(run.runHash).toBe(local.runHash);
    const capsule = readRunCapsule(run.capsule.bytes);
    const v = verifyRunCapsule(capsule);
    expect(v.valid).toBe(true);
    expect(v.signer?.publicKey).toBe(publicKeyHex(c.self.identity));
    const annex = readJsonl(capsule.entries.get(FEDERATION_ENTRY)!).events as { type: string; payload: Record<string, unknown>; prevEventHash: string }[];
    expect(annex.map((e) => e.type)).toEqual(["federation.delegation", "federation.delegation", "capsule.sync"]);
    expect(annex[0]!.prevEventHash).toBe(local.runHash);
    expect(annex[1]!.payload).toEqual({ delegator: ab.delegate, delegate: c.id, scope: ["tool:wordcount"], expiresAt: bc.expiresAt });
    expect(annex[2]!.payload["peer"]).toBe(a.id);
    expect([...run.files.keys()].sort()).toEqual([...local.files.keys()].sort());
  });

  it("refuses a pack that declares more than the delegated scope with POLICY_VIOLATION, before running it", async () => {
    const { n, a, c } = await net();
    const t = n.clock.now;
    const narrow = signDelegation({ delegator: a.id, delegate: c.id, scope: ["tool:stats"], issuedAt: iso(t), expiresAt: iso(t + 60_000) }, a.self.keys.privateKey);
    const err = await refusal(requestDelegatedRun(n.client(a), c.self.identity, request([narrow])));
    expect(err.code).toBe("POLICY_VIOLATION");
    expect(err.details).toMatchObject({ violationType: "UNDEFINED_TOOL", attemptedCapability: "tool:wordcount" });
    expect(c.logs.some((l) => /^run [0-9a-f]{64} /.test(l))).toBe(false);
  });

  it("refuses chain faults with their codes: widened, expired, forged, revoked, foreign root", async () => {
    const { n, a, b, c, ab, bc } = await net();
    const t = n.clock.now;
    const widened = signDelegation({ delegator: b.id, delegate: c.id, scope: ["tool:wordcount", "tool:slugify"], issuedAt: iso(t), expiresAt: iso(t + 60_000), parent: ab.delegationId }, b.self.keys.privateKey);
    expect((await refusal(requestDelegatedRun(n.client(a), c.self.identity, request([ab, widened])))).code).toBe("FED_DELEGATION_INVALID");
    const forged = { ...bc, scope: ["tool:wordcount", "tool:stats"] };
    expect((await refusal(requestDelegatedRun(n.client(a), c.self.identity, request([ab, forged])))).code).toBe("FED_SIGNATURE_INVALID");
    expect((await refusal(requestDelegatedRun(n.client(b), c.self.identity, request([ab, bc])))).code).toBe("FED_TRUST_VIOLATION");
    n.clock.now += 1_800_001;
    expect((await refusal(requestDelegatedRun(n.client(a), c.self.identity, request([ab, bc])))).code).toBe("FED_DELEGATION_EXPIRED");
  });

  it("checks the pack's signature: a signed pack altered after signing is refused with PACK_INVALID_SIGNATURE", async () => {
    const { n, a, c, ab, bc } = await net();
    const files = packFromDisk("hello");
    const sig = signPack(files, new Uint8Array(32).fill(9));
    files.set(".reach/signature", new TextEncoder().encode(JSON.stringify(sig)));
    files.set("plan.json", new TextEncoder().encode(new TextDecoder().decode(files.get("plan.json")!) + " "));
    expect((await refusal(requestDelegatedRun(n.client(a), c.self.identity, request([ab, bc], files)))).code).toBe("PACK_INVALID_SIGNATURE");
  });

  it("the requesting node refuses a capsule that is not what the chain, the delegate or the run files say", async () => {
    const { n, a, b, c, ab, bc } = await net();
    const run = await requestDelegatedRun(n.client(a), c.self.identity, request([ab, bc]));
    const claim = { runId: run.runId, runHash: run.runHash, status: run.status, delegate: c.self.identity, requester: a.id, chain: [ab, bc] };
    expect(() => checkDelegatedCapsule(run.capsule.bytes, run.files, claim)).not.toThrow();
    const cases: [string, () => void][] = [
      ["another chain", () => checkDelegatedCapsule(run.capsule.bytes, run.files, { ...claim, chain: [ab] })],
      ["another delegate", () => checkDelegatedCapsule(run.capsule.bytes, run.files, { ...claim, delegate: b.self.identity })],
      ["another run", () => checkDelegatedCapsule(run.capsule.bytes, run.files, { ...claim, runHash: "0".repeat(64) })],
      ["another status", () => checkDelegatedCapsule(run.capsule.bytes, run.files, { ...claim, status: "FAILED" })],
      ["an altered run file", () => checkDelegatedCapsule(run.capsule.bytes, new Map([...run.files, ["events.jsonl", new Uint8Array([123])]]), claim)],
      ["a damaged capsule", () => checkDelegatedCapsule(run.capsule.bytes.slice(0, 100), run.files, claim)],
    ];
    for (const [what, fn] of cases) {
      let code = "";
      try {
        fn();
      } catch (err) {
        code = (err as ReachError).code;
      }
      expect(code, what).toBe("FED_TRUST_VIOLATION");
    }
  });
});
