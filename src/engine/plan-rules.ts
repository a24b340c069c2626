/**
 * Seed 001's validation rules applied to a plan file one by one (`reach-wasm plan validate`, the counterpart of seed
 * 001's `rgpt-plan-validate`, §8 "Tooling"). Unlike the plan gate (`plan-gate.ts`), which stops at the first rule a
 * plan breaks before anything runs, this reports every rule with its section and verdict, and which tasks reach-wasm
 * can execute; it needs no pack.
 *
 * | rule | section | a plan passes when |
 * |---|---|---|
 * | `object` | §3 | the file holds a JSON object |
 * | `required-fields` | §3 "Required Fields" | it has all twelve (`tasks`, or reach-wasm's `steps`) |
 * | `schema` | §3 | each field has its type: `contract_version` `S2-B-05.v1`, `created_at` RFC 3339 UTC, … (`plan.ts`) |
 * | `status-approved` | §4 Structural | `status` is `APPROVED` |
 * | `at-least-one-task` | §4 Structural | `tasks` (or `steps`, not both) has at least one entry |
 * | `scope-allowed` | §4 Structural | `scope.allowed` exists and is not empty |
 * | `risk-level` | §4 Risk | `risk.level` is at most 3 |
 * | `risk-approval` | §4 Risk | at level 3, the plan records an explicit approval: a signed approval record, or `approval` with `approved_by` (not `auto`) and `required` not false |
 * | `scope` | §4 Scope | no task or step uses a tool in `scope.forbidden` / `scope.denied`, and each one reach-wasm executes uses a tool in `scope.allowed` |
 * | `delegation` | §4 Delegation | always: reach-wasm delegates nothing, and the plan is locked by its hash (no new tasks, no mutation) |
 *
 * Executability is reported per task, not as a rule of seed 001 (a plan can be valid and still be work for a person):
 * a task reach-wasm cannot execute carries `PLAN_TASK_NOT_EXECUTABLE` and why (`taskRefusal`).
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseJsonText } from "../protocol/mod.ts";
import { issueMessage, parseOrThrow } from "../protocol/mod.ts";
import { BlueprintSchema, PlanTaskSchema, taskRefusal } from "../protocol/mod.ts";
import type { PlanTask } from "../protocol/mod.ts";
import { MAX_RISK_LEVEL } from "./plan-gate.ts";

/** Seed 001 §3's required fields, in its order. */
export const REQUIRED_PLAN_FIELDS = ["contract_version", "plan_id", "goal_id", "created_at", "planner", "status", "risk", "scope", "tasks", "execution", "approval", "success_criteria"] as const;

/** One rule's verdict. */
export type PlanRuleResult = { rule: string; section: string; ok: boolean; message: string };
/** Whether reach-wasm can execute one task (or step). */
export type TaskVerdict = { taskId: string; tool: string | null; executable: boolean; code?: "PLAN_TASK_NOT_EXECUTABLE"; reason?: string; message?: string };
/** The verdict on a plan file. */
export type PlanValidation = {
  /** Every rule passed. */
  valid: boolean;
  /** Every task is one reach-wasm executes (false when there are none). */
  executable: boolean;
  planId: string | null;
  /** SHA-256 of the file's bytes as read (seed 001 §6), lowercase hex. */
  planSha256: string;
  rules: PlanRuleResult[];
  tasks: TaskVerdict[];
};

/** Largest plan file read. */
export const MAX_PLAN_FILE_BYTES = 4 * 1024 * 1024;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Read a plan file's bytes as JSON: UTF-8, one leading byte-order mark allowed (seed 001's origin wrote some plans
 * with one), strict JSON (`parseJsonText`).
 * @param bytes the file
 * @param what its name, for messages
 * @returns the JSON value
 * @throws ReachError `PLAN_INVALID` when it is too large, not UTF-8 or not JSON
 */
