/**
 * The `ToolRunner` for kind `"wasm"` (docs/authoring.md "`wasm`: a WASI preview1 command"): a WASI preview1 command,
 * input JSON on stdin, output JSON on stdout, exit code 0 for success, stderr captured as the tool's log; the optional
 * `reach` import module gives it the host API (REACH_ABI.md).
 *
 * Limits (ARCHITECTURE "Stopping a tool that will not stop"):
 * - **Fuel** is the primary, deterministic bound: the module is instrumented by `src/sandbox/fuel/` (one unit per
 *   function entry and loop iteration) and traps at the same instruction on every run and runtime →
 *   `EXEC_RESOURCE_EXHAUSTED` with `reason: "fuel"`.
 * - **Memory**: the module's memory maximum is rewritten to the limit before compilation (`memory-limit.ts`), so
 *   `memory.grow` fails in the guest past it; a tool that then fails (trap, non-zero exit, out of fuel) while its
 *   memory is within `max(1 MiB, limit/16)` of the limit is `EXEC_RESOURCE_EXHAUSTED` with `reason: "memory"`.
 * - **Stops from outside** (a signal, the wall-clock watchdog): the invocation's `FuelMeter` stops the tool at a
 *   refill and records the fuel count; every WASI or `reach` call costs {@link WASI_CALL_FUEL}, so a loop of calls
 *   reaches a refill soon. The wall clock never reaches the guest, and compiling is not the tool's time.
 * A fresh instance is made for every invocation, so nothing is reused after a trap. Only its linear memory may be a
 * kept one (`memory-pool.ts`): zero-filled, never grown, with the data segments written again, i.e. byte for byte
 * what a new memory would hold.
 * @module
 */
