/**
 * Verifying a run capsule without executing anything (seed 003 §3.4 "MAY skip re-execution … MUST validate";
 * `reach-wasm verify`). Every check is reported; the first failure of each names where the damage is.
 *
 * Checks, in order: `files` (every entry matches its SHA-256 in capsule.json, nothing extra), `events` (strict
 * JSONL, hash chain, ordering, run hash = capsule.json's), `outputs` (every `tool.completed` output hashes to its
 * `outputHash`; `run.completed`'s `outputHash` is the hash of the completed steps' outputs), `tape` (canonical
 * records, request/response hashes, every blob present and hashing to its name), `pack` (the archived pack's
 * digest is `packArchive.hash` and `run.started`'s `packDigest`; its manifest hash is `run.started`'s), `plan`
 * (`plan.json` hashes to `run.started`'s `planHash`), `pack.signature` (when the pack is signed), `proof` (when the
 * run is signed: run proof over the run hash and the index digest, step proofs over their event ranges), `run.json`
 * (outside the `contents` digest because it names the run hash: derived again from the chain and the committed
 * entries, every field compared).
 * @module
 */
import { hashCanonical } from "../canonical/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import { verifyChain } from "../ledger/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { readTapeJsonl } from "../record/mod.ts";
import { firstDifference, TapePlayer } from "../record/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { runDocument } from "./run-document.ts";
import { headerPlanLock } from "./task-files.ts";
import { outputChecks, redactionCheck } from "./verify-values.ts";
import { RESERVED_STEP_PREFIX } from "./types.ts";
import { packDigest, PACK_SIGNATURE_PATH, parsePackSignature, verifyPackSignature } from "../trust/mod.ts";
import { parseProof, verifyProof } from "../trust/mod.ts";
import type { TrustStore } from "../trust/mod.ts";
import { AFTER_PREFIX, BEFORE_PREFIX, BLOB_PREFIX, capsuleIndexDigest, contentsDigest, entriesUnder, EVENTS_ENTRY, LINKS_ENTRY, PACK_PREFIX, PLAN_ENTRY, PROOF_ENTRY, REQUEST_ENTRY, RUN_DOC_ENTRY, TAPE_ENTRY, TASK_PREFIX } from "../capsule/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { snapshotDigest } from "../sandbox/mod.ts";
import type { SnapshotEntry } from "../sandbox/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";

/** One check of `verify`. */
export type VerifyCheck = { name: string; ok: boolean; message: string; location?: Record<string, unknown> };

/** The outcome of verifying a capsule. */
export type CapsuleVerification = {
  valid: boolean;
  runHash: string;
  checks: VerifyCheck[];
  signer: { publicKey: string; trusted: boolean; keyName?: string } | null;
  /** What a redacted capsule lacks (capsule.json `redacted`). */
  redacted?: NonNullable<RunCapsule["index"]["redacted"]>;
};

type Ev = { type: string; payload: Record<string, unknown>; eventHash: string };

const dec = new TextDecoder("utf-8", { fatal: true });

/**
 * Verify a capsule read by `readRunCapsule`.
 * @param capsule the capsule
 * @param trustStore decides whether the proof's and the pack's signers are trusted
 * @returns every check
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * declare const bytes: Uint8Array; // a capsule's .tar.gz bytes
 * const result = verifyRunCapsule(readRunCapsule(bytes));
 * for (const c of result.checks) if (!c.ok) console.log(`${c.name}: ${c.message}`);
 * ```
 */
