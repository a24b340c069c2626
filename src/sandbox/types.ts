/**
 * The contracts between the executor, the tool runners (wasm / component / js) and the host API. Every runner
 * reaches the outside only through a `HostApi`; every host operation is capability-checked and recorded.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { FuelMeter } from "./fuel/fuel-meter.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";


/**
 * The host operations, the same for every tool kind (seed 002's infrastructure tools). Requests and responses are JSON
 * objects; bytes travel as standard base64 in `data` fields (or UTF-8 text in `text` fields where noted).
 *
 * | op | request | response |
 * |---|---|---|
 * | `fs.read` | `{path}` | `{data}` (base64) |
 * | `fs.write` | `{path, data}` or `{path, text}` | `{size}` |
 * | `fs.list` | `{path}` | `{entries: [{name, type, size}]}` sorted by UTF-16 code units |
 * | `fs.stat` | `{path}` | `{type: "file"｜"dir", size}` |
 * | `fs.remove` | `{path, recursive?}` | `{}` |
 * | `http.fetch` (async only) | `{url, method?, headers?, data?｜text?}` | `{status, url, headers, data}` |
 * | `memory.get` | `{key}` | `{found, value}` (`value` null when not found) |
 * | `memory.set` | `{key, value}` | `{}` |
 * | `temp.write` | `{name, data｜text}` | `{path}` (under `temp/`) |
 * | `lines.read` | `{path, start, count}` | `{lines, total}` (0-based `start`; `count` ≤ 10,000) |
 * | `log` | `{level: "debug"｜"info"｜"warn"｜"error", message}` | `{}` |
 * | `artifact.emit` | `{name, mimeType, data｜text}` | ArtifactInfo `{artifactId, name, type, mimeType, path, sizeBytes, sha256, createdAt}` |
 * | `clock.now` | `{}` | `{ms, iso}` (virtual clock, advances 1 ms per read) |
 * | `random.bytes` | `{n}` (0..65536) | `{data}` (from the invocation's seeded stream) |
 * | `mcp.call` (async only; `mcp` tools only) | `{server, tool, arguments}` | the server's whole CallToolResult |
 * | `secret.placeholder` | `{name}` | `{placeholder}`: `{{secret:NAME}}` for a secret the pack declares (never the value) |
 */
export const HOST_OPS = [
  "fs.read",
  "fs.write",
  "fs.list",
  "fs.stat",
  "fs.remove",
  "http.fetch",
  "memory.get",
  "memory.set",
  "temp.write",
  "lines.read",
  "log",
  "artifact.emit",
  "clock.now",
  "random.bytes",
  "mcp.call",
  "secret.placeholder",
] as const;

/** A host operation name. */
export type HostOp = (typeof HOST_OPS)[number];

const OP_SET: ReadonlySet<string> = new Set(HOST_OPS);

/** True when `op` names a host operation. */
export function isHostOp(op: unknown): op is HostOp {
  return typeof op === "string" && OP_SET.has(op);
}

/**
 * Check a guest's host call, as every tool runtime receives it: an operation name and its request as JSON text.
 * @param op the operation name
 * @param text the request's JSON text
 * @param maxChars the longest request text accepted
 * @returns the operation and its request object
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` for an unknown op, a request too long, not JSON, or not an object
 * @example const [op, request] = hostRequest("clock.now", "{}", 65_536);
 */
export function hostRequest(op: string, text: string, maxChars: number): [HostOp, JsonObject] {
  if (!isHostOp(op)) throw new ReachError("EXEC_SANDBOX_VIOLATION", `"${op.slice(0, 40)}" is not a host operation`);
  if (text.length > maxChars) {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", `a ${op} request may be at most ${maxChars} characters of JSON`);
  }
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", `the ${op} request is not valid JSON`);
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", `the ${op} request must be a JSON object`);
  }
  return [op, request as JsonObject];
}

/**
 * What a running tool may call. Both methods validate `request` fully (the tool is hostile), check the pack's
 * capabilities, record request and response bytes on the tape, and throw `ReachError` on denial or failure
 * (a `POLICY_VIOLATION` halts the step: the runner must stop the tool and report it).
 */