export function readPlanJson(bytes: Uint8Array, what: string): unknown {
  if (bytes.length > MAX_PLAN_FILE_BYTES) throw new ReachError("PLAN_INVALID", `${what} is larger than ${MAX_PLAN_FILE_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ReachError("PLAN_INVALID", `${what} is not valid UTF-8; save it as UTF-8 JSON`);
  }
  return parseJsonText(text, { what, code: "PLAN_INVALID" });
}

/**
 * Apply seed 001's rules to a plan file.
 * @param bytes the file's bytes
 * @param what its name, for messages
 * @returns every rule's verdict and each task's executability
 * @throws ReachError `PLAN_INVALID` when the bytes are not a JSON document at all ({@link readPlanJson})
 * @example validatePlanFile(bytes, "PLAN_P1.json").valid
 */
export function validatePlanFile(bytes: Uint8Array, what: string): PlanValidation {
  const planSha256 = sha256Hex(bytes);
  const doc = readPlanJson(bytes, what);
  const rules: PlanRuleResult[] = [];
  const add = (rule: string, section: string, ok: boolean, message: string) => void rules.push({ rule, section, ok, message });
  if (!isObj(doc)) {
    add("object", "§3", false, `${what} holds ${Array.isArray(doc) ? "an array" : doc === null ? "null" : `a ${typeof doc}`}, not a plan object`);
    return { valid: false, executable: false, planId: null, planSha256, rules, tasks: [] };
  }
  add("object", "§3", true, "a JSON object");
  const missing = REQUIRED_PLAN_FIELDS.filter((f) => !Object.hasOwn(doc, f) && !(f === "tasks" && Object.hasOwn(doc, "steps")));
  add("required-fields", "§3 Required Fields", missing.length === 0, missing.length === 0 ? "all twelve present" : `missing: ${missing.join(", ")}`);
  try {
    parseOrThrow(BlueprintSchema(), doc, "PLAN_INVALID", what);
    add("schema", "§3", true, "every field has its type");
  } catch (err) {
    add("schema", "§3", false, (err as Error).message.replace(/\n/g, " "));
  }
  structuralRules(doc, add);
  riskRules(doc, add);
  const tasks = taskVerdicts(doc);
  add("scope", "§4 Scope", ...scopeRule(doc, tasks));
  add("delegation", "§4 Delegation", true, isObj(isObj(doc["execution"]) ? (doc["execution"] as Obj)["delegation"] : null)
    ? "reach-wasm delegates to no one: the locked plan (its hash) admits no new task and no change"
    : "no delegation");
  return {
    valid: rules.every((r) => r.ok),
    executable: tasks.length > 0 && tasks.every((t) => t.executable),
    planId: typeof doc["plan_id"] === "string" ? doc["plan_id"] : null,
    planSha256,
    rules,
    tasks,
  };
}

type Add = (rule: string, section: string, ok: boolean, message: string) => void;

function structuralRules(doc: Obj, add: Add): void {
  add("status-approved", "§4 Structural", doc["status"] === "APPROVED", doc["status"] === "APPROVED" ? "APPROVED" : `status is ${JSON.stringify(doc["status"] ?? null)}; only an APPROVED plan executes`);
  const both = Object.hasOwn(doc, "tasks") && Object.hasOwn(doc, "steps");
  const work = doc["tasks"] ?? doc["steps"];
  const n = Array.isArray(work) ? work.length : 0;
  add("at-least-one-task", "§4 Structural", !both && n > 0, both ? "the plan has both tasks and steps; write its work as one or the other" : n > 0 ? `${n} task${n === 1 ? "" : "s"}` : "no executable tasks found: tasks is missing or empty");
  const allowed = isObj(doc["scope"]) ? (doc["scope"] as Obj)["allowed"] : undefined;
  const okScope = Array.isArray(allowed) && allowed.length > 0;
  add("scope-allowed", "§4 Structural", okScope, okScope ? `${(allowed as unknown[]).length} allowed` : "scope.allowed is not defined (missing or empty)");
}

function riskRules(doc: Obj, add: Add): void {
  const level = isObj(doc["risk"]) ? (doc["risk"] as Obj)["level"] : undefined;
  if (typeof level !== "number") {
    add("risk-level", "§4 Risk", false, "risk.level is missing or not a number");
    add("risk-approval", "§4 Risk", false, "without risk.level, whether explicit approval is required cannot be told");
    return;
  }
  add("risk-level", "§4 Risk", level <= MAX_RISK_LEVEL, level <= MAX_RISK_LEVEL ? `level ${level}` : `risk level ${level} > ${MAX_RISK_LEVEL} is not executable`);
  if (level !== MAX_RISK_LEVEL) {
    add("risk-approval", "§4 Risk", true, `level ${level}: no explicit approval required`);
    return;
  }
  const a = doc["approval"];
  const signed = isObj(a) && a["type"] === "reach-wasm/plan-approval";
  const recorded = isObj(a) && typeof a["approved_by"] === "string" && a["approved_by"] !== "" && a["approved_by"] !== "auto" && a["required"] !== false;
  add("risk-approval", "§4 Risk", signed || recorded, signed || recorded
    ? `risk ${MAX_RISK_LEVEL} with an explicit approval (${signed ? "a signed record" : `by ${JSON.stringify(a["approved_by"])}`}); \`reach-wasm run\` still needs --approve or a record signed by a trusted key`
    : `risk ${MAX_RISK_LEVEL} requires explicit approval: approval.approved_by (not "auto") with approval.required not false, or a signed approval record (reach-wasm approve PLAN_HASH)`);
}