export function verifyRunCapsule(capsule: RunCapsule, trustStore?: TrustStore): CapsuleVerification {
  const { index, entries } = capsule;
  const checks: VerifyCheck[] = [];

  if (capsule.damaged.length === 0) {
    checks.push(found("files", true, `all ${index.files.length} entries match capsule.json`));
  }
  for (const d of capsule.damaged) checks.push(found("files", false, `${d.path}: ${d.reason}`, { entry: d.path }));

  const { events, check: eventsCheck } = verifyEvents(entries.get(EVENTS_ENTRY), index.runHash);
  checks.push(eventsCheck);
  // outputs: each tool.completed output hashes to its outputHash; a completed step refers to its tool's output by
  // hash; run.completed's outputHash is the hash of the completed steps' outputs.
  const redacted = capsule.index.redacted;
  const absent = index.files.filter((f) => redacted?.entries.some((r) => r.path === f.path) === true);
  if (events.length > 0) checks.push(...outputChecks(events, new Set(redacted?.steps)));
  // commitments: everything else in the capsule is committed by hashes the chain covers
  if (events.length > 0) checks.push(...commitmentChecks(events, entries, absent));
  // run.json names the run hash, so it is outside `contents`: every field is derived again and compared
  if (events.length > 0) checks.push(absent.some((f) => f.path === RUN_DOC_ENTRY) ? found("run.json", true, "run.json is redacted (it is derived from the chain and the committed entries)") : runDocumentCheck(events as never, index.runHash, entries));

  checks.push(tapeCheck(entries, events, new Set(absent.map((f) => f.path))));
  checks.push(...packChecks(capsule, events, trustStore));
  const plan = planCheck(entries, events);
  if (plan !== null) checks.push(plan);
  const lock = headerPlanLock(entries); // seed 001 §6: the plan file's bytes against the header's plan_sha256
  if (lock !== null) checks.push(found("plan.sha256", lock.ok, lock.message, lock.ok ? undefined : { entry: "EXECUTION_HEADER.json" }));
  const proof = proofChecks(capsule, events, trustStore);
  checks.push(...proof.checks);
  const redaction = redactionCheck(index);
  if (redaction !== null) checks.push(redaction);
  return { valid: checks.every((c) => c.ok), runHash: index.runHash, checks, signer: proof.signer, ...(redacted === undefined ? {} : { redacted }) };
}

/** A check that keeps its location whenever one is given (`check` drops it from a passing one). */
function found(name: string, ok: boolean, message: string, location?: Record<string, unknown>): VerifyCheck {
  return location === undefined ? { name, ok, message } : { name, ok, message, location };
}

/** `events`: strict JSONL, the hash chain, the run hash; the events when they could be read. */
function verifyEvents(rawEvents: Uint8Array | undefined, runHash: string): { events: Ev[]; check: VerifyCheck } {
  if (rawEvents === undefined) return { events: [], check: found("events", false, `${EVENTS_ENTRY} is missing`, { entry: EVENTS_ENTRY }) };
  const read = readJsonl(rawEvents);
  if (read.error !== undefined) {
    return { events: [], check: found("events", false, `${EVENTS_ENTRY} line ${read.error.index}: ${read.error.reason}`, { entry: EVENTS_ENTRY, eventIndex: read.error.index }) };
  }
  const report = verifyChain(read.events, runHash);
  const check = report.valid
    ? found("events", true, `${report.count} events, hash chain intact, run hash ${report.runHash}`)
    : found("events", false, `event ${report.index}${report.field === "" ? "" : ` field ${report.field}`}: ${report.reason}`, { entry: EVENTS_ENTRY, eventIndex: report.index, field: report.field });
  return { events: read.events as Ev[], check };
}

/** `tape`: canonical records, request/response hashes, every blob present and hashing to its name. */
function tapeCheck(entries: RunCapsule["entries"], events: readonly Ev[], absent: ReadonlySet<string>): VerifyCheck {
  if (absent.has(TAPE_ENTRY)) return found("tape", true, `${TAPE_ENTRY} is redacted (its digest is committed through contents)`);
  try {
    const records = readTapeJsonl(entries.get(TAPE_ENTRY) ?? new Uint8Array(), undefined, entries);
    const blobs = entriesUnder(entries, BLOB_PREFIX);
    new TapePlayer(records, blobs); // seq order, blob hashes
    const referenced = new Set<string>();
    const blobOf = (v: unknown): void => {
      const data = (v as { data?: { blob?: unknown } } | undefined)?.data;
      if (data !== null && typeof data === "object" && typeof data.blob === "string") referenced.add(data.blob);
    };
    for (const r of records) {
      blobOf(r.request);
      blobOf(r.response);
    }
    const tapeProblem = invocationTapeProblem(events, entries.get(TAPE_ENTRY) ?? new Uint8Array());
    if (tapeProblem !== null) throw new ReachError("REPLAY_CAPSULE_INVALID", tapeProblem);
    const missing = [...referenced].filter((h) => !blobs.has(h) && !absent.has(`${BLOB_PREFIX}${h}`));
    if (missing.length > 0) return found("tape", false, `the tape refers to blob ${missing[0]}, which is not in the capsule`, { entry: `${BLOB_PREFIX}${missing[0]}` });
    return found("tape", true, `${records.length} host calls, ${blobs.size} blobs, all hashes match`);
  } catch (err) {
    const e = err instanceof ReachError ? err : new ReachError("REPLAY_CAPSULE_INVALID", String(err));
    return found("tape", false, e.message, { entry: TAPE_ENTRY, ...e.details });
  }
}

