/**
 * The run capsule (seed 003 §8; ARCHITECTURE "Capsule"): which files a capsule holds, its index
 * `capsule.json`, the digest a run proof signs, and a strict reader that checks the index against the entries.
 *
 * | entry | content |
 * |---|---|
 * | `capsule.json` | the index (upstream `capsule.schema.json`): every other entry with its SHA-256 and size, the pack archive listing, the proof summary |
 * | `events.jsonl` | the hash-chained events |
 * | `tape.jsonl`, `blobs/<sha256>` | every host call, request and response bytes; large bodies content-addressed |
 * | `pack/<path>` | the pack as run: `reach.json`, plan or planner, tool code, workspace seeds, `.reach/signature` |
 * | `request.json` | what the run was asked: input, seed, approval and limits (replay re-runs exactly this) |
 * | `plan.json`, `EXECUTION_HEADER.json`, `result.json` | the approved plan, the execution header, the result |
 * | `TASK_<stepId>.json` | each step's evidence (seed 001 §7, seed 004 RunEvidence; virtual durations) |
 * | `run.json` | the run document (seed 004 ProductionRun + upstream run schema; `src/engine/run-document.ts`), virtual times |
 * | `workspace/before/<path>`, `workspace/after/<path>` | the workspace at the start and at the end (a symbolic link: its target text) |
 * | `workspace/links.json` | which of those entries are symbolic links (`{"before": [paths], "after": [paths]}`), when any are |
 * | `artifacts/<invocationId>/<name>` | committed artifacts |
 * | `proof.json` | run and step proofs, when the run was signed |
 *
 * `run-capsule.ts` is the public module: it re-exports this one and adds `readRunCapsule`, which reads the archive
 * (and so loads the inflater, which writing a capsule never needs: see `archive-write.ts`).
 *
 * Everything is a pure function of the run: no wall-clock time, no host path, timestamps are virtual (offsets from
 * the run's epoch). `capsuleIndexDigest` = SHA-256 of the canonical index without its `proof` field and without
 * the `proof.json` entry — what the run proof signs, so the proof can be added to the index it attests.
 *
 * The run hash commits to every entry (ARCHITECTURE "Hashing"): the run's terminal event carries `contents`, the
 * {@link contentsDigest} of the capsule's body — every entry but `capsule.json`, `events.jsonl`, `proof.json`,
 * `federation.jsonl` (which hold or follow the events) and `run.json` (which names the run hash; `verify` derives it
 * from the chain and the body and compares every field) — so a changed byte anywhere changes a hash the chain covers.
 * @module
 */
import { hashCanonical } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex, utf8 } from "../canonical/mod.ts";
import { deriveId } from "../canonical/mod.ts";
import { CAPSULE_FORMAT, capsuleSchemas } from "../protocol/mod.ts";
import type { CapsuleContent, CapsuleIndex } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { byPath } from "./_path.ts";
import { writeArchive } from "./archive-write.ts";

/** Entry names. */
export const CAPSULE_INDEX = "capsule.json";
export const EVENTS_ENTRY = "events.jsonl";
export const TAPE_ENTRY = "tape.jsonl";
export const PROOF_ENTRY = "proof.json";
export const REQUEST_ENTRY = "request.json";
export const PLAN_ENTRY = "plan.json";
export const HEADER_ENTRY = "EXECUTION_HEADER.json";
export const RESULT_ENTRY = "result.json";
/** The run document (outside the body: it names the run hash). */
export const RUN_DOC_ENTRY = "run.json";
/** Prefix of the per-step evidence entries (`TASK_<stepId>.json`, seed 001 §7). */
export const TASK_PREFIX = "TASK_";
export const PACK_PREFIX = "pack/";
export const BLOB_PREFIX = "blobs/";
export const BEFORE_PREFIX = "workspace/before/";
export const AFTER_PREFIX = "workspace/after/";
export const ARTIFACT_PREFIX = "artifacts/";
/** The federation annex (`src/engine/annex.ts`): present only in a capsule of a delegated run. */
export const FEDERATION_ENTRY = "federation.jsonl";
/** Which `workspace/before|after` entries are symbolic links (present only when some are). */
export const LINKS_ENTRY = "workspace/links.json";

