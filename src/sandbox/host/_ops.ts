/**
 * The synchronous host ops: validate → capability check → perform (the host records around them). See the op table
 * of sandbox/types.ts and the permission mapping of policy/capabilities.ts.
 * @module
 */
import { bytesToBase64 } from "../../canonical/mod.ts";
import { checkFsTarget, checkMemoryKey, checkOp } from "../../policy/mod.ts";
import type { CapabilityPolicy } from "../../policy/mod.ts";
import { ReachError, policyViolation } from "../../protocol/mod.ts";
import type { ViolationType } from "../../protocol/mod.ts";
import type { VirtualClock } from "../../determinism/mod.ts";
import type { RandomStream } from "../../determinism/mod.ts";
import type { HostOp } from "../types.ts";
import type { JsonObject } from "../../protocol/mod.ts";
import { normalizeWorkspacePath } from "../workspace/path.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { MIME_RE } from "./artifact-sink.ts";
import type { ArtifactStage } from "./artifact-sink.ts";
import type { LogLevel, LogSink } from "./log-sink.ts";
import { assertMemoryKey } from "./memory-store.ts";
import type { MemoryTransaction } from "./memory-store.ts";
import { body, int, invalid, optBool, shape, str } from "./_assert.ts";
import { isSecretName, secretPlaceholder } from "./secrets.ts";
import type { SecretBox } from "./secrets.ts";

/** Limits of the synchronous ops. */
export type OpLimits = {
  /** Largest file `fs.read` / `lines.read` will load, in bytes (default 16 MiB). */
  maxReadBytes: number;
  /** Largest body of `fs.write` / `temp.write` / `artifact.emit`, in bytes (default 16 MiB). */
  maxWriteBytes: number;
  /** Longest `log` message, in characters (default 64 KiB). */
  maxLogMessage: number;
};

/** Default limits. */
export const DEFAULT_OP_LIMITS: Readonly<OpLimits> = {
  maxReadBytes: 16 * 1024 * 1024,
  maxWriteBytes: 16 * 1024 * 1024,
  maxLogMessage: 64 * 1024,
};

/** Most lines `lines.read` returns per call (types.ts). */
export const MAX_LINES_PER_READ = 10_000;
/** Largest `random.bytes` request (types.ts). */
export const MAX_RANDOM_BYTES = 65_536;

/** What the sync ops work on. */
export type OpContext = {
  invocationId: string;
  policy: CapabilityPolicy;
  workspace: WorkspaceView;
  memory: MemoryTransaction;
  artifacts: ArtifactStage;
  clock: VirtualClock;
  random: RandomStream;
  log: LogSink;
  limits: OpLimits;
  /** The run's secrets (`secret.placeholder` names only declared ones); absent: the tool is given none. */
  secrets?: SecretBox | undefined;
};

const MAX_PATH = 4096;
const LEVELS: ReadonlySet<string> = new Set(["debug", "info", "warn", "error"]);
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encoder = new TextEncoder();
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const BAD_NAME = /[/\\\u0000-\u001f\u007f]|\p{Surrogate}/u;

function readCapped(ctx: OpContext, op: string, path: string): Uint8Array {
  const bytes = ctx.workspace.read(path); // authorises as fs.read; the copy is bounded by the workspace's file limit
  if (bytes.length > ctx.limits.maxReadBytes) {
    throw new ReachError("EXEC_RESOURCE_EXHAUSTED", `${op}: the file is ${bytes.length} bytes, over the read limit of ` +
      `${ctx.limits.maxReadBytes}; use lines.read on text, or split the file`, { details: { op, size: bytes.length, max: ctx.limits.maxReadBytes } });
  }
  return bytes;
}

/**
 * Run a workspace call on behalf of `op` (lines.read reads through fs.read, temp.write writes through fs.write):
 * a policy violation names `op` in its attemptedCapability, as seed 003 §4.3 asks ("the capability attempted").
 */
function asOp<T>(op: HostOp, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof ReachError) || err.code !== "POLICY_VIOLATION") throw err;
    const attempted = err.details["attemptedCapability"];
    if (typeof attempted !== "string") throw err;
    const colon = attempted.indexOf(":");
    const from = colon < 0 ? attempted : attempted.slice(0, colon);
    if (from === op) throw err;
    const { violationType, ...extra } = err.details;
    throw policyViolation(violationType as ViolationType, op + attempted.slice(from.length),
      err.message.startsWith(from) ? op + err.message.slice(from.length) : err.message, extra);
  }
}