/** `pack` (the archived pack's digest against capsule.json and run.started) and `pack.signature` when signed. */
function packChecks(capsule: RunCapsule, events: readonly Ev[], trustStore: TrustStore | undefined): VerifyCheck[] {
  const { index, entries } = capsule;
  const checks: VerifyCheck[] = [];
  const started = events[0]?.type === "run.started" ? events[0].payload : undefined;
  const pack = entriesUnder(entries, PACK_PREFIX);
  let digest = "";
  try {
    digest = packDigest(pack);
    const ok = digest === index.packArchive.hash && (started?.["packDigest"] === undefined || started["packDigest"] === digest);
    checks.push(found("pack", ok, ok ? `pack digest ${digest} matches capsule.json and run.started` : `the archived pack's digest is ${digest}; capsule.json says ${index.packArchive.hash}, run.started says ${String(started?.["packDigest"])}`, ok ? undefined : { entry: PACK_PREFIX }));
  } catch (err) {
    checks.push(found("pack", false, `the archived pack cannot be listed: ${(err as Error).message}`, { entry: PACK_PREFIX }));
  }
  const sig = pack.get(PACK_SIGNATURE_PATH);
  if (sig !== undefined) {
    try {
      const v = verifyPackSignature(pack, parsePackSignature(sig), trustStore);
      checks.push(found("pack.signature", true, `the pack is signed by ${v.keyName ?? v.publicKey}${v.trusted ? " (trusted)" : " (not in the trust store)"}`));
    } catch (err) {
      checks.push(found("pack.signature", false, (err as Error).message, { entry: `${PACK_PREFIX}${PACK_SIGNATURE_PATH}` }));
    }
  }
  return checks;
}

/** `plan`: plan.json hashes to the last locked plan (a recorded replan locks the plan it gated, seed 001 §6). */
function planCheck(entries: RunCapsule["entries"], events: readonly Ev[]): VerifyCheck | null {
  const plan = entries.get(PLAN_ENTRY);
  const locked = lockedPlanHash(events);
  if (plan === undefined || locked === undefined) return null;
  let h = "";
  try {
    h = hashCanonical(JSON.parse(dec.decode(plan)));
  } catch {
    h = "(not JSON)";
  }
  const ok = h === locked.hash;
  return found("plan", ok, ok ? "plan.json matches the locked plan hash" : `plan.json hashes to ${h}; ${locked.by} locked ${locked.hash}`, ok ? undefined : { entry: PLAN_ENTRY });
}

