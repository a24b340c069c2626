/**
 * The requesting node's check of a delegated run's capsule, before anything is written (seed 003 §6.3 "Inter-node:
 * verify all signatures"): the capsule verifies on its own (`verifyCapsule` in `engine-adapter.ts`: entries, hash chain, outputs, tape,
 * pack, plan, proofs), its run proof is signed by the delegate's registered node key, it is the run the reply names,
 * its federation annex is exactly the one the chain implies (rebuilt here and compared byte for byte), and every run
 * file that has a counterpart in the capsule matches it.
 * @module
 */
import { canonicalize, hashCanonical } from "../canonical/mod.ts";
import { FEDERATION_ENTRY, RESULT_ENTRY } from "../capsule/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import type { Delegation, NodeIdentity } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { delegationAnnex } from "./annex.ts";
import { annexJsonl, verifyCapsule } from "./engine-adapter.ts";
import { publicKeyHex } from "./identity.ts";

/** What the reply promised. */
export type DelegatedRunClaim = { runId: string; runHash: string; status: string; delegate: NodeIdentity; requester: string; chain: readonly Delegation[] };

const dec = new TextDecoder("utf-8", { fatal: true });

function untrusted(message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError("FED_TRUST_VIOLATION", `the capsule returned by the delegate ${message}; nothing was written`, { details });
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameJson(a: Uint8Array, b: Uint8Array): boolean {
  try {
    return canonicalize(JSON.parse(dec.decode(a))) === canonicalize(JSON.parse(dec.decode(b)));
  } catch {
    return false;
  }
}

/** The capsule entry a run file mirrors, and whether it is compared as JSON. */
function counterpart(path: string): [string, boolean] | undefined {
  if (path === "result.json" || path === "EXECUTION_HEADER.json" || path === "plan.json") return [path, true];
  if (path === "events.jsonl" || path === "tape.jsonl" || path.startsWith("blobs/") || path.startsWith("artifacts/")) return [path, false];
  if (path.startsWith("workspace/")) return [`workspace/after/${path.slice("workspace/".length)}`, false];
  return undefined;
}

/**
 * The run files' result.json is the capsule's plus the run hash, with each step's output in full where the capsule
 * holds its hash (an output is stored once in a capsule, in its events).
 */
function sameResult(entry: Uint8Array, file: Uint8Array, runHash: string): boolean {
  try {
    const inCapsule = JSON.parse(new TextDecoder().decode(entry)) as Record<string, unknown>;
    const { runHash: hash, outputs, ...rest } = JSON.parse(new TextDecoder().decode(file)) as Record<string, unknown>;
    if (hash !== runHash || outputs === null || typeof outputs !== "object") return false;
    const hashes: Record<string, string> = {};
    for (const [k, v] of Object.entries(outputs)) hashes[k] = hashCanonical(v);
    return canonicalize({ ...rest, outputs: hashes }) === canonicalize(inCapsule);
  } catch {
    return false;
  }
}

function checkFiles(entries: ReadonlyMap<string, Uint8Array>, files: ReadonlyMap<string, Uint8Array>, runHash: string): void {
  for (const [path, bytes] of files) {
    const c = counterpart(path);
    if (c === undefined) continue; // evidence.json has no counterpart: it is vouched for by the signed reply only
    const entry = entries.get(c[0]);
    const same = entry !== undefined && (path === "result.json" ? sameResult(entry, bytes, runHash) : c[1] ? sameJson(entry, bytes) : sameBytes(entry, bytes));
    if (!same) throw untrusted(`does not match the run file ${path}`, { path });
  }
}

function checkAnnex(entries: ReadonlyMap<string, Uint8Array>, claim: DelegatedRunClaim): void {
  const events = readJsonl(entries.get("events.jsonl") ?? new Uint8Array()).events as { timestamp?: unknown }[];
  const last = events[events.length - 1]?.timestamp;
  const annex = entries.get(FEDERATION_ENTRY);
  if (typeof last !== "string" || annex === undefined) throw untrusted(`has no ${FEDERATION_ENTRY} annex`);
  const expected = annexJsonl(claim.runId, claim.runHash, last, delegationAnnex(claim.chain, claim, claim.requester));
  if (!sameBytes(annex, expected)) throw untrusted(`has a ${FEDERATION_ENTRY} that is not the one its delegation chain implies`);
}

/**
 * Check a delegated run's capsule and run files.
 * @param bytes the capsule `.tar.gz`
 * @param files the run files sent with it
 * @param claim what the reply said, who the delegate is, who asked, and the chain sent
 * @returns nothing
 * @throws ReachError `FED_TRUST_VIOLATION` naming the first failed check
 * @example checkDelegatedCapsule(capsule, files, { runId, runHash, status, delegate, requester, chain });
 */
export function checkDelegatedCapsule(bytes: Uint8Array, files: ReadonlyMap<string, Uint8Array>, claim: DelegatedRunClaim): void {
  let checked;
  try {
    checked = verifyCapsule(bytes);
  } catch (err) {
    throw untrusted(`cannot be read (${(err as Error).message})`);
  }
  const { capsule, verification: v } = checked;
  const failed = v.checks.filter((c) => !c.ok);
  if (!v.valid) throw untrusted(`does not verify: ${failed.map((c) => `${c.name}: ${c.message}`).join("; ")}`, { failed });
  if (v.signer === null || v.signer.publicKey !== publicKeyHex(claim.delegate)) throw untrusted(`is not signed by the delegate node ${claim.delegate.nodeId}'s key`);
  if (capsule.index.runHash !== claim.runHash || capsule.index.runId !== claim.runId) throw untrusted(`holds run ${capsule.index.runHash}, not the run ${claim.runHash} the reply names`);
  let status: unknown;
  try {
    status = (JSON.parse(dec.decode(capsule.entries.get(RESULT_ENTRY) ?? new Uint8Array())) as { status?: unknown }).status;
  } catch {
    status = undefined;
  }
  if (status !== claim.status) throw untrusted(`ended ${String(status)}, but the reply says ${claim.status}`);
  checkAnnex(capsule.entries, claim);
  checkFiles(capsule.entries, files, claim.runHash);
}
