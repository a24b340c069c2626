/**
 * The requesting node's check of a delegated run's capsule, before anything is written (seed 003 §6.3 "Inter-node:
 * verify all signatures"): the capsule verifies on its own (`verifyCapsule` in `engine-adapter.ts`: entries, hash chain, outputs, tape,
 * pack, plan, proofs), its run proof is signed by the delegate's registered node key, it is the run the reply names,
 * its federation annex is exactly the one the chain implies (rebuilt here and compared byte for byte), and every run
 * file that has a counterpart in the capsule matches it.
 * @module
 */
import { canonicalize, hashCanonical, valueCommit } from "../canonical/mod.ts";
import { FEDERATION_ENTRY, RESULT_ENTRY } from "../capsule/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import { isCommittedTape, readTapeJsonl, tapeToJsonl } from "../record/mod.ts";
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
 * The salt of each step's output in a salted run (conformance/HASHING.md "Value commitments"): the last
 * `tool.completed` `resultSalt` of the step's invocations; empty for a run recorded before salted commitments.
 */
function outputSalts(entries: ReadonlyMap<string, Uint8Array>): Map<string, string> {
  const steps = new Map<string, string>();
  const salts = new Map<string, string>();
  const events = readJsonl(entries.get("events.jsonl") ?? new Uint8Array()).events as { type?: unknown; payload?: Record<string, unknown> }[];
  for (const e of events) {
    const p = e.payload ?? {};
    if (e.type === "tool.invoked" && typeof p["invocationId"] === "string" && typeof p["stepId"] === "string") steps.set(p["invocationId"], p["stepId"]);
    const step = typeof p["invocationId"] === "string" ? steps.get(p["invocationId"]) : undefined;
    if (e.type === "tool.completed" && step !== undefined && typeof p["resultSalt"] === "string") salts.set(step, p["resultSalt"]);
  }
  return salts;
}

/**
 * The run files' result.json is the capsule's plus the run hash, with each step's output in full where the capsule
 * holds its commitment (an output is stored once in a capsule, in its events): its salted commitment, or its plain
 * hash in a run recorded before salted commitments.
 */
function sameResult(entry: Uint8Array, file: Uint8Array, runHash: string, salts: ReadonlyMap<string, string>): boolean {
  try {
    const inCapsule = JSON.parse(new TextDecoder().decode(entry)) as Record<string, unknown>;
    const { runHash: hash, outputs, ...rest } = JSON.parse(new TextDecoder().decode(file)) as Record<string, unknown>;
    if (hash !== runHash || outputs === null || typeof outputs !== "object") return false;
    const hashes: Record<string, string> = {};
    for (const [k, v] of Object.entries(outputs)) {
      const salt = salts.get(k);
      hashes[k] = salt === undefined ? hashCanonical(v) : valueCommit(salt, v);
    }
    return canonicalize({ ...rest, outputs: hashes }) === canonicalize(inCapsule);
  } catch {
    return false;
  }
}

/**
 * The host calls as the run files write them (`tape.jsonl` with each call's values inline): a salted capsule keeps
 * each call's values in `tape/<seq>.json` beside a line of commitments, so its calls are read back through them.
 */
function plainTape(entries: ReadonlyMap<string, Uint8Array>): Uint8Array | undefined {
  const tape = entries.get("tape.jsonl");
  if (tape === undefined || !isCommittedTape(tape)) return tape;
  try {
    return new TextEncoder().encode(tapeToJsonl(readTapeJsonl(tape, undefined, entries)));
  } catch {
    return undefined;
  }
}

function checkFiles(entries: ReadonlyMap<string, Uint8Array>, files: ReadonlyMap<string, Uint8Array>, runHash: string): void {
  const salts = outputSalts(entries);
  for (const [path, bytes] of files) {
    const c = counterpart(path);
    if (c === undefined) continue; // evidence.json has no counterpart: it is vouched for by the signed reply only
    const entry = c[0] === "tape.jsonl" ? plainTape(entries) : entries.get(c[0]);
    const same = entry !== undefined && (path === "result.json" ? sameResult(entry, bytes, runHash, salts) : c[1] ? sameJson(entry, bytes) : sameBytes(entry, bytes));
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
