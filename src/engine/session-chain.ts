/**
 * Session chains (conformance/HASHING.md "Session chains"): an MCP session is a chain of session runs. A run that
 * ends — a hard failure (seed 003 §7.2) — is closed into its own capsule at once, and the session goes on in a new run
 * that names the previous run's hash and starts from the workspace and memory that run ended with. Each capsule is
 * complete on its own (its `request.json` holds the link and the starting memory, its `workspace/before/` the starting
 * workspace, all committed by its run hash), so each verifies and replays alone; {@link checkSessionChain} checks that
 * consecutive capsules link up.
 *
 * This module checks a chain link that comes from outside (an engine request, a capsule's `request.json`), reads the
 * link back from a capsule for replay, and checks a sequence of capsules.
 * @module
 */
import { canonicalize, hashCanonical } from "../canonical/mod.ts";
import { BEFORE_PREFIX, EVENTS_ENTRY, LINKS_ENTRY, REQUEST_ENTRY, RESULT_ENTRY, entriesUnder } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { DEFAULT_MAX_MEMORY_BYTES, DEFAULT_MAX_MEMORY_ENTRIES, MAX_MEMORY_VALUE_BYTES, assertMemoryKey } from "../sandbox/mod.ts";
import type { SessionChain } from "./types.ts";

const HASH = /^[0-9a-f]{64}$/;
const dec = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

/**
 * The digest of a memory store: SHA-256 of the canonical JSON of its `[key, canonical value text]` pairs, sorted by
 * key (as `MemoryStore.digest`).
 * @param entries the pairs, sorted
 * @returns 64 hex digits
 * @example memoryDigest([]) // the SHA-256 of "[]"
 */
export function memoryDigest(entries: readonly (readonly [string, string])[]): string {
  return hashCanonical(entries.map(([k, v]) => [k, v]));
}

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `session chain: ${message}`);
}

/** The memory pairs of a chain link, checked: valid keys in ascending order, canonical JSON values within the limits. */
function checkMemory(memory: unknown): [string, string][] {
  if (!Array.isArray(memory)) throw bad("memory must be a list of [key, canonical JSON text] pairs");
  if (memory.length > DEFAULT_MAX_MEMORY_ENTRIES) throw bad(`memory holds ${memory.length} keys; a store holds at most ${DEFAULT_MAX_MEMORY_ENTRIES}`);
  const out: [string, string][] = [];
  let total = 0;
  for (const pair of memory as unknown[]) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== "string") throw bad("each memory entry must be a [key, canonical JSON text] pair");
    const [key, text] = pair as [unknown, string];
    assertMemoryKey(key);
    const previous = out[out.length - 1]?.[0];
    if (previous !== undefined && !(previous < key)) throw bad("memory keys must be distinct and in ascending order");
    const bytes = enc.encode(text).length;
    if (bytes > MAX_MEMORY_VALUE_BYTES) throw bad(`the value of memory key ${JSON.stringify(key.slice(0, 60))} is over ${MAX_MEMORY_VALUE_BYTES} bytes`);
    total += bytes;
    if (total > DEFAULT_MAX_MEMORY_BYTES) throw bad(`memory values total over ${DEFAULT_MAX_MEMORY_BYTES} bytes`);
    let canonical: string;
    try {
      canonical = canonicalize(JSON.parse(text));
    } catch {
      canonical = "";
    }
    if (canonical !== text) throw bad(`the value of memory key ${JSON.stringify(key.slice(0, 60))} is not canonical JSON text`);
    out.push([key, text]);
  }
  return out;
}

/**
 * Check a chain link given from outside.
 * @param chain the link
 * @returns the same link, checked
 * @throws ReachError `PROTO_INVALID_ARGUMENT` naming what is wrong
 * @example checkSessionChain({ segment: 1, previousRunHash: null, memory: [] })
 */
export function checkSessionChain(chain: unknown): SessionChain {
  if (chain === null || typeof chain !== "object") throw bad("expected { segment, previousRunHash, memory }");
  const c = chain as Record<string, unknown>;
  const segment = c["segment"];
  if (typeof segment !== "number" || !Number.isSafeInteger(segment) || segment < 1) throw bad("segment must be a whole number from 1");
  const previous = c["previousRunHash"];
  if (segment === 1 ? previous !== null : typeof previous !== "string" || !HASH.test(previous)) {
    throw bad(segment === 1 ? "the first run of a session names no previous run (previousRunHash null)" : "a later run names the previous run's hash (64 hex digits)");
  }
  const memory = checkMemory(c["memory"]);
  const ws = c["workspace"];
  if (ws !== undefined) {
    const w = ws as { files?: unknown; links?: unknown };
    if (!(w.files instanceof Map) || !(w.links instanceof Map)) throw bad("workspace must hold files and links maps");
    for (const [p, b] of w.files) if (typeof p !== "string" || !(b instanceof Uint8Array)) throw bad("workspace files map paths to bytes");
    for (const [p, t] of w.links) if (typeof p !== "string" || typeof t !== "string") throw bad("workspace links map paths to targets");
  }
  if (segment === 1 && (ws !== undefined || memory.length > 0)) throw bad("the first run of a session starts from the pack's workspace and an empty memory store");
  return { segment, previousRunHash: previous as string | null, memory, ...(ws === undefined ? {} : { workspace: ws as NonNullable<SessionChain["workspace"]> }) };
}

/**
 * The chain link a capsule's run started from (for replay): `request.json`'s `session`, and for a later run the
 * workspace under `workspace/before/` (its links named by `workspace/links.json`).
 * @param capsule the capsule
 * @param session `request.json`'s `session` field
 * @returns the link
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when it is malformed
 */