/** Entries that are not part of the body the run hash commits to through `contents`. */
const NOT_BODY: ReadonlySet<string> = new Set(["capsule.json", "events.jsonl", "proof.json", "federation.jsonl", "run.json"]);

/** Everything a run capsule is made of: the body (built by the engine before the terminal event) and the events. */
export type RunCapsuleContents = {
  runId: string;
  runHash: string;
  /** The run's virtual epoch (ISO): the capsule's `createdAt`. */
  createdAt: string;
  packDigest: string;
  /** Pack files by path (including `.reach/signature` when present), for the index's `packArchive` listing. */
  packFiles: ReadonlyMap<string, Uint8Array>;
  /** The body: every entry but `capsule.json`, `events.jsonl`, `proof.json` and `federation.jsonl`. */
  body: ReadonlyMap<string, Uint8Array>;
  events: Uint8Array;
  /** The federation annex as JSONL (delegated runs only). */
  federation?: Uint8Array;
  /** The run document (`run.json`). */
  runDoc?: unknown;
};

/** A signer: given the run hash and the index digest, returns the proof document and its attestation. */
export type CapsuleSigner = (runHash: string, capsuleIndexDigest: string) => { proofJson: string; publicKey: string; signature: string };

/** What a run capsule's body is built from (documents already in their final form). */
export type CapsuleBodyParts = {
  packFiles: ReadonlyMap<string, Uint8Array>;
  request: unknown;
  header: unknown;
  plan: unknown;
  result: unknown;
  tape: Uint8Array;
  blobs: readonly (readonly [string, Uint8Array])[];
  workspaceBefore: { files: ReadonlyMap<string, Uint8Array>; links: ReadonlyMap<string, string> };
  workspaceAfter: { files: ReadonlyMap<string, Uint8Array>; links: ReadonlyMap<string, string> };
  /** Artifacts by their path (`artifacts/<invocationId>/<name>`). */
  artifacts: ReadonlyMap<string, Uint8Array>;
  /** Each step's evidence by step id (`TASK_<stepId>.json`). */
  tasks?: ReadonlyMap<string, unknown>;
};

function doc(value: unknown): Uint8Array {
  return utf8(canonicalize(value) + "\n");
}

/**
 * The body of a capsule: every entry the run hash commits to through `contents`.
 * @param c the parts
 * @returns path → bytes
 * @example const body = capsuleBody(parts); const contents = contentsDigest(body);
 */
export function capsuleBody(c: CapsuleBodyParts): Map<string, Uint8Array> {
  const e = new Map<string, Uint8Array>();
  e.set(TAPE_ENTRY, c.tape);
  for (const [hash, bytes] of c.blobs) e.set(`${BLOB_PREFIX}${hash}`, bytes);
  for (const [path, bytes] of c.packFiles) e.set(`${PACK_PREFIX}${path}`, bytes);
  e.set(REQUEST_ENTRY, doc(c.request));
  e.set(HEADER_ENTRY, doc(c.header));
  if (c.plan !== null && c.plan !== undefined) e.set(PLAN_ENTRY, doc(c.plan));
  e.set(RESULT_ENTRY, doc(c.result));
  for (const [stepId, task] of c.tasks ?? []) e.set(`${TASK_PREFIX}${stepId}.json`, doc(task));
  const enc = new TextEncoder();
  for (const [prefix, ws] of [[BEFORE_PREFIX, c.workspaceBefore], [AFTER_PREFIX, c.workspaceAfter]] as const) {
    for (const [path, bytes] of ws.files) e.set(`${prefix}${path}`, bytes);
    for (const [path, target] of ws.links) e.set(`${prefix}${path}`, enc.encode(target));
  }
  if (c.workspaceBefore.links.size + c.workspaceAfter.links.size > 0) {
    e.set(LINKS_ENTRY, doc({ after: [...c.workspaceAfter.links.keys()], before: [...c.workspaceBefore.links.keys()] }));
  }
  for (const [path, bytes] of c.artifacts) e.set(path.startsWith(ARTIFACT_PREFIX) ? path : `${ARTIFACT_PREFIX}${path}`, bytes);
  return e;
}

