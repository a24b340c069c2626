/**
 * Seed 002's infrastructure tools, always available inside every run with no manifest entry: `write_memory`,
 * `read_memory`, `write_temp`, `read_lines` on the run's own memory store and `temp/`, and `exec_python` (Python in
 * the sandbox, `../python/`). Each is a thin mapping onto the one host API, so every call is capability-checked,
 * charged to the invocation's fuel and recorded on the tape like any tool's host call.
 *
 * | tool | arguments | result | host op |
 * |---|---|---|---|
 * | `write_memory` | `{key: string, value: JSON}` | `{ok: true}` | `memory.set` |
 * | `read_memory` | `{key: string}` | `{value}` (null when absent) | `memory.get` |
 * | `write_temp` | `{name: string, content: string}` | `{path}` (under `temp/`) | `temp.write` |
 * | `read_lines` | `{path: string, start?: int, end?: int}` (0-based, `end` exclusive) | `{lines: string[]}` | `lines.read` |
 * | `exec_python` | `{code: string, input?: JSON}` | `{stdout: string, result: JSON}` | the Python sandbox |
 * @module
 */
import { ReachError, toReachError } from "../../protocol/mod.ts";
import type { FuelMeter } from "../fuel/fuel-meter.ts";
import { FuelMeter as Meter } from "../fuel/fuel-meter.ts";
import type { ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import type { JsonObject, JsonValue } from "../../protocol/mod.ts";
import { MAX_MEMORY_KEY_LENGTH } from "../host/memory-store.ts";

/** The names of the infrastructure tools. */
export const INFRA_TOOL_NAMES = ["write_memory", "read_memory", "write_temp", "read_lines", "exec_python"] as const;
/** An infrastructure tool name. */
export type InfraToolName = (typeof INFRA_TOOL_NAMES)[number];

/** True when `name` is an infrastructure tool. */
export function isInfraTool(name: string): name is InfraToolName {
  return (INFRA_TOOL_NAMES as readonly string[]).includes(name);
}

/** Most lines one `read_lines` call returns (the host op's own cap). */
export const MAX_LINES = 10_000;

/** JSON Schemas of the infrastructure tools' arguments and results (tools/list, the plan gate, the executor). */
export const INFRA_TOOL_SCHEMAS: Readonly<Record<InfraToolName, { description: string; inputSchema: JsonObject; outputSchema: JsonObject }>> = {
  write_memory: {
    description: "Store a JSON value under a key in the run's memory store (seed 002 infra tool); keys of up to 256 printable characters, under a prefix the pack declares (memory://…), values up to 1 MiB of canonical JSON.",
    inputSchema: { type: "object", properties: { key: { type: "string", minLength: 1, maxLength: MAX_MEMORY_KEY_LENGTH }, value: { description: "any JSON value, at most 1 MiB as canonical JSON" } }, required: ["key", "value"], additionalProperties: false },
    outputSchema: { type: "object", properties: { ok: { const: true } }, required: ["ok"] },
  },
  read_memory: {
    description: "Read the JSON value stored under a key in the run's memory store; value is null when absent.",
    inputSchema: { type: "object", properties: { key: { type: "string", minLength: 1, maxLength: MAX_MEMORY_KEY_LENGTH } }, required: ["key"], additionalProperties: false },
    outputSchema: { type: "object", properties: { value: {} }, required: ["value"] },
  },
  write_temp: {
    description: "Write a text file under the run's temp/ folder; returns its workspace path.",
    inputSchema: { type: "object", properties: { name: { type: "string", minLength: 1, maxLength: 255 }, content: { type: "string" } }, required: ["name", "content"], additionalProperties: false },
    outputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  read_lines: {
    description: "Read lines [start, end) of a text file in the workspace (0-based, end exclusive; default: from 0, up to 10,000 lines).",
    inputSchema: { type: "object", properties: { path: { type: "string", minLength: 1 }, start: { type: "integer", minimum: 0 }, end: { type: "integer", minimum: 0 } }, required: ["path"], additionalProperties: false },
    outputSchema: { type: "object", properties: { lines: { type: "array", items: { type: "string" } } }, required: ["lines"] },
  },
  exec_python: {
    description: "Run a Python snippet (MicroPython, sandboxed, deterministic); `input` is bound to the name input, `result` is read back.",
    inputSchema: { type: "object", properties: { code: { type: "string", minLength: 1 }, input: {} }, required: ["code"], additionalProperties: false },
    outputSchema: { type: "object", properties: { stdout: { type: "string" }, result: {} }, required: ["stdout", "result"] },
  },
};

/** Runs `exec_python` (the Python sandbox), when this build has one. */
export type PythonExec = (request: unknown, invocation: Omit<ToolInvocation, "code" | "input">) => Promise<ToolOutcome>;

function arg(input: JsonValue, name: string): JsonValue | undefined {
  return input !== null && typeof input === "object" && !Array.isArray(input) ? (input as JsonObject)[name] : undefined;
}

/** The runner of the infrastructure tools (kind `infra`): host calls only, no sandboxed code of its own. */
export class InfraRunner implements ToolRunner {
  readonly kind = "infra" as const;
  readonly #python: (() => Promise<PythonExec>) | undefined;

  /** @param python the Python sandbox for `exec_python` (absent: `exec_python` is EXEC_RESOURCE_UNAVAILABLE) */
  constructor(python?: () => Promise<PythonExec>) {
    this.#python = python;
  }

  /**
   * Run one infrastructure tool call (`invocation.toolName` names it; `input` was checked against its schema).
   * @param invocation the invocation
   * @returns the outcome; host errors are reported, never thrown
   */
  async run(invocation: ToolInvocation): Promise<ToolOutcome> {
    const meter: FuelMeter = invocation.meter ?? new Meter({ budget: invocation.fuel });
    const name = invocation.toolName;
    if (name === "exec_python") {
      if (this.#python === undefined) return { status: "error", error: new ReachError("EXEC_RESOURCE_UNAVAILABLE", "exec_python: this build has no Python sandbox"), log: "", fuelUsed: 0n };
      const { code: _code, input, ...rest } = invocation;
      return (await this.#python())(input, { ...rest, meter });
    }
    meter.start();
    try {
      const output = this.#call(name, invocation);
      return { status: "success", output, log: "", fuelUsed: meter.release() };
    } catch (err) {
      return { status: "error", error: toReachError(err, "EXEC_TOOL_FAILED"), log: "", fuelUsed: meter.release() };
    }
  }

  #call(name: string, inv: ToolInvocation): JsonObject {
    const host = inv.host;
    const input = inv.input;
    switch (name) {
      case "write_memory":
        host.invokeSync("memory.set", { key: arg(input, "key") ?? null, value: arg(input, "value") ?? null });
        return { ok: true };
      case "read_memory": {
        const r = host.invokeSync("memory.get", { key: arg(input, "key") ?? null });
        return { value: r["found"] === true ? (r["value"] ?? null) : null };
      }
      case "write_temp": {
        const r = host.invokeSync("temp.write", { name: arg(input, "name") ?? null, text: arg(input, "content") ?? null });
        return { path: r["path"] ?? null };
      }
      case "read_lines": {
        const start = (arg(input, "start") as number | undefined) ?? 0;
        const end = arg(input, "end") as number | undefined;
        const count = end === undefined ? MAX_LINES : Math.max(0, Math.min(MAX_LINES, end - start));
        if (count === 0) return { lines: [] };
        const r = host.invokeSync("lines.read", { path: arg(input, "path") ?? null, start, count });
        return { lines: r["lines"] ?? [] };
      }
      default:
        throw new ReachError("POLICY_VIOLATION", `"${name}" is not an infrastructure tool`, { details: { violationType: "UNDEFINED_TOOL", attemptedCapability: name } });
    }
  }
}
