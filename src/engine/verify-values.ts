/**
 * `verify`'s `outputs` and `redaction` checks (conformance/HASHING.md "Value commitments", "Redaction"): every
 * recorded step value against its commitment, and what a redacted capsule lacks.
 * @module
 */
import { valueCommit } from "../canonical/mod.ts";
import { hashCanonical } from "../canonical/mod.ts";
import { EVENTS_ENTRY } from "../capsule/mod.ts";
import type { CapsuleIndex } from "../protocol/mod.ts";

/** One check of `verify` (as `verify.ts` reports it). */
type Check = { name: string; ok: boolean; message: string; location?: Record<string, unknown> };
type Ev = { type: string; payload: Record<string, unknown> };

/**
 * A value against its commitment: `"ok"`, `"redacted"` (value and salt absent) or why it does not hold.
 * @param value the value, or undefined
 * @param salt its salt, or undefined (the legacy form: `commit` = SHA256(JCS(value)))
 * @param commit the commitment the chain covers
 * @param legacy whether the legacy unsalted form is allowed
 */
function valueHolds(value: unknown, salt: unknown, commit: unknown, legacy: boolean): "ok" | "redacted" | string {
  if (value === undefined && salt === undefined) return "redacted";
  if (value === undefined) return "a salt without its value";
  if (salt === undefined) return legacy && hashCanonical(value) === commit ? "ok" : "the value does not hash to its commitment";
  return typeof salt === "string" && valueCommit(salt, value) === commit ? "ok" : "the value and its salt do not give its commitment";
}

/**
 * `outputs`: each step's arguments and output against their commitments (salted, or the legacy unsalted output
 * hash); a completed step refers to its tool's `outputHash`; `run.completed`'s `outputHash` is the hash of the
 * completed steps' outputs (legacy) or of their commitments. A value may be absent only for a step the index lists
 * as redacted.
 * @param events the chain
 * @param redactedSteps steps the index lists as redacted
 * @returns the checks
 */
export function outputChecks(events: readonly Ev[], redactedSteps: ReadonlySet<string>): Check[] {
  const problems: Check[] = [];
  const stepTypes = new Map<string, string>();
  const stepOf = new Map<string, string>(); // invocationId → stepId
  const lastOutput = new Map<string, { value: unknown; hash: unknown }>(); // stepId → its tool's output
  const outputs: Record<string, unknown> = {};
  const commits: Record<string, unknown> = {};
  const salted = events.some((e) => e.type === "tool.invoked" && "argumentsCommit" in e.payload);
  const bad = (i: number, field: string, message: string): void => void problems.push({ name: "outputs", ok: false, message: `event ${i} (${events[i]!.type}): ${message}`, location: { entry: EVENTS_ENTRY, eventIndex: i, field } });
  const value = (i: number, field: string, stepId: string, holds: string): void => {
    if (holds === "redacted" && !redactedSteps.has(stepId)) bad(i, field, `the value is missing, and capsule.json does not list step "${stepId}" as redacted`);
    else if (holds !== "ok" && holds !== "redacted") bad(i, field, holds);
  };
  events.forEach((e, i) => {
    const p = e.payload;
    if (e.type === "run.step.started") stepTypes.set(String(p["stepId"]), String(p["stepType"]));
    else if (e.type === "tool.invoked") {
      const stepId = String(p["stepId"]);
      stepOf.set(String(p["invocationId"]), stepId);
      if ("argumentsCommit" in p) value(i, "payload.arguments", stepId, valueHolds(p["arguments"], p["argumentsSalt"], p["argumentsCommit"], false));
      else if (p["arguments"] === undefined) bad(i, "payload.arguments", "no arguments and no argumentsCommit");
    } else if (e.type === "tool.completed") {
      const stepId = stepOf.get(String(p["invocationId"])) ?? "";
      value(i, "payload.outputHash", stepId, valueHolds(p["result"], p["resultSalt"], p["outputHash"], !salted));
      lastOutput.set(stepId, { value: p["result"], hash: p["outputHash"] });
    } else if (e.type === "run.step.completed" && stepTypes.get(String(p["stepId"])) === "tool") {
      const stepId = String(p["stepId"]);
      const ref = (p["result"] as { outputHash?: unknown } | undefined)?.outputHash;
      if (!lastOutput.has(stepId) || ref !== lastOutput.get(stepId)!.hash) bad(i, "payload.result.outputHash", "the step's outputHash is not its tool's outputHash");
      outputs[stepId] = lastOutput.get(stepId)?.value;
      commits[stepId] = ref;
    } else if (e.type === "run.completed" && hashCanonical(salted ? commits : outputs) !== p["outputHash"]) {
      bad(i, "payload.outputHash", `outputHash is not the hash of the completed steps' ${salted ? "output commitments" : "outputs"}`);
    }
  });
  return problems.length === 0 ? [{ name: "outputs", ok: true, message: salted ? "every recorded value matches its salted commitment" : "every recorded output matches its hash" }] : problems;
}

/**
 * `redaction`, for a redacted capsule: what it lacks (each removal is committed, so the other checks still hold).
 * @param index the capsule index
 * @returns the check, or null for a capsule that is not redacted
 */
export function redactionCheck(index: CapsuleIndex): Check | null {
  const r = index.redacted;
  if (r === undefined) return null;
  const parts: string[] = [];
  if (r.steps.length > 0) parts.push(`the arguments and outputs of step${r.steps.length === 1 ? "" : "s"} ${r.steps.join(", ")}`);
  if (r.entries.length > 0) parts.push(`${r.entries.length} entr${r.entries.length === 1 ? "y" : "ies"} (${r.entries.map((e) => e.path).join(", ")})`);
  return { name: "redaction", ok: true, message: `redacted: ${parts.join("; ")}; each is committed by the run hash`, location: { steps: r.steps, entries: r.entries.map((e) => e.path) } };
}