/**
 * The digest of a capsule's body, which the run's terminal event commits as `contents`: SHA-256 of
 * `path \0 sha256hex \0 size \n` per body entry in path order (entries that are not body are skipped).
 * @param entries capsule entries (the body alone, or the whole capsule)
 * @param absent entries of a redacted capsule that are not in it, with the digest and size its index keeps
 * @returns 64 lowercase hex digits
 * @example contentsDigest(new Map()) // SHA-256 of the empty string
 */
export function contentsDigest(entries: ReadonlyMap<string, Uint8Array>, absent: readonly { path: string; sha256: string; size: number }[] = []): string {
  const lines = new Map<string, string>();
  for (const [path, bytes] of entries) lines.set(path, `${path}\0${sha256Hex(bytes)}\0${bytes.length}\n`);
  for (const f of absent) if (!entries.has(f.path)) lines.set(f.path, `${f.path}\0${f.sha256}\0${f.size}\n`);
  let listing = "";
  for (const path of [...lines.keys()].filter((p) => !NOT_BODY.has(p)).sort(byPath)) listing += lines.get(path)!;
  return sha256Hex(listing);
}

/**
 * The entries of a capsule other than `capsule.json` and `proof.json`.
 * @param c the contents
 * @returns path → bytes
 */
export function capsuleEntries(c: RunCapsuleContents): Map<string, Uint8Array> {
  const e = new Map<string, Uint8Array>(c.body);
  e.set(EVENTS_ENTRY, c.events);
  if (c.federation !== undefined) e.set(FEDERATION_ENTRY, c.federation);
  if (c.runDoc !== undefined) e.set(RUN_DOC_ENTRY, doc(c.runDoc));
  return e;
}

/**
 * The digest a run proof signs: SHA-256 of the canonical index without `proof` and without the `proof.json` entry.
 * @param index a capsule index
 * @returns 64 lowercase hex digits
 */
export function capsuleIndexDigest(index: CapsuleIndex): string {
  const { proof: _proof, redacted: _redacted, ...rest } = index;
  return hashCanonical({ ...rest, files: rest.files.filter((f) => f.path !== PROOF_ENTRY), manifest: { ...rest.manifest, contents: rest.manifest.contents.filter((c) => c !== "proof") } });
}

function indexOf(c: RunCapsuleContents, entries: ReadonlyMap<string, Uint8Array>, proof: boolean): CapsuleIndex {
  const paths = [...entries.keys()].sort(byPath);
  const contents: CapsuleContent[] = ["events", "tool_recordings", "state_snapshots", "pack_archive"];
  if (proof) contents.push("proof");
  const packFiles = [...c.packFiles].sort((a, b) => byPath(a[0], b[0])).map(([path, bytes]) => ({ path, hash: sha256Hex(bytes), size: bytes.length }));
  return {
    specVersion: "1.0.0",
    capsuleId: deriveId("reach-wasm/capsule", c.runHash),
    runId: c.runId,
    runHash: c.runHash,
    createdAt: c.createdAt,
    manifest: { format: CAPSULE_FORMAT, compression: "gzip", contents, deterministic: true },
    files: paths.map((path) => ({ path, sha256: sha256Hex(entries.get(path)!), size: entries.get(path)!.length })),
    packArchive: { hash: c.packDigest, files: packFiles },
  };
}

/**
 * Write a run capsule.
 * @param c the contents
 * @param sign signs the run (optional): a proof is added
 * @returns the `.tar.gz` bytes and the index
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when a path cannot be stored (see `writeArchive`)
 */
