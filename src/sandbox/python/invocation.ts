/**
 * What the interpreter's imports answer for during one invocation (`GuestHooks`): the job, the host API behind
 * `_reach.call`, virtual time and seeded randomness through the host (so both are on the tape), the memory cap,
 * fuel for the work imports do outside the metered code, and bounded capture of stdout and log lines. There is no
 * wall clock here: the invocation's fuel meter stops a run that must stop (an abort, the watchdog).
 *
 * Host calls cross as JSON text only: `_reach.call(op, requestJson)` returns `{"ok":true,"value":…}` or
 * `{"ok":false,"code":…,"message":…}`. An error that is not a `ReachError` reaches Python only as "the host
 * operation failed" (no host stack or path). A halting error (`../halting.ts`: a policy denial, a replay divergence,
 * a stop) halts at once: the call never returns to Python, the interpreter is dropped and the error is the outcome
 * (seed 003 §4.3 "Immediate Halt").
 * @module
 */
import { base64ToBytes } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { haltsTool } from "../halting.ts";
import { hostRequest, isHostOp } from "../types.ts";
import type { HostApi } from "../types.ts";
import type { JsonObject, JsonValue } from "../../protocol/mod.ts";
import { GuestStop } from "./imports.ts";
import type { ChannelName, GuestHooks } from "./imports.ts";
import { concatBytes } from "../../canonical/mod.ts";

/** What an invocation runs: a tool module (`main(input, reach)`) or an `exec_python` snippet. */
export type Job = { kind: "tool" | "exec"; code: string; input: JsonValue; toolName: string };

/** Limits an invocation's hooks enforce. */
export type HookLimits = {
  memoryCapBytes: number;
  /** Charge an import call that copied `bytes` to the invocation's fuel meter. */
  charge: (bytes: number) => void;
  maxStdoutBytes: number;
  maxLogChars: number;
  maxRequestChars: number;
  /** Send stdout to the log (tools) instead of keeping it apart (`exec_python`). */
  stdoutToLog: boolean;
};

/** The hooks of one invocation, and what it left behind. */
export class InvocationHooks implements GuestHooks {
  readonly memoryCapBytes: number;
  /** The first halting error the host raised. */
  violation: ReachError | undefined;
  /** A growth of the memory past the cap was refused. */
  memoryExhausted = false;
  /** The JSON text the driver handed back with `finish`. */
  result: string | undefined;
  readonly #job: Job;
  readonly #host: HostApi;
  readonly #limits: HookLimits;
  readonly #stdout: Uint8Array[] = [];
  #stdoutBytes = 0;
  #stdoutTruncated = false;
  readonly #log: string[] = [];
  #logChars = 0;
  #ticks = 0;

  /**
   * @param job what runs
   * @param host the invocation's host API
   * @param limits see {@link HookLimits}
   */
  constructor(job: Job, host: HostApi, limits: HookLimits) {
    this.#job = job;
    this.#host = host;
    this.#limits = limits;
    this.memoryCapBytes = limits.memoryCapBytes;
  }

  memoryRefused(): void {
    this.memoryExhausted = true;
  }

  channel(name: ChannelName, args: ReadonlyArray<string | null>): string {
    let reply = "";
    if (name === "begin") reply = `${this.#job.kind}\n${JSON.stringify(this.#job.input)}\n${this.#job.code}`;
    else if (name === "finish") this.result = typeof args[0] === "string" && args.length === 1 ? args[0] : this.result;
    else reply = this.#call(args);
    this.#limits.charge(args.reduce((n, a) => n + (a?.length ?? 0), reply.length));
    return reply;
  }