/** `proof` when the run is signed: the run proof, the step proofs and capsule.json's attestation; and the signer. */
function proofChecks(
  capsule: RunCapsule,
  events: readonly Ev[],
  trustStore: TrustStore | undefined,
): { checks: VerifyCheck[]; signer: CapsuleVerification["signer"] } {
  const { index, entries } = capsule;
  const checks: VerifyCheck[] = [];
  let signer: CapsuleVerification["signer"] = null;
  const proof = entries.get(PROOF_ENTRY);
  if (proof !== undefined) {
    try {
      const doc = parseProof(proof);
      const v = verifyProof(doc, { runHash: index.runHash, capsuleIndexDigest: capsuleIndexDigest(index), eventHashes: events.map((e) => e.eventHash), ...(trustStore === undefined ? {} : { trustStore }) });
      signer = { publicKey: v.publicKey, trusted: v.trusted, ...(v.keyName === undefined ? {} : { keyName: v.keyName }) };
      const attested = index.proof?.attestations?.[0];
      if (attested === undefined || attested.nodeId !== doc.publicKey || attested.signature !== doc.run.signature) {
        checks.push(found("proof", false, "capsule.json's proof attestation does not match proof.json", { entry: "capsule.json", field: "proof" }));
      }
      for (const c of v.checks) checks.push(found(c.name, c.ok, c.message, c.ok ? undefined : { entry: PROOF_ENTRY }));
    } catch (err) {
      checks.push(found("proof", false, (err as Error).message, { entry: PROOF_ENTRY }));
    }
  } else if (index.proof !== undefined || index.manifest.contents.includes("proof")) {
    checks.push(found("proof", false, "capsule.json declares a proof but proof.json is missing", { entry: PROOF_ENTRY }));
  }
  return { checks, signer };
}

function check(name: string, ok: boolean, message: string, location?: Record<string, unknown>): VerifyCheck {
  return location === undefined || ok ? { name, ok, message } : { name, ok, message, location };
}