export function writeRunCapsule(c: RunCapsuleContents, sign?: CapsuleSigner): { bytes: Uint8Array; index: CapsuleIndex } {
  const entries = capsuleEntries(c);
  let index = indexOf(c, entries, false);
  if (sign !== undefined) {
    const digest = capsuleIndexDigest(index);
    const signed = sign(c.runHash, digest);
    entries.set(PROOF_ENTRY, utf8(signed.proofJson));
    index = indexOf(c, entries, true);
    index.proof = { type: "signed_attestation", algorithm: "SHA-256", value: c.runHash, attestations: [{ nodeId: signed.publicKey, signature: signed.signature, signedAt: c.createdAt }] };
    if (capsuleIndexDigest(index) !== digest) throw new Error("internal: the capsule index digest changed when the proof was added");
  }
  entries.set(CAPSULE_INDEX, doc(index));
  return { bytes: writeArchive([...entries].map(([path, bytes]) => ({ path, bytes }))), index };
}

/** A capsule read back: its entries and its index, checked against each other. */
export type RunCapsule = {
  index: CapsuleIndex;
  /** Every entry but `capsule.json`. */
  entries: Map<string, Uint8Array>;
  /** Entries whose bytes do not match the index (path and why); empty when intact. */
  damaged: { path: string; reason: string }[];
};

/**
 * A capsule from an archive's entries already read (`readArchive`): the index and every entry checked against it.
 * @param archiveEntries every entry of the archive, `capsule.json` included (the map is taken over)
 * @returns the capsule
 * @throws ReachError `REPLAY_CAPSULE_INVALID` for a missing or malformed index
 * @example
 * ```ts
 * declare const entries: Map<string, Uint8Array>; // readArchive(bytes) of a capsule's .tar.gz bytes
 * const capsule = runCapsuleFromEntries(entries);
 * ```
 */
export function runCapsuleFromEntries(archiveEntries: Map<string, Uint8Array>): RunCapsule {
  const entries = archiveEntries;
  const raw = entries.get(CAPSULE_INDEX);
  if (raw === undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", `the archive has no ${CAPSULE_INDEX}; it is not a reach-wasm capsule`);
  entries.delete(CAPSULE_INDEX);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw new ReachError("REPLAY_CAPSULE_INVALID", `${CAPSULE_INDEX} is not UTF-8 JSON; the capsule is damaged`, { details: { path: CAPSULE_INDEX } });
  }
  const index = parseOrThrow(capsuleSchemas().CapsuleIndexSchema, parsed, "REPLAY_CAPSULE_INVALID", CAPSULE_INDEX);
  const damaged: RunCapsule["damaged"] = [];
  const listed = new Set<string>();
  const absent = new Set(index.redacted?.entries.map((r) => r.path));
  const rewritten = new Map(index.redacted?.rewritten.map((r) => [r.path, r]));
  for (const f0 of index.files) {
    listed.add(f0.path);
    const f = rewritten.get(f0.path) ?? f0;
    const b = entries.get(f.path);
    if (absent.has(f.path)) {
      if (b !== undefined) damaged.push({ path: f.path, reason: "listed as redacted in capsule.json but present in the archive" });
    } else if (b === undefined) damaged.push({ path: f.path, reason: "listed in capsule.json but missing from the archive" });
    else if (b.length !== f.size || sha256Hex(b) !== f.sha256) damaged.push({ path: f.path, reason: `its SHA-256 is ${sha256Hex(b)}, capsule.json says ${f.sha256}` });
  }
  for (const path of entries.keys()) if (!listed.has(path)) damaged.push({ path, reason: "in the archive but not listed in capsule.json" });
  return { index, entries, damaged };
}

/**
 * Entries under a prefix, with the prefix removed.
 * @param entries capsule entries
 * @param prefix e.g. `pack/`
 * @returns relative path → bytes
 */
export function entriesUnder(entries: ReadonlyMap<string, Uint8Array>, prefix: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [path, bytes] of entries) if (path.startsWith(prefix)) out.set(path.slice(prefix.length), bytes);
  return out;
}
