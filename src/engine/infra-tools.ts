/**
 * Seed 002's infrastructure tools as the engine sees them: tools every run has without a manifest entry, named
 * exactly `write_memory`, `read_memory`, `write_temp`, `read_lines` and `exec_python`. A plan step (or a session
 * call) may call them by name; they run through `InfraRunner` (`src/sandbox/infra/`) on the run's own memory
 * store and `temp/`, recorded and bounded like any tool. A pack may not declare a tool of the same name.
 *
 * A caller may narrow them (`RunRequest.infraTools`: a federation delegate passes the ones its delegated scope names,
 * seed 003 §6.2): a plan that calls another is refused before it runs ({@link infraRefusal}) and the run leaves no
 * record, so every capsule the engine writes is one the narrowing did not touch and replays without it.
 * @module
 */
import { policyViolation } from "../protocol/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import { INFRA_TOOL_NAMES, INFRA_TOOL_SCHEMAS, isInfraTool } from "../sandbox/mod.ts";
import type { InfraToolName } from "../sandbox/mod.ts";
import type { PackTool } from "./pack.ts";

export { INFRA_TOOL_NAMES, isInfraTool };

const EMPTY = new Uint8Array(0);
const TOOLS: ReadonlyMap<string, PackTool> = new Map(
  INFRA_TOOL_NAMES.map((name) => [name, Object.freeze({ name, definition: { kind: "infra", module: `builtin:${name}`, ...INFRA_TOOL_SCHEMAS[name] }, code: EMPTY, codeHash: "" }) as PackTool]),
);

/**
 * The infrastructure tool of that name.
 * @param name a tool name
 * @returns the built-in tool, or undefined when `name` is not one
 * @example infraTool("write_memory")?.definition.kind // "infra"
 */
export function infraTool(name: string): PackTool | undefined {
  return TOOLS.get(name);
}

/**
 * Every infrastructure tool, for tools/list and planners.
 * @returns the tools in their documented order
 * @example infraTools().map((t) => t.name)
 */
export function infraTools(): PackTool[] {
  return INFRA_TOOL_NAMES.map((n) => TOOLS.get(n as InfraToolName)!);
}

/**
 * Whether a run may call a tool under its infrastructure narrowing.
 * @param tool a tool name
 * @param allowed the infrastructure tools the run may call (undefined: all)
 * @returns false only for an infrastructure tool outside `allowed`
 * @example infraAllowed("exec_python", ["read_memory"]) // false
 */
export function infraAllowed(tool: string, allowed: readonly string[] | undefined): boolean {
  return allowed === undefined || !isInfraTool(tool) || allowed.includes(tool);
}

/**
 * The refusal of the first step that calls an infrastructure tool outside `allowed`, or null.
 * @param steps a gated plan's steps
 * @param allowed the infrastructure tools the run may call (undefined: all)
 * @returns `POLICY_VIOLATION` (`UNDEFINED_TOOL`, details `infraTool` and `stepId`), or null when every step may run
 * @example infraRefusal([{ id: "py", tool: "exec_python" }], []) // POLICY_VIOLATION
 */
export function infraRefusal(steps: readonly { id: string; tool: string }[], allowed: readonly string[] | undefined): ReachError | null {
  const step = steps.find((s) => !infraAllowed(s.tool, allowed));
  if (step === undefined) return null;
  const granted = allowed === undefined || allowed.length === 0 ? "none" : allowed.join(", ");
  return policyViolation("UNDEFINED_TOOL", step.tool, `step "${step.id}" calls the infrastructure tool ${step.tool}, which this run may not use (allowed: ${granted}); nothing of this plan ran`, { infraTool: step.tool, stepId: step.id });
}
