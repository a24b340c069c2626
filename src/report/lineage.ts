/**
 * Where a run comes from, as its `request.json` commits it (`conformance/HASHING.md` "Forks and resumed runs",
 * "Session chains"): the run it was forked from (at which step, with which changes, and that run's own parents when
 * it was a fork too), the run it resumed, the session run it continues. Every run hash is checked to be 64 lowercase
 * hex digits before it is kept, so a link made from it (`<runHash>.report.html`) is always a plain relative file
 * name. Read defensively: a malformed member is left out.
 * @module
 */
import { get, obj, parseJsonBytes, str, strings } from "./_json.ts";
import type { Obj } from "./_json.ts";

/** A fork's parent: its run hash, the step the fork starts at, the names of the changes made there. */
export type ForkLink = { runHash: string; step: string | null; changes: string[] };

/** A run's parents, each by run hash. */
export type LineageView = {
  /**
   * The run this one was forked from, then that run's own fork parent, and so on (nearest first). A resumed fork
   * keeps the fork's `forkedFrom`: then the run it resumed is its direct parent and these are that run's.
   */
  forkedFrom: ForkLink[];
  /** The run this one resumed, its status and the steps taken from it. */
  resumedFrom: { runHash: string; status: string | null; completedSteps: string[] } | null;
  /** The session run this one continues. */
  previousRunHash: string | null;
};

/** A child of a run that a report is told about. */
export type ChildLink = { runHash: string; relation: "fork" | "resume" | "session"; step: string | null };

const RUN_HASH = /^[0-9a-f]{64}$/;
/** Forks nest at most this deep (HASHING.md). */
const MAX_FORK_DEPTH = 64;

/**
 * Whether `text` is a run hash (64 lowercase hex digits), the only thing ever put into a link.
 * @param text untrusted text
 * @returns true for a run hash
 * @example isRunHash("../x") // false
 */
export function isRunHash(text: unknown): text is string {
  return typeof text === "string" && RUN_HASH.test(text);
}

/**
 * The lineage a run's `request.json` records.
 * @param request the bytes of `request.json` (undefined when absent)
 * @returns its parents (empty when it has none or the document is unreadable)
 * @example lineageOf(entries.get("request.json")).forkedFrom[0]?.runHash
 */
export function lineageOf(request: Uint8Array | undefined): LineageView {
  const doc = obj(parseJsonBytes(request));
  const forkedFrom: ForkLink[] = [];
  let fork = obj(get(doc, "forkedFrom"));
  while (fork !== null && forkedFrom.length < MAX_FORK_DEPTH) {
    const runHash = str(fork, "runHash");
    if (!isRunHash(runHash)) break;
    forkedFrom.push({ runHash, step: str(fork, "step"), changes: Object.keys(obj(get(fork, "changes")) ?? {}).sort() });
    fork = obj(get(fork, "forkedFrom"));
  }
  const resumed = obj(get(doc, "resumedFrom"));
  const previous = str(obj(get(doc, "session")), "previousRunHash");
  return {
    forkedFrom,
    resumedFrom: resumedOf(resumed),
    previousRunHash: isRunHash(previous) ? previous : null,
  };
}

function resumedOf(r: Obj | null): LineageView["resumedFrom"] {
  const runHash = str(r, "runHash");
  if (!isRunHash(runHash)) return null;
  return { runHash, status: str(r, "status"), completedSteps: strings(r, "completedSteps") };
}

/**
 * The direct parents of a run (the run it was forked from, resumed or continues), each with how it is related.
 * @param l the lineage
 * @returns the parents as child links seen from them: `relation` says how this run came from each
 * @example directParents(view.lineage).map((p) => p.runHash)
 */
export function directParents(l: LineageView): ChildLink[] {
  const out: ChildLink[] = [];
  const fork = l.forkedFrom[0];
  if (fork !== undefined && l.resumedFrom === null) out.push({ runHash: fork.runHash, relation: "fork", step: fork.step });
  if (l.resumedFrom !== null) out.push({ runHash: l.resumedFrom.runHash, relation: "resume", step: null });
  if (l.previousRunHash !== null) out.push({ runHash: l.previousRunHash, relation: "session", step: null });
  return out;
}