/** The workspace listing a capsule holds under `prefix` (links named by `workspace/links.json`). */
function workspaceListing(entries: ReadonlyMap<string, Uint8Array>, prefix: string, side: "before" | "after", absent: readonly { path: string; sha256: string; size: number }[]): SnapshotEntry[] {
  let links: Set<string> = new Set();
  const raw = entries.get(LINKS_ENTRY);
  if (raw !== undefined) {
    const doc = JSON.parse(dec.decode(raw)) as Record<string, unknown>;
    const list = doc[side];
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string")) throw new Error(`${LINKS_ENTRY} is malformed`);
    links = new Set(list as string[]);
  }
  const out: SnapshotEntry[] = [];
  for (const [path, bytes] of entriesUnder(entries, prefix)) {
    out.push(links.has(path) ? { path, size: bytes.length, sha256: sha256Hex(bytes), kind: "symlink", target: dec.decode(bytes) } : { path, size: bytes.length, sha256: sha256Hex(bytes) });
  }
  // a redacted file (never a link: `redact` refuses those) by the digest and size the index keeps
  for (const f of absent) if (f.path.startsWith(prefix)) out.push({ path: f.path.slice(prefix.length), size: f.size, sha256: f.sha256 });
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The body digest, the request and the workspaces against what run.started and the terminal event commit. */
function commitmentChecks(events: readonly Ev[], entries: ReadonlyMap<string, Uint8Array>, absent: readonly { path: string; sha256: string; size: number }[]): VerifyCheck[] {
  const started = events[0]!.type === "run.started" ? events[0]!.payload : {};
  const last = events[events.length - 1]!.payload;
  const out: VerifyCheck[] = [];
  const contents = contentsDigest(entries, absent);
  out.push(check("contents", last["contents"] === contents, last["contents"] === contents ? "every capsule entry is committed by the run hash (contents)" : `the capsule's entries hash to ${contents}; the terminal event commits ${String(last["contents"])} — an entry was changed, added or removed`, { entry: EVENTS_ENTRY, eventIndex: events.length - 1, field: "payload.contents" }));
  const request = entries.get(REQUEST_ENTRY);
  let requestHash = "(missing)";
  try {
    if (request !== undefined) requestHash = hashCanonical(JSON.parse(dec.decode(request)));
  } catch {
    requestHash = "(not JSON)";
  }
  if (request === undefined && absent.some((f) => f.path === REQUEST_ENTRY)) out.push(check("request", true, "request.json is redacted (its digest is committed through contents)"));
  else out.push(check("request", requestHash === started["requestHash"], requestHash === started["requestHash"] ? "request.json is the request run.started commits" : `request.json hashes to ${requestHash}; run.started commits ${String(started["requestHash"])}`, { entry: REQUEST_ENTRY }));
  for (const [side, prefix, committed] of [["before", BEFORE_PREFIX, started["workspaceBefore"]], ["after", AFTER_PREFIX, last["workspaceAfter"]]] as const) {
    let digest: string;
    try {
      digest = snapshotDigest(workspaceListing(entries, prefix, side, absent));
    } catch (err) {
      digest = `(${(err as Error).message})`;
    }
    out.push(check("workspace", digest === committed, digest === committed ? `the workspace ${side} the run matches its digest` : `workspace/${side}/ has digest ${digest}; the run commits ${String(committed)}`, { entry: prefix }));
  }
  return out;
}

/** The capsule's `run.json` against the document the chain and the committed entries give (`run-document.ts`). */
function runDocumentCheck(events: Parameters<typeof runDocument>[0], runHash: string, entries: ReadonlyMap<string, Uint8Array>): VerifyCheck {
  const raw = entries.get(RUN_DOC_ENTRY);
  const where = { entry: RUN_DOC_ENTRY };
  if (raw === undefined) {
    // capsules made before run.json existed hold no TASK_<id>.json either; a newer capsule without it lost it
    const legacy = ![...entries.keys()].some((p) => p.startsWith(TASK_PREFIX));
    return check("run.json", legacy, legacy ? "a capsule made before run.json existed (its run document can be derived: replay)" : `${RUN_DOC_ENTRY} is missing; a capsule with TASK_<id>.json entries holds the run document`, where);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(dec.decode(raw));
  } catch {
    return check("run.json", false, `${RUN_DOC_ENTRY} is not UTF-8 JSON`, where);
  }
  let expected: unknown;
  try {
    expected = runDocument(events, runHash, entries);
  } catch (err) {
    return check("run.json", false, `the run document cannot be derived from the capsule: ${(err as Error).message}`, where);
  }
  const field = firstDifference(expected, doc, "run.json");
  if (field === null && canonicalize(doc) + "\n" === dec.decode(raw)) return check("run.json", true, "every field of run.json follows from the chain and the committed entries");
  return check("run.json", false, field === null ? "run.json is not in canonical form" : `run.json differs at ${field} from what the chain and the committed entries give`, { ...where, field: field ?? "" });
}

/** Each invocation's tape lines against the hostCalls its tool.completed / tool.failed commits; null when they agree. */
function invocationTapeProblem(events: readonly Ev[], tape: Uint8Array): string | null {
  // the lines as stored (canonical, checked by readTapeJsonl): inline records, or a committed tape's commitments
  const byInvocation = new Map<string, string[]>();
  for (const line of new TextDecoder().decode(tape).split("\n").slice(0, -1)) {
    const id = String((JSON.parse(line) as { invocationId?: unknown }).invocationId);
    const list = byInvocation.get(id) ?? [];
    list.push(line + "\n");
    byInvocation.set(id, list);
  }
  for (const [i, e] of events.entries()) {
    if (e.type !== "tool.completed" && e.type !== "tool.failed") continue;
    const committed = e.payload["hostCalls"] as { count?: unknown; hash?: unknown } | undefined;
    if (committed === undefined) continue; // a tool.failed that closes an interrupted step
    const mine = byInvocation.get(String(e.payload["invocationId"])) ?? [];
    const hash = sha256Hex(mine.join(""));
    if (committed.count !== mine.length || committed.hash !== hash) {
      return `event ${i} (${e.type}) commits ${String(committed.count)} host calls with hash ${String(committed.hash)}; the tape holds ${mine.length} for that invocation, hashing to ${hash}`;
    }
  }
  return null;
}

/** The plan hash that locked the run last: `run.started`'s, or the latest completed replan step's. */
function lockedPlanHash(events: readonly Ev[]): { hash: string; by: string } | undefined {
  const started = events[0]?.type === "run.started" ? events[0].payload : undefined;
  let locked = typeof started?.["planHash"] === "string" ? { hash: started["planHash"], by: "run.started" } : undefined;
  for (const e of events) {
    if (e.type !== "run.step.completed") continue;
    const result = e.payload["result"] as Record<string, unknown> | undefined;
    const stepId = e.payload["stepId"];
    if (typeof stepId === "string" && stepId.startsWith(`${RESERVED_STEP_PREFIX}replan.`) && typeof result?.["planHash"] === "string") {
      locked = { hash: result["planHash"], by: `replan step "${stepId}"` };
    }
  }
  return locked;
}
