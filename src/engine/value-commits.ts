/**
 * A run's salted value commitments (conformance/HASHING.md "Value commitments"): each step's arguments and output are
 * committed in its `tool.invoked` / `tool.completed` event by a salted hash, which the chain covers in place of the
 * value, so a capsule can be redacted (`reach-wasm redact`) and keep its run hash. A run recorded before this scheme
 * (its `request.json` has no `commitments`) is replayed the old way: values inline, unsalted output hashes.
 * @module
 */
import { commitKey, SALTED_COMMITMENTS, valueCommit, valueSalt } from "../canonical/mod.ts";
import { hashCanonical } from "../canonical/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";

/** The commit key of a run, or null for the legacy (unsalted) form. */
export type ValueKey = Uint8Array | null;

/**
 * The commit key a run uses.
 * @param seed the run's seed
 * @param commitments the request's `commitments` (`"salted-v1"`), or undefined for a legacy run
 * @returns the key, or null
 */
export function runValueKey(seed: string, commitments: string | undefined): ValueKey {
  return commitments === SALTED_COMMITMENTS ? commitKey(seed) : null;
}

/**
 * The `tool.invoked` fields that carry a step's arguments.
 * @param key the run's commit key (null: legacy, the arguments alone)
 * @param invocationId the invocation
 * @param args the arguments
 * @returns `{arguments}` or `{arguments, argumentsSalt, argumentsCommit}`
 */
export function argumentFields(key: ValueKey, invocationId: string, args: JsonObject): JsonObject {
  if (key === null) return { arguments: args };
  const salt = valueSalt(key, `invocation/${invocationId}/arguments`);
  return { arguments: args, argumentsSalt: salt, argumentsCommit: valueCommit(salt, args) };
}

/**
 * The `tool.completed` fields that carry a step's output.
 * @param key the run's commit key (null: legacy, `outputHash` = SHA256(JCS(output)))
 * @param invocationId the invocation
 * @param output the output
 * @returns `{result, outputHash}` or `{result, resultSalt, outputHash}`
 */
export function outputFields(key: ValueKey, invocationId: string, output: JsonObject): { result: JsonObject; resultSalt?: string; outputHash: string } {
  if (key === null) return { result: output, outputHash: hashCanonical(output) };
  const salt = valueSalt(key, `invocation/${invocationId}/output`);
  return { result: output, resultSalt: salt, outputHash: valueCommit(salt, output) };
}

/**
 * The run's `outputHash`: SHA256(JCS(stepId → output)) in the legacy form, else SHA256(JCS(stepId → the output's
 * commitment)), so the run's hash of its outputs reveals nothing a redaction removed.
 * @param key the run's commit key
 * @param outputs the completed steps' outputs
 * @param commits the completed steps' output commitments
 * @returns 64 hex digits
 */
export function outputsDigest(key: ValueKey, outputs: JsonObject, commits: Readonly<Record<string, string>>): string {
  return key === null ? hashCanonical(outputs) : hashCanonical(commits);
}

/**
 * `result.json`'s `outputs`: each completed step's output hash (legacy) or commitment.
 * @param key the run's commit key
 * @param outputs the completed steps' outputs
 * @param commits their commitments
 * @returns stepId → hash
 */
export function outputHashes(key: ValueKey, outputs: JsonObject, commits: Readonly<Record<string, string>>): Record<string, string> {
  if (key !== null) return { ...commits };
  const out: Record<string, string> = {};
  for (const [stepId, output] of Object.entries(outputs)) out[stepId] = hashCanonical(output);
  return out;
}