  write(fd: 1 | 2, bytes: Uint8Array): void {
    this.#limits.charge(bytes.length);
    if (this.#limits.stdoutToLog) {
      this.#addLog(new TextDecoder().decode(bytes));
      return;
    }
    const room = this.#limits.maxStdoutBytes - this.#stdoutBytes;
    if (bytes.length > room) this.#stdoutTruncated = true;
    const kept = bytes.subarray(0, Math.max(0, room));
    if (kept.length > 0) this.#stdout.push(kept.slice());
    this.#stdoutBytes += kept.length;
    void fd; // stderr is captured with stdout (Python's print goes to stdout; tracebacks come back separately)
  }

  timeMs(): number {
    const ms = this.#sync("clock.now", {})["ms"];
    if (typeof ms !== "number" || !Number.isFinite(ms)) throw this.#broken("clock.now");
    return ms;
  }

  ticksMs(): number {
    this.#limits.charge(0);
    return this.#ticks++;
  }

  randomU32(): number {
    const data = this.#sync("random.bytes", { n: 4 })["data"];
    const bytes = typeof data === "string" ? base64ToBytes(data) : new Uint8Array(0);
    if (bytes.length !== 4) throw this.#broken("random.bytes");
    return new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
  }

  /** The captured stdout (UTF-8, invalid sequences replaced), with a marker when it was cut. */
  get stdout(): string {
    const text = new TextDecoder().decode(concatBytes(this.#stdout, this.#stdoutBytes));
    return this.#stdoutTruncated ? `${text}\n[reach] stdout truncated after ${this.#limits.maxStdoutBytes} bytes\n` : text;
  }

  /** The log: accepted `reach.log` lines as `[level] message`, and (tools) what the tool printed. */
  get log(): string {
    return this.#log.join("");
  }

  /** `_reach.call(op, requestJson)` → an envelope. */
  #call(args: ReadonlyArray<string | null>): string {
    let op: string | null | undefined;
    let request: JsonObject;
    try {
      [op, request] = this.#readRequest(args);
    } catch (err) {
      return envelopeError(err);
    }
    try {
      const value = this.#sync(op, request);
      if (op === "log") this.#addLog(`[${String(request["level"])}] ${String(request["message"])}\n`);
      return JSON.stringify({ ok: true, value });
    } catch (err) {
      if (err instanceof GuestStop) throw err;
      return envelopeError(err);
    }
  }

  #readRequest(args: ReadonlyArray<string | null>): [string, JsonObject] {
    const [op, text] = args;
    if (args.length !== 2 || typeof op !== "string" || typeof text !== "string") {
      throw new ReachError("EXEC_SANDBOX_VIOLATION", "a host call needs an operation name and a JSON request string");
    }
    return hostRequest(op, text, this.#limits.maxRequestChars);
  }

  /** One synchronous host call; a halting error stops the invocation. */
  #sync(op: string, request: JsonObject): JsonObject {
    if (!isHostOp(op)) throw new ReachError("EXEC_SANDBOX_VIOLATION", `"${op}" is not a host operation`);
    let response: unknown;
    try {
      response = this.#host.invokeSync(op, request);
    } catch (err) {
      if (err instanceof ReachError && haltsTool(err)) {
        this.violation ??= err;
        throw new GuestStop(err);
      }
      throw err;
    }
    if (typeof response !== "object" || response === null || Array.isArray(response)) {
      throw new ReachError("EXEC_TOOL_FAILED", `the host answered ${op} with something other than a JSON object`);
    }
    return response as JsonObject;
  }

  #broken(op: string): GuestStop {
    return new GuestStop(new ReachError("EXEC_TOOL_FAILED", `the host answered ${op} with an unexpected value`));
  }

  #addLog(text: string): void {
    if (this.#logChars > this.#limits.maxLogChars) return;
    this.#logChars += text.length;
    this.#log.push(this.#logChars > this.#limits.maxLogChars ? "[reach] log truncated\n" : text);
  }
}

function envelopeError(err: unknown): string {
  if (err instanceof ReachError) return JSON.stringify({ ok: false, code: err.code, message: err.message });
  return JSON.stringify({ ok: false, code: "EXEC_TOOL_FAILED", message: "the host operation failed" });
}
