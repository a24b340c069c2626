/**
 * The `python` tool runner, and the engine of the `exec_python` infra tool (README.md in this folder). A tool is a
 * module `tool.py` defining `main(input, reach)`, which returns a JSON-serialisable value; a snippet is Python
 * source whose variable `result` is the result. Both run in MicroPython on a fuel-metered WebAssembly instance with
 * our own imports (`imports.ts`), every invocation starting from the same prepared state (`session.ts`).
 *
 * Limits, and what stops which bomb:
 * - fuel (the interpreter's WebAssembly is instrumented, `../fuel/`) → any loop, in Python or in C →
 *   `EXEC_RESOURCE_EXHAUSTED` (reason `fuel`) at the same tick on every run; the invocation's meter also stops it at
 *   a refill when the run is aborted or its wall-clock watchdog fires (`EXEC_ABORTED` / `EXEC_TOOL_TIMEOUT` reason
 *   `watchdog`, with the fuel count); import calls (host calls, writes, ticks) cost fuel too;
 * - memory: the linear memory may grow to the module's initial memory plus `memoryLimitBytes` → `MemoryError` →
 *   `EXEC_RESOURCE_EXHAUSTED` (reason `memory`);
 * - recursion: MicroPython's C-stack check (≈280 Python frames) and its Python stack (64 KiB) →
 *   `EXEC_RESOURCE_EXHAUSTED` (reason `stack`);
 * - output (JSON of the result) ≤ `maxOutputBytes`, stdout ≤ `maxStdoutBytes` (cut with a marker), log ≤
 *   `maxLogChars`.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { checkSandboxApi } from "../types.ts";
import type { SandboxApiLevel, ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import { interpreterMemoryCap, PythonEngine } from "./interpreter.ts";
import type { PythonWasmSource } from "./interpreter.ts";
import { chargeImport, invocationFuel, releaseFuel } from "./fuel.ts";
import type { MeteredModuleStore } from "../fuel/mod.ts";
import { InvocationHooks } from "./invocation.ts";
import type { Job } from "./invocation.ts";
import { finish } from "./outcome.ts";
import { WarmInterpreter } from "./session.ts";

/** Options of {@link PythonRunner}. */
export type PythonRunnerOptions = {
  /** The interpreter's WebAssembly bytes (`micropython.wasm`, src/platform `readPythonWasm`), or a loader for them. */
  pythonWasm: PythonWasmSource;
  /** Instrument the interpreter with fuel (default true). Without fuel a loop that calls nothing never ends. */
  metered?: boolean;
  /** Where the instrumented interpreter is kept between processes (default: memory only). */
  meteredModules?: MeteredModuleStore;
  /** Largest output, in UTF-8 bytes of its JSON text (default 4 MiB). */
  maxOutputBytes?: number;
  /** Largest captured stdout of a snippet, in bytes (default 1 MiB; the rest is dropped with a marker). */
  maxStdoutBytes?: number;
  /** Cap of the collected log, in characters (default 64 Ki). */
  maxLogChars?: number;
  /** Keep a prepared interpreter across invocations, restoring its snapshot after each (default true). */
  reuseInterpreters?: boolean;
  /** Keep an interpreter only while its memory is at most this large (default 4 MiB: a reset zeroes all of it above the snapshot). */
  maxKeptMemoryBytes?: number;
};

/** Default output cap: 4 MiB of JSON. */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Default stdout cap of a snippet: 1 MiB. */
export const DEFAULT_MAX_STDOUT_BYTES = 1024 * 1024;
/** Largest JSON request of one host call (characters). */
export const MAX_REQUEST_CHARS = 16 * 1024 * 1024;

/** The limits and host of one invocation, without the code (for `exec_python`, the code is the request's). */
export type PythonInvocation = Omit<ToolInvocation, "code" | "input">;

/**
 * Runs `python` tools and `exec_python` snippets. Invocations on one runner are serialised (they share one
 * interpreter instance and its fuel counter).
 * @example
 * const runner = new PythonRunner({ pythonWasm: readPythonWasm });
 * const outcome = await runner.run({ toolName: "stats", invocationId, code, input, host, timeoutMs: 30_000,
 *   fuel: DEFAULT_FUEL, memoryLimitBytes: DEFAULT_MEMORY_LIMIT_BYTES });
 */
export class PythonRunner implements ToolRunner {
  readonly kind = "python" as const;
  readonly #engine: PythonEngine;
  readonly #maxOutputBytes: number;
  readonly #maxStdoutBytes: number;
  readonly #maxLogChars: number;
  readonly #reuse: boolean;
  readonly #maxKept: number;
  #warm: WarmInterpreter | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * @param options see {@link PythonRunnerOptions}
   * @throws TypeError when `pythonWasm` is missing
   */
  constructor(options: PythonRunnerOptions) {
    if (options?.pythonWasm === undefined) {
      throw new TypeError('"pythonWasm" expected the interpreter bytes or a loader (src/platform readPythonWasm)');
    }
    this.#engine = new PythonEngine(options.pythonWasm, options.metered ?? true, options.meteredModules ?? null);
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#maxStdoutBytes = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
    this.#maxLogChars = options.maxLogChars ?? 64 * 1024;
    this.#reuse = options.reuseInterpreters ?? true;
    this.#maxKept = options.maxKeptMemoryBytes ?? 4 * 1024 * 1024;
  }

