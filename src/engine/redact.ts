/**
 * Redaction that still verifies (conformance/HASHING.md "Redaction"): a capsule without some of its contents, whose
 * run hash is unchanged because the chain commits each removed value by a salted commitment (a step's arguments and
 * output, `value-commits.ts`) or by its digest in `contents` (a whole entry, a blob).
 *
 * - `step ID`: every invocation of the step loses its `arguments` / `result` and their salts in `events.jsonl`
 *   (rewritten; the chain hashes the same form), and `TASK_<ID>.json` goes.
 * - `entry PATH`: the entry goes (its digest stays in `capsule.json.files`). The pack, `capsule.json`,
 *   `events.jsonl`, `proof.json` and symbolic links of the workspace cannot be redacted.
 * - `blob SHA256`: `blobs/<sha256>` goes.
 *
 * `run.json` is derived from the chain and the committed entries, so any redaction drops it too. A redaction of a
 * redacted capsule adds to what it lists. A run proof stays valid: it signs the index without `redacted`.
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { utf8 } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { writeArchive } from "../capsule/mod.ts";
import { tapeValuePath } from "../record/mod.ts";
import { stepValues, stillHeld } from "./redact-copies.ts";
import type { StillHeld } from "./redact-copies.ts";
import { BLOB_PREFIX, CAPSULE_INDEX, EVENTS_ENTRY, FEDERATION_ENTRY, LINKS_ENTRY, PACK_PREFIX, PROOF_ENTRY, RUN_DOC_ENTRY, TAPE_ENTRY, TASK_PREFIX } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import type { CapsuleIndex } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";

/** What to redact. */
export type RedactionTargets = { steps?: readonly string[]; entries?: readonly string[]; blobs?: readonly string[] };

/** The `redacted` member of a capsule index. */
export type Redaction = NonNullable<CapsuleIndex["redacted"]>;

type Ev = { type: string; payload: Record<string, unknown> } & Record<string, unknown>;

/** Entries that hold or sign the chain, or that a capsule cannot be read without. */
const KEPT: ReadonlySet<string> = new Set([CAPSULE_INDEX, EVENTS_ENTRY, PROOF_ENTRY, FEDERATION_ENTRY, LINKS_ENTRY]);

function refuse(message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", message, { details });
}

/** Remove the step's values from its invocations' events; the invocation ids it had. */
function redactStepEvents(events: Ev[], stepId: string): Set<string> {
  const invocations = new Set<string>();
  for (const e of events) {
    if (e.type !== "tool.invoked" || e.payload["stepId"] !== stepId) continue;
    if (!("argumentsCommit" in e.payload)) {
      throw refuse(`step "${stepId}" was recorded before salted value commitments (its tool.invoked has no argumentsCommit), so its values cannot be removed without changing the run hash; record the run again with this version to redact it`, { stepId });
    }
    const { arguments: _a, argumentsSalt: _s, ...rest } = e.payload;
    e.payload = rest;
    invocations.add(String(e.payload["invocationId"]));
  }
  if (invocations.size === 0) throw refuse(`the capsule has no tool step "${stepId}"; name a step from \`reach-wasm show\``, { stepId });
  for (const e of events) {
    if (e.type !== "tool.completed" || !invocations.has(String(e.payload["invocationId"]))) continue;
    const { result: _r, resultSalt: _s, ...rest } = e.payload;
    e.payload = rest;
  }
  return invocations;
}

/**
 * The value entries (`tape/<seq>.json`) of the host calls these invocations made, and the blobs only they refer to.
 * @param capsule the capsule
 * @param invocations the invocation ids
 * @param gone entries already being removed (their blob references do not keep a blob)
 * @returns entry paths to remove
 */
function stepTapeEntries(capsule: RunCapsule, invocations: ReadonlySet<string>, gone: ReadonlySet<string>): string[] {
  const tape = new TextDecoder().decode(capsule.entries.get(TAPE_ENTRY) ?? new Uint8Array()).split("\n").slice(0, -1).map((l) => JSON.parse(l) as { seq: number; invocationId: string });
  const mine = new Set(tape.filter((r) => invocations.has(r.invocationId)).map((r) => tapeValuePath(r.seq)));
  const blobsOf = (path: string): string[] => {
    const raw = capsule.entries.get(path);
    if (raw === undefined) return [];
    const v = JSON.parse(new TextDecoder().decode(raw)) as Record<string, { data?: { blob?: unknown } } | undefined>;
    return [v["request"], v["response"]].flatMap((x) => (typeof x?.data?.blob === "string" ? [`${BLOB_PREFIX}${x.data.blob}`] : []));
  };
  const kept = new Set(tape.map((r) => tapeValuePath(r.seq)).filter((p) => !mine.has(p) && !gone.has(p)).flatMap(blobsOf));
  const blobs = [...mine].flatMap(blobsOf).filter((b) => !kept.has(b) && capsule.entries.has(b));
  return [...mine].filter((p) => capsule.entries.has(p)).concat(blobs);
}