function taskVerdicts(doc: Obj): TaskVerdict[] {
  if (Array.isArray(doc["steps"]) && !Object.hasOwn(doc, "tasks")) {
    return doc["steps"].map((s: unknown) => ({ taskId: String(isObj(s) ? s["id"] : "?"), tool: isObj(s) && typeof s["tool"] === "string" ? s["tool"] : null, executable: true }));
  }
  if (!Array.isArray(doc["tasks"])) return [];
  return doc["tasks"].map((t: unknown, i: number) => {
    const parsed = PlanTaskSchema().safeParse(t, { jitless: true });
    const id = isObj(t) && typeof t["task_id"] === "string" ? t["task_id"] : `tasks[${i}]`;
    if (!parsed.success) return { taskId: id, tool: null, executable: false, code: "PLAN_TASK_NOT_EXECUTABLE", reason: "malformed", message: `tasks[${i}] is not a task: ${parsed.error.issues.map((x) => `${x.path.join(".")} ${issueMessage(x)}`).join("; ")}` };
    const task: PlanTask = parsed.data;
    const why = taskRefusal(task);
    const tool = task.tools?.length === 1 ? task.tools[0]! : null;
    return why === null ? { taskId: id, tool, executable: true } : { taskId: id, tool, executable: false, code: "PLAN_TASK_NOT_EXECUTABLE", reason: why.reason, message: `task "${id}" ${why.message}` };
  });
}

function scopeRule(doc: Obj, tasks: readonly TaskVerdict[]): [boolean, string] {
  const scope = isObj(doc["scope"]) ? (doc["scope"] as Obj) : {};
  const list = (k: string): string[] => (Array.isArray(scope[k]) ? (scope[k] as unknown[]).filter((x): x is string => typeof x === "string") : []);
  const allowed = new Set(list("allowed"));
  const denied = new Set([...list("denied"), ...list("forbidden")]);
  const used = (Array.isArray(doc["tasks"]) ? doc["tasks"] : []).flatMap((t: unknown) => (isObj(t) && Array.isArray(t["tools"]) ? (t["tools"] as unknown[]).filter((x): x is string => typeof x === "string").map((tool) => [String(t["task_id"]), tool]) : []));
  const forbidden = [...used, ...tasks.filter((t) => t.tool !== null).map((t) => [t.taskId, t.tool!])].find(([, tool]) => denied.has(tool!));
  if (forbidden !== undefined) return [false, `task "${forbidden[0]}" uses ${JSON.stringify(forbidden[1])}, which scope.forbidden (or denied) names`];
  const outside = tasks.find((t) => t.executable && t.tool !== null && !allowed.has(t.tool));
  if (outside !== undefined) return [false, `task "${outside.taskId}" runs tool ${JSON.stringify(outside.tool)}, which is not in scope.allowed`];
  return [true, "every tool a task runs is within scope.allowed; none is forbidden"];
}