function writeTarget(ctx: OpContext, op: HostOp, path: string, directory = false): string {
  const p = normalizeWorkspacePath(path, { operation: op, directory });
  checkFsTarget(ctx.policy, op, p);
  return p;
}

/**
 * Run one synchronous op (all but `http.fetch`).
 * @param ctx what the op works on
 * @param op the op
 * @param request the request (a plain JSON object, already canonicalised)
 * @returns the response
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a malformed request; `POLICY_VIOLATION` for a denial; workspace,
 *   memory and artifact errors as they come
 */
export function runSyncOp(ctx: OpContext, op: HostOp, request: unknown): JsonObject {
  switch (op) {
    case "fs.read": case "fs.write": case "fs.list": case "fs.stat": case "fs.remove":
      return runFsOp(ctx, op, request);
    case "memory.get": case "memory.set":
      return runMemoryOp(ctx, op, request);
    case "temp.write":
      return tempWrite(ctx, op, request);
    case "lines.read":
      return linesRead(ctx, op, request);
    case "log":
      return logMessage(ctx, op, request);
    case "artifact.emit":
      return emitArtifact(ctx, op, request);
    case "clock.now": {
      shape(op, request, []);
      checkOp(ctx.policy, op);
      const ms = ctx.clock.read();
      return { ms, iso: ctx.clock.iso(ms) };
    }
    case "random.bytes": {
      const n = int(op, shape(op, request, ["n"]), "n", 0, MAX_RANDOM_BYTES);
      checkOp(ctx.policy, op);
      return { data: bytesToBase64(ctx.random.bytes(n)) };
    }
    case "secret.placeholder":
      return secretOp(ctx, op, request);
    case "mcp.call":
      throw new ReachError("EXEC_SANDBOX_VIOLATION", "mcp.call is asynchronous; call it through invoke(), not invokeSync()", { details: { op } });
    case "http.fetch":
      throw new ReachError("EXEC_SANDBOX_VIOLATION", "http.fetch is asynchronous; call it through invoke(), not invokeSync()",
        { details: { op } });
    default: {
      const never: never = op;
      throw invalid(String(never), "op", "is not a host operation");
    }
  }
}

/**
 * `secret.placeholder` (`reach.secret(name)` in js and python): the placeholder of a secret the pack declares, never
 * its value; the same live and in replay (the declarations are in the capsule's pack).
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a malformed name, a name the pack does not declare, or a tool that
 *   is given no secrets (a planner, an infrastructure tool)
 */
function secretOp(ctx: OpContext, op: "secret.placeholder", request: unknown): JsonObject {
  const name = str(op, shape(op, request, ["name"]), "name", 200);
  const shown = JSON.stringify(name.slice(0, 64));
  if (!isSecretName(name)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `reach.secret(${shown}): a secret name is letters, digits and _ (not starting with a digit), ` +
      `at most 64 characters, as "secrets" in reach.json declares it`, { details: { op, field: "name", reason: "malformed" } });
  }
  const box = ctx.secrets;
  if (box === undefined) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `reach.secret(${shown}): this tool is given no secrets (planners and infrastructure ` +
      `tools never are); call it from a js, python or wasm tool of the pack`, { details: { op, field: "name", secret: name, reason: "no secrets" } });
  }
  if (!box.names.includes(name)) {
    const names = box.names;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `reach.secret(${shown}): the pack declares no secret ${name}; declare it under "secrets" in ` +
      `reach.json (with the hosts its value may be sent to)${names.length === 0 ? "" : `; it declares ${names.join(", ")}`}`,
    { details: { op, field: "name", secret: name, reason: "undeclared" } });
  }
  checkOp(ctx.policy, op);
  return { placeholder: secretPlaceholder(name) };
}

/** The `fs.*` ops. */
type FsOp = "fs.read" | "fs.write" | "fs.list" | "fs.stat" | "fs.remove";