export interface HostApi {
  /** Synchronous operations (all but `http.fetch` and `mcp.call`, which throw `EXEC_SANDBOX_VIOLATION` here). */
  invokeSync(op: HostOp, request: JsonObject): JsonObject;
  /** Any operation, including `http.fetch` and `mcp.call`. */
  invoke(op: HostOp, request: JsonObject): Promise<JsonObject>;
}

/**
 * A sandbox API level: which `reach` object the js and python preludes build (the host ops are the same at every
 * level). 1: the object as first published; 2: adds `reach.secret(name)` (js and python). A run records its level in
 * `request.json` (`sandboxApi`, absent for 1), so its run hash commits to it and a replay, fork or resume builds the
 * same object again: a prelude's bytes are part of the fuel every step that touches `reach` uses.
 */
export type SandboxApiLevel = 1 | 2;

/** The levels this build can run, oldest first. */
export const SANDBOX_API_LEVELS: readonly SandboxApiLevel[] = Object.freeze([1, 2] as const);

/** The level new runs record. */
export const SANDBOX_API_LEVEL: SandboxApiLevel = 2;

/**
 * Check an invocation's `sandboxApi` (a runner's argument check).
 * @param level the value (undefined: level 1)
 * @throws RangeError when it is not a level this build runs
 */
export function checkSandboxApi(level: unknown): void {
  if (level !== undefined && !SANDBOX_API_LEVELS.includes(level as SandboxApiLevel)) {
    throw new RangeError(`"invocation.sandboxApi" expected one of ${SANDBOX_API_LEVELS.join(", ")}, got ${String(level)}`);
  }
}

/** The tool kinds. */
export type ToolKind = "wasm" | "component" | "js" | "python" | "infra" | "mcp";

/** One tool invocation handed to a runner. */
export type ToolInvocation = {
  /** The tool's name in the pack. */
  toolName: string;
  /** Deterministic id of this invocation. */
  invocationId: string;
  /** The tool's code: WebAssembly bytes (wasm, component) or UTF-8 source (js: JavaScript, python: tool.py). */
  code: Uint8Array;
  /** The input, already validated against the tool's input schema. */
  input: JsonValue;
  /** The host API of this invocation. */
  host: HostApi;
  /** Wall-clock limit; the tool is stopped with EXEC_TOOL_TIMEOUT within timeoutMs + 1 s. */
  timeoutMs: number;
  /** Deterministic instruction budget (fuel); exhausting it is EXEC_RESOURCE_EXHAUSTED. */
  fuel: bigint;
  /**
   * The invocation's fuel meter (src/sandbox/fuel `FuelMeter`): its budget, its interrupt poll and a recorded stop
   * point. Runners bind their instances to it and call `start()` once the tool's own code is about to run
   * (compiling and preparing are not the tool's time). Default: a meter with budget `fuel` and no poll.
   */
  meter?: FuelMeter;
  /** Memory limit in bytes; exceeding it is EXEC_RESOURCE_EXHAUSTED. */
  memoryLimitBytes: number;
  /** The sandbox API level of the run (js and python tools; default 1, see {@link SandboxApiLevel}). */
  sandboxApi?: SandboxApiLevel;
};

/**
 * What ran: the SHA-256 of the tool's code as the pack holds it, and of the fuel-instrumented module that executed
 * it (the tool's own module, the QuickJS engine, or a component's core modules), null when it ran unmetered.
 * Recorded in the run's events, so a replay on another machine, which instruments again, compares them.
 */
export type ModuleIdentity = { sha256: string; metered: string | null };

/** What a runner returns. Runners never throw for tool misbehaviour: they report it here. */
export type ToolOutcome = (
  | { status: "success"; output: JsonValue; log: string; fuelUsed: bigint }
  | { status: "error"; error: ReachError; log: string; fuelUsed: bigint }
) & { module?: ModuleIdentity };

/** A tool runner for one kind. */
export interface ToolRunner {
  readonly kind: ToolKind;
  /** Run one invocation to completion (or to its limits). */
  run(invocation: ToolInvocation): Promise<ToolOutcome>;
}

/**
 * Default limits (docs/authoring.md "Limits, and how they are counted"): 30 s timeout, 10^9 fuel units, 256 MiB
 * memory.
 */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_FUEL = 1_000_000_000n;
export const DEFAULT_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;
