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

/** Why a redacted capsule cannot be replayed. */
export type ReplayRedacted = { code: "REPLAY_REDACTED"; entries: string[]; message: string };

/**
 * The redacted entries a replay would need, or null when it can run.
 * @param capsule the capsule
 * @returns what stops the replay
 */
export function replayBlockers(capsule: RunCapsule): ReplayRedacted | null {
  const redacted = capsule.index.redacted?.entries ?? [];
  const needed = redacted.map((r) => r.path).filter((p) => p === REQUEST_ENTRY || p === TAPE_ENTRY || p === PLAN_ENTRY || p.startsWith(BLOB_PREFIX));
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
