/**
 * Replay of a redacted capsule (conformance/HASHING.md "Redaction"): a redacted step's values are not needed (replay
 * computes them again and the chain's commitments check them), nor are redacted results (`TASK_<id>.json`,
 * `run.json`, the workspace after the run, artifacts: their digests stay in the index and the rebuilt capsule is
 * compared against those). What replay cannot do without is what the run was asked (`request.json`) and what its
 * host calls answered (`tape.jsonl`, `blobs/`); a capsule lacking one of those is not replayed, and the report names
 * them with `REPLAY_REDACTED` (never a verdict about the run).
 * @module
 */
import { BLOB_PREFIX, PLAN_ENTRY, REQUEST_ENTRY, TAPE_ENTRY } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";

/**
 * Why a redacted capsule cannot be replayed (whole, or from a step on: `step` is the first step it could not replay,
 * `replayedEvents` how many events before it the replay reproduced exactly).
 */
export type ReplayRedacted = { code: "REPLAY_REDACTED"; entries: string[]; message: string; step?: string; replayedEvents?: number };

type Ev = { type: string; payload: Record<string, unknown> };

/**
 * A replay that stopped at a redacted host call (the player refused it, `REPLAY_REDACTED`): the first such step, when
 * every event before it matched the recording (`firstDifference` is the first event that differs, or null). An
 * earlier difference is a divergence, reported as such: no verdict is taken from a redaction.
 * @param replayed the replayed run's events
 * @param firstDifference the index of the first replayed event that differs from the recorded one, or null
 * @returns the stop, or null when the replay met no redacted call or diverged before it
 */
export function redactedStop(replayed: readonly Ev[], firstDifference: number | null): ReplayRedacted | null {
  const at = replayed.findIndex((e) => e.type === "tool.failed" && (e.payload["error"] as { code?: unknown } | undefined)?.code === "REPLAY_REDACTED");
  if (at < 0 || (firstDifference !== null && firstDifference < at)) return null;
  const details = ((replayed[at]!.payload["error"] as { details?: Record<string, unknown> }).details ?? {});
  const invocationId = replayed[at]!.payload["invocationId"];
  const step = String(replayed.find((e) => e.type === "tool.invoked" && e.payload["invocationId"] === invocationId)?.payload["stepId"] ?? "");
  const entry = String(details["entry"] ?? "tape");
  return { code: "REPLAY_REDACTED", entries: [entry], step, replayedEvents: at, message: `replayed ${at} events exactly as recorded; cannot replay step "${step}" or what follows it: its host call ${entry} is redacted (\`reach-wasm verify\` still checks the whole capsule)` };
}

/**
 * The redacted entries a replay would need, or null when it can run.
 * @param capsule the capsule
 * @returns what stops the replay
 */
export function replayBlockers(capsule: RunCapsule): ReplayRedacted | null {
  const redacted = capsule.index.redacted?.entries ?? [];
  // a blob a step's redaction removed is referred to only by that step's redacted host calls: the replay stops there
  const needed = redacted.filter((r) => !(r.by === "step" && r.path.startsWith(BLOB_PREFIX))).map((r) => r.path).filter((p) => p === REQUEST_ENTRY || p === TAPE_ENTRY || p === PLAN_ENTRY || p.startsWith(BLOB_PREFIX));
  if (needed.length === 0) return null;
  return { code: "REPLAY_REDACTED", entries: needed, message: `cannot replay: the capsule is redacted and replay needs ${needed.join(", ")} (what the run was asked, its plan, or what its host calls answered); \`reach-wasm verify\` still checks it` };
}

/**
 * The SHA-256 the capsule's index keeps for a redacted entry.
 * @param capsule the capsule
 * @param path the entry
 * @returns the digest, or undefined when the entry is not redacted
 */
export function redactedDigest(capsule: RunCapsule, path: string): string | undefined {
  if (capsule.index.redacted?.entries.some((r) => r.path === path) !== true) return undefined;
  return capsule.index.files.find((f) => f.path === path)?.sha256;
}
