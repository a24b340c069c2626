/**
 * Seed 002's infrastructure tools as the engine sees them: tools every run has without a manifest entry, named
 * exactly `write_memory`, `read_memory`, `write_temp`, `read_lines` and `exec_python`. A plan step (or a session
 * call) may call them by name; they run through `InfraRunner` (`src/sandbox/infra/`) on the run's own memory
 * store and `temp/`, recorded and bounded like any tool. A pack may not declare a tool of the same name.
 * @module
 */
import { INFRA_TOOL_NAMES, INFRA_TOOL_SCHEMAS, isInfraTool } from "../sandbox/infra/runner.ts";
import type { InfraToolName } from "../sandbox/infra/runner.ts";
import type { JsonObject } from "../sandbox/types.ts";
import type { PackTool } from "./pack.ts";

export { INFRA_TOOL_NAMES, isInfraTool };

/** The definition of an infrastructure tool (no module: it is built in). */
export type InfraDefinition = { kind: "infra"; module: string; description: string; inputSchema: JsonObject; outputSchema: JsonObject };

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
