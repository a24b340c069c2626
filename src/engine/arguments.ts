/**
 * Step arguments may take values from the run's input and from earlier steps' outputs. An argument value that is
 * exactly `{"$input": "<JSON pointer>"}` (RFC 6901; `""` is the whole input) is replaced by that part of the input;
 * one that is exactly `{"$step": "<step id>", "pointer": "<JSON pointer>"}` (`pointer` optional, default `""`: the
 * whole output) by that part of the named step's output. Nothing else is rewritten, so a static plan stays a plain
 * JSON document and its hash covers the references.
 *
 * A step may name only a step it depends on, directly or transitively (`step-graph.ts`: a step without `depends_on`
 * depends on the step before it, so in a plan without `depends_on` every earlier step qualifies); the plan gate
 * refuses any other reference (`PLAN_STEP_REFERENCE_INVALID`, {@link stepReferences}). A pointer the actual output
 * lacks fails the step with `EXEC_STEP_REFERENCE_UNRESOLVED`.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { jsonDepth, MAX_JSON_DEPTH } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";

/** A `{"$step", "pointer"}` reference found in a step's arguments. */
export type StepReference = { step: string; pointer: string; where: string };

function isObject(v: JsonValue | undefined): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isInputRef(v: JsonValue): v is { $input: string } {
  return isObject(v) && Object.keys(v).length === 1 && Object.prototype.hasOwnProperty.call(v, "$input");
}

/** Whether a value is meant as a step reference (it has a `$step` key); its shape is checked by {@link stepRefOf}. */
function isStepRef(v: JsonValue): v is JsonObject {
  return isObject(v) && Object.prototype.hasOwnProperty.call(v, "$step");
}

/** The reference a `$step` object stands for, or a message saying what is wrong with it. */
function stepRefOf(v: JsonObject): { step: string; pointer: string } | string {
  const extra = Object.keys(v).filter((k) => k !== "$step" && k !== "pointer");
  if (extra.length > 0) return `a step reference has only "$step" and "pointer", not ${JSON.stringify(extra[0])}`;
  const step = v["$step"];
  const pointer = v["pointer"] ?? "";
  if (typeof step !== "string" || step.length === 0) return `"$step" must name a step id`;
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/"))) return `"pointer" must be a JSON pointer such as "/total" (or "" for the whole output)`;
  return { step, pointer };
}

/**
 * Resolve an RFC 6901 JSON pointer.
 * @param doc the document
 * @param pointer `""` or `/a/0/b`
 * @returns the value, or undefined when absent
 * @example resolvePointer({ a: [1, 2] }, "/a/1") // 2
 */
export function resolvePointer(doc: JsonValue, pointer: string): JsonValue | undefined {
  if (pointer === "") return doc;
  if (!pointer.startsWith("/")) return undefined;
  let at: JsonValue | undefined = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object") return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      at = at[Number(key)];
    } else {
      at = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    }
    if (at === undefined) return undefined;
  }
  return at;
}

/**
 * Every `$step` reference in a step's arguments, with where it is (for the plan gate).
 * @param args the step's arguments
 * @param stepId the step (for messages)
 * @returns the references in document order
 * @throws ReachError `PLAN_STEP_REFERENCE_INVALID` for a malformed reference
 * @example stepReferences({ n: { $step: "count", pointer: "/words" } }, "report") // [{ step: "count", pointer: "/words", where: … }]
 */