export function chainOfCapsule(capsule: RunCapsule, session: unknown): SessionChain {
  try {
    const link = checkSessionChain(session);
    if (link.segment === 1) return link;
    const entries = entriesUnder(capsule.entries, BEFORE_PREFIX);
    const raw = capsule.entries.get(LINKS_ENTRY);
    const listed = raw === undefined ? [] : (JSON.parse(dec.decode(raw)) as { before?: unknown }).before;
    if (!Array.isArray(listed) || !listed.every((p) => typeof p === "string")) throw bad(`${LINKS_ENTRY} is malformed`);
    const linkPaths = new Set(listed as string[]);
    const files = new Map<string, Uint8Array>();
    const links = new Map<string, string>();
    for (const [path, bytes] of entries) {
      if (linkPaths.has(path)) links.set(path, dec.decode(bytes));
      else files.set(path, bytes);
    }
    return { ...link, workspace: { files, links } };
  } catch (err) {
    throw new ReachError("REPLAY_CAPSULE_INVALID", `request.json's session chain cannot start a replay: ${(err as Error).message}`, { cause: err });
  }
}

/** A capsule's place in its session, as a reader follows it. */
export type SessionLink = {
  runHash: string;
  status: string;
  segment: number;
  previousRunHash: string | null;
  /** The workspace and memory digests the run started and ended with. */
  workspaceBefore: string;
  workspaceAfter: string;
  memoryBefore: string;
  memoryAfter: string;
};

function json(capsule: RunCapsule, entry: string): Record<string, unknown> {
  const raw = capsule.entries.get(entry);
  if (raw === undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", `the capsule has no ${entry}`);
  return JSON.parse(dec.decode(raw)) as Record<string, unknown>;
}

/**
 * A capsule's session link: where it stands in its session and the state it started and ended with.
 * @param capsule the capsule (verify it first: this reads what it commits, it does not check it)
 * @returns the link, or null when the run is not part of a session chain
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when its entries are malformed
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * declare const bytes: Uint8Array; // a session run's capsule
 * const link = sessionLink(readRunCapsule(bytes));
 * console.log(link === null ? "not a session run" : `run ${link.segment}, continuing ${link.previousRunHash ?? "nothing"}`);
 * ```
 */
export function sessionLink(capsule: RunCapsule): SessionLink | null {
  const session = json(capsule, REQUEST_ENTRY)["session"] as Record<string, unknown> | undefined;
  if (session === undefined) return null;
  const link = checkSessionChain(session);
  const lines = dec.decode(capsule.entries.get(EVENTS_ENTRY) ?? new Uint8Array()).trim().split("\n");
  const first = JSON.parse(lines[0] ?? "{}") as { payload?: Record<string, unknown> };
  const last = JSON.parse(lines[lines.length - 1] ?? "{}") as { payload?: Record<string, unknown> };
  const result = json(capsule, RESULT_ENTRY);
  const after = (result["session"] as Record<string, unknown> | undefined)?.["memoryAfter"];
  return {
    runHash: capsule.index.runHash,
    status: String(result["status"]),
    segment: link.segment,
    previousRunHash: link.previousRunHash,
    workspaceBefore: String(first.payload?.["workspaceBefore"]),
    workspaceAfter: String(last.payload?.["workspaceAfter"]),
    memoryBefore: memoryDigest(link.memory),
    memoryAfter: String(after),
  };
}

/**
 * Check that capsules form a session chain, in order: the first is a session's first run, and each later one names
 * the run before it, has the next segment number, and starts from the workspace and memory that run ended with.
 * (Each capsule's own integrity is `verify`'s; its entries under `workspace/` are compared through their digests.)
 * @param capsules the session's capsules, first run first
 * @returns the problems found (empty: the chain holds)
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * declare const files: Uint8Array[]; // a session's capsules, as `--out/sessions/<first run hash>.json` lists them
 * const problems = checkSessionChainLinks(files.map((b) => readRunCapsule(b)));
 * console.log(problems.length === 0 ? "one chain" : problems.join("\n"));
 * ```
 */
export function checkSessionChainLinks(capsules: readonly RunCapsule[]): string[] {
  const problems: string[] = [];
  let previous: SessionLink | null = null;
  for (const [i, capsule] of capsules.entries()) {
    const link = sessionLink(capsule);
    if (link === null) {
      problems.push(`capsule ${i + 1} (${capsule.index.runHash}) is not part of a session chain`);
      continue;
    }
    if (previous === null) {
      if (i === 0 && link.segment !== 1) problems.push(`the first capsule is segment ${link.segment} of its session, not its first run`);
    } else {
      const at = `capsule ${i + 1} (segment ${link.segment})`;
      if (link.previousRunHash !== previous.runHash) problems.push(`${at} continues run ${link.previousRunHash}, not ${previous.runHash}`);
      if (link.segment !== previous.segment + 1) problems.push(`${at} follows segment ${previous.segment}`);
      if (link.workspaceBefore !== previous.workspaceAfter) problems.push(`${at} starts from workspace ${link.workspaceBefore}; the run before it ended with ${previous.workspaceAfter}`);
      if (link.memoryBefore !== previous.memoryAfter) problems.push(`${at} starts from memory ${link.memoryBefore}; the run before it ended with ${previous.memoryAfter}`);
    }
    previous = link;
  }
  return problems;
}

/** The link of a session's first run: the pack's workspace, an empty memory store, no previous run. */
export const SESSION_START: SessionChain = Object.freeze({ segment: 1, previousRunHash: null, memory: Object.freeze([]) as readonly (readonly [string, string])[] });