import { canonicalBytes } from "../../canonical/mod.ts";
import { base64ToBytes } from "../../canonical/mod.ts";
import { ReachError, toReachError } from "../../protocol/mod.ts";
import { FuelMeter, FuelSlot, getMeteredModule, meterError } from "../fuel/mod.ts";
import type { MeteredModuleStore } from "../fuel/mod.ts";
import type { ModuleIdentity, ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import type { JsonValue } from "../../protocol/mod.ts";
import { sha256Hex } from "../../canonical/mod.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { WasiExit, WasiHalt } from "./context.ts";
import type { Preopen, WasiContext, WasiSources } from "./context.ts";
import { limitMemory } from "./memory-limit.ts";
import { importOwnMemory, MemoryPool, POOLED_MEMORY_FIELD, POOLED_MEMORY_MODULE } from "./memory-pool.ts";
import { WasiPreview1 } from "./preview1.ts";
import { REACH_MODULE, reachImports } from "./reach-abi.ts";

/** Options of {@link WasmToolRunner}. */
export type WasmToolRunnerOptions = {
  /** Give the tool WASI preopens into a workspace view (e.g. the step's transaction). Default: none. */
  filesystem?: (invocation: ToolInvocation) => { fs: WorkspaceView; preopens: Preopen[] } | null;
  /** Cap on stdout bytes (default 16 MiB). */
  maxStdoutBytes?: number;
  /** Cap on stderr bytes (default 1 MiB). */
  maxStderrBytes?: number;
  /** Where fuel-instrumented modules are kept between processes (default: memory only). */
  meteredModules?: MeteredModuleStore;
};

const decoder = new TextDecoder();

/** Fuel charged for each WASI or `reach` call the guest makes (work done outside its metered code). */
export const WASI_CALL_FUEL = 100;

/**
 * Compiled metered modules by code array (identity) and memory limit. Hashing the code for the fuel cache costs
 * more than the whole run of a small tool (SHA-256 in JS), so a runner remembers the arrays it has seen; the
 * engine hands the same, never-mutated array for every invocation of a tool. The export/import checks are made
 * once per compiled module too, and a warm invocation reads the settled entry without awaiting.
 */
const modules = new WeakMap<Uint8Array, Map<number, Compiled>>();

/** A compiled module with what the runner checks about it; `ready` is set once `promise` has settled well. */
type Compiled = { promise: Promise<ModuleInfo>; ready: ModuleInfo | null };
/**
 * What the runner needs to know about a compiled module (worked out once, not per invocation). `memories` is set
 * when the module's one memory was turned into an import (`memory-pool.ts`): invocations then reuse memories.
 */
type ModuleInfo = { module: WebAssembly.Module; isCommand: boolean; importsReach: boolean; memories: MemoryPool | null; identity: ModuleIdentity };

function compiled(code: Uint8Array, limit: number, store: MeteredModuleStore | null): Compiled {
  let byLimit = modules.get(code);
  if (byLimit === undefined) modules.set(code, (byLimit = new Map()));
  let hit = byLimit.get(limit);
  if (hit === undefined) {
    const entry: Compiled = { promise: null as never, ready: null };
    entry.promise = (async () => {
      const capped = limitMemory(code, limit);
      const pooled = importOwnMemory(capped);
      const metered = await getMeteredModule(pooled?.bytes ?? capped, {}, store);
      const module = metered.module;
      const exports = WebAssembly.Module.exports(module);
      const info: ModuleInfo = {
        module,
        memories: pooled === null ? null : new MemoryPool(pooled.initialPages, pooled.maximumPages),
        isCommand: exports.some((e) => e.name === "_start" && e.kind === "function") && exports.some((e) => e.name === "memory" && e.kind === "memory"),
        importsReach: WebAssembly.Module.imports(module).some((i) => i.module === REACH_MODULE),
        identity: { sha256: sha256Hex(code), metered: metered.meteredDigest },
      };
      entry.ready = info;
      return info;
    })();
    byLimit.set(limit, (hit = entry));
    void entry.promise.catch(() => byLimit.delete(limit));
  }
  return hit;
}

/**
 * Clock and randomness through the host API, so that both are recorded on the tape like any host call
 * (ARCHITECTURE "Determinism"). `poll_oneoff` sleeps do not advance this clock (there is no host op for it).
 */
function hostSources(invocation: ToolInvocation): WasiSources {
  return {
    readClockMs: () => {
      const r = invocation.host.invokeSync("clock.now", {});
      if (typeof r["ms"] !== "number" || !Number.isSafeInteger(r["ms"]) || r["ms"] < 0) {
        throw new ReachError("EXEC_TOOL_FAILED", "the host's clock.now answered without a valid {ms}");
      }
      return r["ms"];
    },
    randomBytes: (n) => {
      const r = invocation.host.invokeSync("random.bytes", { n });
      if (typeof r["data"] !== "string") throw new ReachError("EXEC_TOOL_FAILED", "random.bytes answered without data");
      return decodeBase64(r["data"]);
    },
  };
}

/**
 * `base64ToBytes(text)` — the same bytes, and the same error for bad text — with native `atob`/`btoa` for the short
 * answers of `random.bytes` (the strict decoder is a loop in JavaScript, and a tool's one `random_get` runs it cold).
 * `btoa(atob(text)) === text` holds exactly for canonical padded standard base64, which is what `base64ToBytes`
 * accepts; any other text goes to `base64ToBytes`, which refuses it.
 */
function decodeBase64(text: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return base64ToBytes(text);
  }
  if (btoa(binary) !== text) return base64ToBytes(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function fail(code: ConstructorParameters<typeof ReachError>[0], message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError(code, message, { details });
}

function memoryError(toolName: string, limit: number): ReachError {
  return fail("EXEC_RESOURCE_EXHAUSTED", `tool "${toolName}" reached its memory limit of ${limit} bytes; give it less data or raise memoryLimitBytes`, { reason: "memory", limitBytes: limit });
}

/**
 * Why a finished invocation failed, or `null` when it succeeded: a halt, a policy violation, a stop, running out of
 * fuel or memory, a trap, a stack overflow, or a non-zero exit (in that order of precedence).
 */
function endError(
  toolName: string,
  limit: number,
  ctx: WasiContext,
  thrown: unknown,
  meter: FuelMeter,
  stopped: ReachError | null,
  nearLimit: boolean,
): ReachError | null {
  if (ctx.halted !== null) return ctx.halted.error;
  if (ctx.violation !== null && ctx.violation.code === "POLICY_VIOLATION") return ctx.violation;
  if (thrown instanceof WasiHalt) return thrown.error;
  if (stopped !== null && meter.outcome?.kind === "stopped") return stopped;
  if (stopped !== null && thrown instanceof WebAssembly.RuntimeError) return nearLimit ? memoryError(toolName, limit) : stopped;
  const exit = ctx.exited ?? (thrown instanceof WasiExit ? thrown : null);
  if (thrown !== null && exit === null) {
    if (nearLimit) return memoryError(toolName, limit);
    if (thrown instanceof RangeError) return fail("EXEC_RESOURCE_EXHAUSTED", `tool "${toolName}" overflowed its stack`, { reason: "stack" });
    const what = thrown instanceof Error ? thrown.message : String(thrown);
    return fail("EXEC_TOOL_FAILED", `tool "${toolName}" trapped: ${what}`, { reason: "trap" });
  }
  if (exit !== null && exit.code !== 0) {
    if (nearLimit) return memoryError(toolName, limit);
    return fail("EXEC_TOOL_FAILED", `tool "${toolName}" exited with code ${exit.code}; see its log`, { exitCode: exit.code });
  }
  return null;
}

/**
 * Runs WASI preview1 commands as tools.
 * @example
 * const outcome = await new WasmToolRunner().run({ toolName: "wc", invocationId, code, input: { text: "a b" },
 *   host, timeoutMs: 30_000, fuel: DEFAULT_FUEL, memoryLimitBytes: DEFAULT_MEMORY_LIMIT_BYTES });
 */
export class WasmToolRunner implements ToolRunner {
  readonly kind = "wasm" as const;
  readonly #options: WasmToolRunnerOptions;

  /** @param options preopens and output caps */
  constructor(options: WasmToolRunnerOptions = {}) {
    this.#options = options;
  }

  /**
   * Run one invocation to completion or to its limits. Never throws for tool misbehaviour.
   * @param invocation the invocation (code = the module bytes)
   * @returns the outcome: parsed stdout JSON, or the error; `log` is stderr
   * @throws TypeError only when `invocation` itself is malformed (a caller bug)
   * @example const o = await runner.run(invocation); if (o.status === "success") use(o.output);
   */
  async run(invocation: ToolInvocation): Promise<ToolOutcome> {
    if (!(invocation.code instanceof Uint8Array)) throw new TypeError(`"invocation.code" expected a Uint8Array`);
    const limit = invocation.memoryLimitBytes;
    let info: ModuleInfo;
    try {
      const entry = compiled(invocation.code, limit, this.#options.meteredModules ?? null);
      info = entry.ready ?? (await entry.promise); // warm: no await, so no task hop
    } catch (err) {
      return { status: "error", error: toReachError(err, "PACK_MALFORMED"), log: "", fuelUsed: 0n };
    }
    const module = info.module;
    if (!info.isCommand) {
      const error = fail("EXEC_TOOL_FAILED", `tool "${invocation.toolName}" is not a WASI command: it must export "_start" and "memory"`);
      return { status: "error", error, log: "", fuelUsed: 0n };
    }
    const fsSpec = this.#options.filesystem?.(invocation) ?? null;
    let instance: WebAssembly.Instance | null = null;
    const slack = Math.max(1 << 20, Math.floor(limit / 16));
    const meter = invocation.meter ?? new FuelMeter({ budget: invocation.fuel });
    // Every WASI or reach call costs fuel (the meter's next refill, where a stop is noticed, follows soon after).
    const beforeCall = (): void => {
      meter.charge(WASI_CALL_FUEL);
      if (wasi.ctx.mem.byteLength() > limit) throw new WasiHalt(memoryError(invocation.toolName, limit));
    };
    const wasi = new WasiPreview1({
      args: [invocation.toolName],
      stdin: canonicalBytes(invocation.input),
      sources: hostSources(invocation),
      ...(fsSpec === null ? {} : { fs: fsSpec.fs, preopens: fsSpec.preopens }),
      ...(this.#options.maxStdoutBytes === undefined ? {} : { maxStdoutBytes: this.#options.maxStdoutBytes }),
      ...(this.#options.maxStderrBytes === undefined ? {} : { maxStderrBytes: this.#options.maxStderrBytes }),
      beforeCall,
    });
    const imports = wasi.imports(module);
    if (info.importsReach) Object.assign(imports, reachImports(wasi.ctx, invocation.host, beforeCall));
    const memory = info.memories?.take() ?? null;
    if (memory !== null) imports[POOLED_MEMORY_MODULE] = { [POOLED_MEMORY_FIELD]: memory };
    const slot = new FuelSlot();
    Object.assign(imports, slot.imports);
    let thrown: unknown = null;
    meter.bind(slot);
    try {
      // Synchronous instantiation: the module is already compiled, and the async form costs a task hop (~0.5 ms).
      meter.start();
      instance = new WebAssembly.Instance(module, imports);
      slot.attach(instance);
      wasi.bind(instance);
      (instance.exports["_start"] as () => void)();
    } catch (err) {
      thrown = err;
    }
    wasi.finish();
    const ctx = wasi.ctx;
    const log = decoder.decode(ctx.stderr.bytes());
    const used = meter.release();
    const stopped = meterError(meter, invocation.toolName);
    const nearLimit = ctx.mem.byteLength() + slack >= limit;
    // The instance is done (nothing reads guest memory below): its memory may serve the next invocation.
    if (memory !== null) info.memories!.give(memory);
    const error = endError(invocation.toolName, limit, ctx, thrown, meter, stopped, nearLimit);
    const identity = info.identity;
    if (error !== null) return { status: "error", error, log, fuelUsed: used, module: identity };
    const text = decoder.decode(ctx.stdout.bytes());
    let output: JsonValue;
    try {
      output = JSON.parse(text) as JsonValue;
    } catch {
      const shown = text.length > 200 ? text.slice(0, 200) + "…" : text;
      const error = fail("EXEC_TOOL_FAILED", `tool "${invocation.toolName}" did not print one JSON value on stdout (got ${JSON.stringify(shown)})`, { reason: "output" });
      return { status: "error", error, log, fuelUsed: used, module: identity };
    }
    return { status: "success", output, log, fuelUsed: used, module: identity };
  }
}