export function stepReferences(args: JsonObject, stepId: string): StepReference[] {
  const out: StepReference[] = [];
  const walk = (v: JsonValue, where: string): void => {
    if (isStepRef(v)) {
      const ref = stepRefOf(v);
      if (typeof ref === "string") throw new ReachError("PLAN_STEP_REFERENCE_INVALID", `${where}: ${ref}`, { details: { stepId, reason: "malformed" } });
      out.push({ ...ref, where });
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${where}[${i}]`));
    else if (isObject(v) && !isInputRef(v)) for (const [k, x] of Object.entries(v)) walk(x, `${where}.${k}`);
  };
  walk(args, `step "${stepId}" arguments`);
  return out;
}

/**
 * Deepest nesting of a step's resolved arguments: twice the depth accepted from outside (`MAX_JSON_DEPTH`), so a plan
 * can wrap any input, and far enough below canonical JSON's 1000 levels that the `tool.invoked` event stays hashable.
 */
export const MAX_ARGUMENT_DEPTH = 2 * MAX_JSON_DEPTH;

/** A step output found by a reference, refused when it would nest the arguments deeper than MAX_ARGUMENT_DEPTH. */
function placed(found: JsonValue, depth: number, where: string, from: string): JsonValue {
  if (depth + jsonDepth(found, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH) {
    throw new ReachError("PROTO_SCHEMA_VIOLATION", `${where}: the output of step "${from}" placed here would nest the arguments deeper than ${MAX_ARGUMENT_DEPTH} levels; point at a shallower part of it`, {
      details: { from, maxDepth: MAX_ARGUMENT_DEPTH },
    });
  }
  return found;
}

function resolve(value: JsonValue, input: JsonValue, outputs: Readonly<Record<string, JsonValue>>, where: string, depth = 0): JsonValue {
  if (isInputRef(value)) {
    const pointer = value.$input;
    if (typeof pointer !== "string") throw new ReachError("PLAN_INVALID", `${where}: "$input" must be a JSON pointer string such as "/text"`);
    const found = resolvePointer(input, pointer);
    if (found === undefined) {
      throw new ReachError("PROTO_SCHEMA_VIOLATION", `${where}: the run input has nothing at ${JSON.stringify(pointer)}; pass it with --input`, {
        details: { pointer },
      });
    }
    return found;
  }
  if (isStepRef(value)) {
    const ref = stepRefOf(value);
    if (typeof ref === "string") throw new ReachError("PLAN_STEP_REFERENCE_INVALID", `${where}: ${ref}`, { details: { reason: "malformed" } });
    const output = Object.prototype.hasOwnProperty.call(outputs, ref.step) ? outputs[ref.step] : undefined;
    const found = output === undefined ? undefined : resolvePointer(output, ref.pointer);
    if (found === undefined) {
      const what = output === undefined ? `step "${ref.step}" has no output` : `the output of step "${ref.step}" has nothing at ${JSON.stringify(ref.pointer)}`;
      throw new ReachError("EXEC_STEP_REFERENCE_UNRESOLVED", `${where}: ${what}; point at a field the step's return_spec requires, or change the step that makes it`, {
        details: { from: ref.step, pointer: ref.pointer },
      });
    }
    return placed(found, depth, where, ref.step);
  }
  if (Array.isArray(value)) return value.map((v, i) => resolve(v, input, outputs, `${where}[${i}]`, depth + 1));
  // Built from entries (CreateDataProperty): a "__proto__" member stays a member, `out[k] = v` would set the prototype.
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, input, outputs, `${where}.${k}`, depth + 1)]));
  return value;
}

/**
 * Replace `{"$input": pointer}` values by the input's values and `{"$step": id, "pointer": p}` values by the named
 * step's output.
 * @param args the step's arguments
 * @param input the run input
 * @param stepId for messages
 * @param outputs the outputs of completed steps by step id (default none)
 * @returns new arguments
 * @throws ReachError `PROTO_SCHEMA_VIOLATION` when the input lacks a referenced value; `EXEC_STEP_REFERENCE_UNRESOLVED`
 *   when a step output lacks one
 * @example resolveArguments({ n: { $step: "count", pointer: "/words" } }, {}, "report", { count: { words: 3 } }) // { n: 3 }
 */
export function resolveArguments(args: JsonObject, input: JsonValue, stepId: string, outputs: Readonly<Record<string, JsonValue>> = {}): JsonObject {
  return resolve(args, input, outputs, `step "${stepId}" arguments`) as JsonObject;
}