/** Check an entry may be redacted. */
function checkEntry(capsule: RunCapsule, path: string, links: ReadonlySet<string>): void {
  if (!capsule.index.files.some((f) => f.path === path)) throw refuse(`the capsule has no entry "${path}"; see \`reach-wasm show\` or capsule.json for its entries`, { entry: path });
  if (KEPT.has(path) || path.startsWith(PACK_PREFIX)) {
    throw refuse(`"${path}" cannot be redacted: ${path.startsWith(PACK_PREFIX) ? "the pack is the code that ran, and verification needs its digest" : "it holds or signs the chain"}`, { entry: path });
  }
  if (links.has(path)) throw refuse(`"${path}" is a symbolic link of the workspace; its target is part of the workspace digest and cannot be redacted`, { entry: path });
}

/** The workspace entries that are symbolic links. */
function linkPaths(capsule: RunCapsule): Set<string> {
  const raw = capsule.entries.get(LINKS_ENTRY);
  if (raw === undefined) return new Set();
  const doc = JSON.parse(new TextDecoder().decode(raw)) as { before?: string[]; after?: string[] };
  return new Set([...(doc.before ?? []).map((p) => `workspace/before/${p}`), ...(doc.after ?? []).map((p) => `workspace/after/${p}`)]);
}

/**
 * Redact a capsule.
 * @param capsule the capsule (intact: `damaged` empty)
 * @param targets what to remove
 * @returns the new archive's bytes, its index, and the places that still hold a redacted step's value
 *   (`redact-copies.ts`: a later step's arguments, a file; each with the selector that removes it)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when a target does not exist or cannot be redacted (nothing is written)
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * declare const bytes: Uint8Array; // a capsule's .tar.gz bytes
 * const out = redactCapsule(readRunCapsule(bytes), { steps: ["fetch"] });
 * ```
 */
export function redactCapsule(capsule: RunCapsule, targets: RedactionTargets): { bytes: Uint8Array; index: CapsuleIndex; stillHeld: StillHeld[] } {
  if (capsule.damaged.length > 0) throw new ReachError("REPLAY_CAPSULE_INVALID", `the capsule is damaged (${capsule.damaged[0]!.path}: ${capsule.damaged[0]!.reason}); run \`reach-wasm verify\` first`);
  const steps = targets.steps ?? [];
  const absent = new Map<string, Redaction["entries"][number]["by"]>();
  const links = linkPaths(capsule);
  for (const path of targets.entries ?? []) {
    checkEntry(capsule, path, links);
    absent.set(path, "entry");
  }
  for (const sha of targets.blobs ?? []) {
    if (!/^[0-9a-f]{64}$/.test(sha)) throw refuse(`--blob takes a blob's SHA-256 (64 lowercase hex digits), not "${sha}"`, { blob: sha });
    checkEntry(capsule, `${BLOB_PREFIX}${sha}`, links);
    absent.set(`${BLOB_PREFIX}${sha}`, "blob");
  }
  const previous = capsule.index.redacted;
  const entries = new Map(capsule.entries);
  const rewritten = new Map((previous?.rewritten ?? []).map((r) => [r.path, r]));
  const traced = new Map<string, Set<string>>();
  if (steps.length > 0) {
    const read = readJsonl(entries.get(EVENTS_ENTRY) ?? new Uint8Array());
    if (read.error !== undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", `${EVENTS_ENTRY} line ${read.error.index}: ${read.error.reason}`);
    const events = read.events as Ev[];
    for (const stepId of steps) traced.set(stepId, stepValues(events, capsule.entries, stepId));
    for (const stepId of steps) {
      for (const path of stepTapeEntries(capsule, redactStepEvents(events, stepId), new Set(absent.keys()))) if (!absent.has(path)) absent.set(path, "step");
      const task = `${TASK_PREFIX}${stepId}.json`;
      if (capsule.index.files.some((f) => f.path === task)) absent.set(task, "step");
    }
    const bytes = utf8(events.map((e) => canonicalize(e) + "\n").join(""));
    entries.set(EVENTS_ENTRY, bytes);
    rewritten.set(EVENTS_ENTRY, { path: EVENTS_ENTRY, sha256: sha256Hex(bytes), size: bytes.length });
  }
  if (absent.size === 0 && steps.length === 0) throw refuse("nothing to redact: give --step ID, --entry PATH or --blob SHA256");
  if (capsule.index.files.some((f) => f.path === RUN_DOC_ENTRY) && !absent.has(RUN_DOC_ENTRY)) absent.set(RUN_DOC_ENTRY, steps.length > 0 ? "step" : "entry");
  for (const path of absent.keys()) entries.delete(path);
  const redacted: Redaction = {
    steps: [...new Set([...(previous?.steps ?? []), ...steps])].sort(),
    entries: [...(previous?.entries ?? []).filter((r) => !absent.has(r.path)), ...[...absent].map(([path, by]) => ({ path, by }))].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    rewritten: [...rewritten.values()],
  };
  const index: CapsuleIndex = { ...capsule.index, redacted };
  const archive = [...entries].map(([path, bytes]) => ({ path, bytes }));
  archive.push({ path: CAPSULE_INDEX, bytes: utf8(canonicalize(index) + "\n") });
  return { bytes: writeArchive(archive), index, stillHeld: stillHeld(traced, entries) };
}