/** `fs.read`, `fs.write`, `fs.list`, `fs.stat` and `fs.remove`. */
function runFsOp(ctx: OpContext, op: FsOp, request: unknown): JsonObject {
  switch (op) {
    case "fs.read": {
      const path = str(op, shape(op, request, ["path"]), "path", MAX_PATH);
      checkOp(ctx.policy, op, path);
      return { data: bytesToBase64(readCapped(ctx, op, path)) };
    }
    case "fs.write": {
      const r = shape(op, request, ["path"], ["data", "text"]);
      const path = str(op, r, "path", MAX_PATH);
      const bytes = body(op, r, ctx.limits.maxWriteBytes)!;
      checkOp(ctx.policy, op, path);
      ctx.workspace.write(writeTarget(ctx, op, path), bytes);
      return { size: bytes.length };
    }
    case "fs.list": {
      const path = str(op, shape(op, request, ["path"]), "path", MAX_PATH);
      checkOp(ctx.policy, op, path);
      return { entries: ctx.workspace.list(path).map((e) => ({ name: e.name, type: e.type, size: e.size })) };
    }
    case "fs.stat": {
      const path = str(op, shape(op, request, ["path"]), "path", MAX_PATH);
      checkOp(ctx.policy, op, path);
      const st = ctx.workspace.stat(path);
      return { type: st.type, size: st.size };
    }
    case "fs.remove": {
      const r = shape(op, request, ["path"], ["recursive"]);
      const path = str(op, r, "path", MAX_PATH);
      const recursive = optBool(op, r, "recursive", false);
      checkOp(ctx.policy, op, path);
      writeTarget(ctx, op, path, true);
      ctx.workspace.remove(path, { recursive });
      return {};
    }
  }
}

/** `memory.get` and `memory.set`. */
function runMemoryOp(ctx: OpContext, op: "memory.get" | "memory.set", request: unknown): JsonObject {
  const r = op === "memory.get" ? shape(op, request, ["key"]) : shape(op, request, ["key", "value"]);
  assertMemoryKey(r["key"]);
  checkOp(ctx.policy, op, r["key"]);
  checkMemoryKey(ctx.policy, op, r["key"]);
  if (op === "memory.set") {
    ctx.memory.set(r["key"], r["value"]);
    return {};
  }
  const got = ctx.memory.get(r["key"]);
  return { found: got.found, value: got.value };
}

/** `temp.write`: a file under `temp/`, written through fs.write. */
function tempWrite(ctx: OpContext, op: "temp.write", request: unknown): JsonObject {
  const r = shape(op, request, ["name"], ["data", "text"]);
  const name = str(op, r, "name", 1024, 1);
  const bytes = body(op, r, ctx.limits.maxWriteBytes)!;
  checkOp(ctx.policy, op, `temp/${name}`);
  const rel = normalizeWorkspacePath(name, { operation: op });
  if (rel === "") throw invalid(op, "name", "must name a file under temp/");
  const path = `temp/${rel}`;
  asOp(op, () => ctx.workspace.write(path, bytes));
  return { path };
}

/** `lines.read`: `count` lines from line `start` of a text file, read through fs.read. */
function linesRead(ctx: OpContext, op: "lines.read", request: unknown): JsonObject {
  const r = shape(op, request, ["path", "start", "count"]);
  const path = str(op, r, "path", MAX_PATH);
  const start = int(op, r, "start", 0, Number.MAX_SAFE_INTEGER);
  const count = int(op, r, "count", 0, MAX_LINES_PER_READ);
  checkOp(ctx.policy, op, path);
  const text = decoder.decode(asOp(op, () => readCapped(ctx, op, path)));
  const all = text.split("\n");
  if (all.length > 0 && all[all.length - 1] === "") all.pop(); // a final newline ends the last line
  const lines = all.slice(start, start + count).map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  return { lines, total: all.length };
}

/** `log`: one message at a level. */
function logMessage(ctx: OpContext, op: "log", request: unknown): JsonObject {
  const r = shape(op, request, ["level", "message"]);
  const level = str(op, r, "level", 8);
  if (!LEVELS.has(level)) throw invalid(op, "level", `expected "debug", "info", "warn" or "error"`);
  const message = str(op, r, "message", ctx.limits.maxLogMessage);
  checkOp(ctx.policy, op);
  ctx.log.append(level as LogLevel, message);
  return {};
}

/** `artifact.emit`: one named file with a MIME type, staged for the run's artifacts. */
function emitArtifact(ctx: OpContext, op: "artifact.emit", request: unknown): JsonObject {
  const r = shape(op, request, ["name", "mimeType"], ["data", "text"]);
  const name = str(op, r, "name", 255, 1);
  const mimeType = str(op, r, "mimeType", 255, 3);
  const bytes = body(op, r, ctx.limits.maxWriteBytes)!;
  if (name === "." || name === ".." || BAD_NAME.test(name) || encoder.encode(name).length > 255) {
    throw invalid(op, "name", "must be one file name of at most 255 bytes: no '/', '\\', control characters, '.' or '..'");
  }
  if (!MIME_RE.test(mimeType)) throw invalid(op, "mimeType", "expected a MIME type such as text/plain");
  checkOp(ctx.policy, op, name);
  const info = ctx.artifacts.emit(ctx.invocationId, name, mimeType, bytes, ctx.clock.iso());
  return { ...info } as JsonObject;
}