  /**
   * Run one tool invocation. Tool misbehaviour is reported in the outcome, never thrown.
   * @param invocation the invocation (`code` is the UTF-8 source of `tool.py`)
   * @returns the output, or a `ReachError` (`EXEC_TOOL_FAILED` with the Python traceback in `details.errorStack`,
   *   `EXEC_TOOL_TIMEOUT`, `EXEC_RESOURCE_EXHAUSTED`, `EXEC_SANDBOX_VIOLATION`, `EXEC_RESOURCE_UNAVAILABLE`, or
   *   the host's `POLICY_*`)
   * @throws TypeError / RangeError when the invocation itself is malformed
   */
  run(invocation: ToolInvocation): Promise<ToolOutcome> {
    checkInvocation(invocation);
    if (!(invocation.code instanceof Uint8Array)) throw new TypeError(`"invocation.code" expected Uint8Array (UTF-8 Python source)`);
    let code: string;
    try {
      code = new TextDecoder("utf-8", { fatal: true }).decode(invocation.code);
    } catch {
      const error = new ReachError("EXEC_TOOL_FAILED", `tool "${invocation.toolName}": tool.py is not valid UTF-8`);
      return Promise.resolve({ status: "error", error, log: "", fuelUsed: 0n });
    }
    return this.#enqueue({ kind: "tool", code, input: invocation.input, toolName: invocation.toolName }, invocation);
  }

  /**
   * Run one snippet for `exec_python` (see `execPython` for the validated request).
   * @param code the snippet's Python source
   * @param input the value of its variable `input`
   * @param invocation host and limits
   * @returns on success the output `{stdout, result}`; on failure the error, with the stdout so far as `log`
   * @throws TypeError / RangeError when the invocation itself is malformed
   */
  runSnippet(code: string, input: ToolInvocation["input"], invocation: PythonInvocation): Promise<ToolOutcome> {
    checkInvocation(invocation);
    if (typeof code !== "string") throw new TypeError(`"code" expected a string of Python source`);
    return this.#enqueue({ kind: "exec", code, input, toolName: invocation.toolName }, invocation);
  }

  #enqueue(job: Job, inv: PythonInvocation): Promise<ToolOutcome> {
    const next = this.#queue.then(() => this.#runOne(job, inv));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #runOne(job: Job, inv: PythonInvocation): Promise<ToolOutcome> {
    const cap = interpreterMemoryCap(inv.memoryLimitBytes);
    let warm: WarmInterpreter;
    try {
      warm = await this.#interpreter(cap, inv.sandboxApi ?? 1);
    } catch (err) {
      const error = err instanceof ReachError ? err : new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the Python interpreter could not be loaded", { cause: err });
      return { status: "error", error, log: "", fuelUsed: 0n };
    }
    // The meter's clock starts once the interpreter is ready: preparing it is not the tool's time.
    const meter = invocationFuel(warm.interp, inv);
    const hooks = new InvocationHooks(job, inv.host, {
      memoryCapBytes: cap,
      charge: (bytes) => chargeImport(meter, bytes),
      maxStdoutBytes: this.#maxStdoutBytes,
      maxLogChars: this.#maxLogChars,
      maxRequestChars: MAX_REQUEST_CHARS,
      stdoutToLog: job.kind === "tool",
    });
    const raw = warm.execute(hooks);
    const { used, error: stopped } = releaseFuel(meter, inv.toolName);
    const what = job.kind === "tool" ? `tool "${inv.toolName}"` : "the exec_python snippet";
    const ctx = { toolName: inv.toolName, memoryLimitBytes: inv.memoryLimitBytes, maxOutputBytes: this.#maxOutputBytes, what, stopped };
    const done = finish(raw, warm.interp, hooks, ctx);
    if (raw.kind !== "threw" && stopped === null && this.#reuse && warm.reset(this.#maxKept)) this.#warm = warm;
    const log = job.kind === "tool" ? hooks.log : hooks.stdout;
    if ("error" in done) return { status: "error", error: done.error, log, fuelUsed: used };
    const output = job.kind === "tool" ? done.output : { stdout: hooks.stdout, result: done.output };
    return { status: "success", output, log: job.kind === "tool" ? log : hooks.log, fuelUsed: used };
  }

  /** The kept interpreter when its memory fits under `cap` and it ran `level`'s prelude, else a freshly prepared one. */
  async #interpreter(cap: number, level: SandboxApiLevel): Promise<WarmInterpreter> {
    const kept = this.#warm;
    this.#warm = undefined; // taken by this invocation; put back only when it is reset
    if (kept !== undefined && kept.memoryBytes <= cap && kept.level === level) return kept;
    return WarmInterpreter.prepare(this.#engine, this.#reuse, level);
  }
}

function checkInvocation(inv: PythonInvocation): void {
  if (typeof inv !== "object" || inv === null) throw new TypeError(`"invocation" expected an object`);
  if (typeof inv.toolName !== "string") throw new TypeError(`"invocation.toolName" expected a string`);
  checkSandboxApi(inv.sandboxApi);
  if (!Number.isFinite(inv.timeoutMs) || inv.timeoutMs <= 0) throw new RangeError(`"invocation.timeoutMs" expected a positive number, got ${inv.timeoutMs}`);
  if (typeof inv.fuel !== "bigint" || inv.fuel < 0n) throw new RangeError(`"invocation.fuel" expected a non-negative bigint`);
  if (!Number.isSafeInteger(inv.memoryLimitBytes) || inv.memoryLimitBytes <= 0) {
    throw new RangeError(`"invocation.memoryLimitBytes" expected a positive integer, got ${inv.memoryLimitBytes}`);
  }
  if (typeof inv.host?.invokeSync !== "function" || typeof inv.host?.invoke !== "function") {
    throw new TypeError(`"invocation.host" expected a HostApi with invokeSync and invoke`);
  }
}
