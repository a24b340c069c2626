/**
 * The `component` tool kind (issue 3): a WebAssembly component of the world `reach:tool/tool`
 * (`wasm-tools/component/wit/tool.wit`), run through glue that jco transpiled ahead of time
 * (`--instantiation async --no-wasi-shim`), with every import supplied here: `reach:tool/host` goes to the
 * invocation's `HostApi`, every `wasi:*` interface to the deterministic `wasi-p2.ts`. See `README.md`.
 *
 * jco cannot run inside reach-wasm, so a component can only run when its transpiled glue is registered: the
 * runner looks the component up by the sha256 of `invocation.code` and refuses unknown ones. The core modules are
 * taken from the component bytes themselves (the glue carries none), with their memory capped to the invocation's
 * memory limit, and compiled once per (digest, limit). Each runner instantiates a component's core modules once and
 * resets them to their initial state before every later invocation (`_instance-pool.ts`): memories, tables and
 * mutable globals are restored from a snapshot taken right after instantiation, and the glue (with its resource
 * tables) and WASI are made afresh. So no state survives from one invocation to the next, and a set of instances
 * that trapped, halted, ran out of fuel or grew its memory is dropped, never reused.
 * @module
 */
import { base64ToBytes } from "../../canonical/hex.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { isErrorCode, ReachError, toReachError } from "../../protocol/errors.ts";
import type { ErrorCode } from "../../protocol/errors.ts";
import { isHostOp } from "../types.ts";
import type { JsonObject, JsonValue, ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import { fuelError, fuelUsed, instrumentFuel, remainingFuel, setFuel } from "../fuel/mod.ts";
import { capMemory, coreModulesOf, definesMemory, WASM_PAGE_BYTES } from "../wasm-binary.ts";
import { InstanceSet, ShapeMismatch } from "./_instance-pool.ts";
import { exportState } from "./_state-exports.ts";
import { createWasiP2, GuestExit } from "./wasi-p2.ts";
import type { ImportObject, WasiP2 } from "./wasi-p2.ts";

/** The `instantiate` function of jco's `--instantiation async` glue. */
export type InstantiateFn = (
  getCoreModule: (name: string) => WebAssembly.Module,
  imports: ImportObject,
  instantiateCore?: (
    module: WebAssembly.Module,
    imports?: WebAssembly.Imports,
  ) => Promise<WebAssembly.Instance> | WebAssembly.Instance,
) => Promise<ToolExports> | ToolExports;

/** The exports of an instantiated `reach:tool/tool` component (jco's mapping of the world). */
export type ToolExports = {
  /** `ok(s)` returns `s`; `err(e)` throws jco's `ComponentError` whose `payload` is `e`. */
  invoke(input: string): string;
};

/** Where a core module named by the glue comes from. */
export type CoreModuleSource = { readonly embedded: number } | { readonly base64: string };

/** One transpiled component: the glue and what it belongs to (the generated `*.ts` files export these pieces). */
export type TranspiledComponent = {
  /** sha256 (hex) of the component bytes the glue was generated from. */
  readonly componentSha256: string;
  /** Core module name (as the glue asks for it) → the n-th core module in the component, or inline bytes. */
  readonly coreModules: Readonly<Record<string, CoreModuleSource>>;
  /** Every import interface the glue looks up (`reach:tool/host`, `wasi:io/streams`, …). */
  readonly importNames: readonly string[];
  /** The glue's `instantiate`. */
  readonly instantiate: InstantiateFn;
};

/** The import interface of the host API (WIT `reach:tool/host`). */
export const HOST_INTERFACE = "reach:tool/host";

/**
 * Host errors that stop the tool (the call does not return): policy violations, replay divergences, limits and
 * sandbox violations. Any other `ReachError` from the host comes back to the guest as `err({"code","message"})`.
 */
const HALTING_PREFIXES = ["POLICY_", "REPLAY_", "PROTO_CHAIN_"];
const HALTING_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "EXEC_SANDBOX_VIOLATION",
  "EXEC_TOOL_TIMEOUT",
  "EXEC_RESOURCE_EXHAUSTED",
  "EXEC_MEMORY_EXCEEDED",
  "EXEC_ABORTED",
]);

function halts(err: ReachError): boolean {
  return HALTING_CODES.has(err.code) || HALTING_PREFIXES.some((p) => err.code.startsWith(p));
}

/**
 * A compiled core module, whether it carries a fuel counter, and whether all its state is exported for snapshots
 * (`_state-exports.ts`).
 */
type CompiledCore = { module: WebAssembly.Module; metered: boolean; snapshotable: boolean };
/** Compiled modules, shared by all runners: key `sha256/maxPages/meter`. Small: each entry holds a ~12 MB module. */
const compiled = new Map<string, Map<string, CompiledCore>>();
/** Fuel-instrumented bytes by the sha256 of the original core module (instrumenting 12 MB takes ~10-30 s). */
const instrumented = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();
const INSTRUMENTED_CACHE_ENTRIES = 2;
const COMPILED_CACHE_ENTRIES = 4;
/** Reusable instance sets kept per runner (one per compiled key); each holds ~2x the component's memory. */
const POOLED_SETS = 4;
/** sha256 of code arrays already seen (code arrays are treated as immutable once handed to a runner). */
const digests = new WeakMap<Uint8Array, string>();

const MAX_INPUT_BYTES = 16 * 1024 * 1024;
/** A failed guest whose memory reached this share of the limit is reported as out of memory. */
const MEMORY_FULL_RATIO = 0.9;

function largestMemory(instances: readonly WebAssembly.Instance[]): number {
  let max = 0;
  for (const instance of instances) {
    for (const value of Object.values(instance.exports)) {
      if (value instanceof WebAssembly.Memory) max = Math.max(max, value.buffer.byteLength);
    }
  }
  return max;
}

/** Options of `ComponentRunner`. */
export type ComponentRunnerOptions = {
  /** The transpiled components this runner may run (by component sha256). */
  components: readonly TranspiledComponent[];
  /** Most bytes kept of the guest's stdout and stderr each (default 1 MiB). */
  maxLogBytes?: number;
  /** Wall-clock source for the timeout (default `performance.now`); never enters hashed data. */
  now?: () => number;
  /**
   * Meter fuel (default true): the core modules that define a memory (the guest's engine) are instrumented by
   * `src/sandbox/fuel` once per process and module digest, and each invocation gets `invocation.fuel` units.
   * Without it a guest loop that never calls an import cannot be stopped (tests and benchmarks only).
   */
  meterFuel?: boolean;
  /**
   * Reuse core instances across invocations, reset to their initial state before each (default true; see
   * `_instance-pool.ts`). `false` instantiates every invocation afresh (for comparisons in tests and benchmarks).
   */
  reuseInstances?: boolean;
};

/**
 * The `ToolRunner` for kind `component`.
 * @example
 * import { TEXT_STATS } from "./builtin.ts";
 * const runner = new ComponentRunner({ components: [TEXT_STATS] });
 * const outcome = await runner.run(invocation); // invocation.code = wasm-tools/component/build/tool.component.wasm
 */
export class ComponentRunner implements ToolRunner {
  /** Always "component". */
  readonly kind = "component" as const;
  readonly #bySha = new Map<string, TranspiledComponent>();
  readonly #maxLogBytes: number;
  readonly #now: () => number;
  readonly #meterFuel: boolean;
  readonly #reuse: boolean;
  /** Idle instance sets, already detached from their last invocation, by compiled key (LRU order). */
  readonly #pool = new Map<string, InstanceSet>();

  /**
   * @param options the registered transpiled components and limits
   * @throws TypeError when a component entry is malformed
   */
  constructor(options: ComponentRunnerOptions) {
    for (const c of options.components) {
      if (typeof c?.instantiate !== "function" || !/^[0-9a-f]{64}$/.test(c.componentSha256 ?? "")) {
        throw new TypeError(`"components" expected transpiled components with a sha256 and an instantiate function`);
      }
      this.#bySha.set(c.componentSha256, c);
    }
    this.#maxLogBytes = options.maxLogBytes ?? 1024 * 1024;
    this.#now = options.now ?? (() => performance.now());
    this.#meterFuel = options.meterFuel ?? true;
    this.#reuse = options.reuseInstances ?? true;
  }

  /**
   * Run one invocation: instantiate the component (or reset a kept instance set to its initial state), call
   * `invoke(JSON.stringify(input))`, parse the result.
   * @param invocation the invocation (its `code` is the component's bytes)
   * @returns the outcome; tool misbehaviour is reported, never thrown
   */
  async run(invocation: ToolInvocation): Promise<ToolOutcome> {
    const started = this.#now();
    const deadline = started + invocation.timeoutMs;
    let halted: ReachError | null = null;
    const halt = (err: ReachError): never => {
      halted ??= err;
      throw halted;
    };
    const checkpoint = (): void => {
      if (halted !== null) throw halted;
      if (this.#now() > deadline) {
        halt(
          new ReachError(
            "EXEC_TOOL_TIMEOUT",
            `tool "${invocation.toolName}" ran past its timeout of ${invocation.timeoutMs} ms; raise timeout_ms or make it faster`,
            { details: { timeoutMs: invocation.timeoutMs } },
          ),
        );
      }
    };
    // WASI is made only for a component that imports some of it (a C component may import only the host API).
    let wasi: WasiP2 | undefined;
    const makeWasi = (): WasiP2 => createWasiP2({
      host: {
        // WASI's clock and randomness cannot fail in WIT terms: any host error stops the tool.
        invokeSync: (op, request) => {
          try {
            return invocation.host.invokeSync(op, request);
          } catch (err) {
            return halt(toReachError(err, "EXEC_SANDBOX_VIOLATION"));
          }
        },
        invoke: (op, request) => invocation.host.invoke(op, request),
      },
      checkpoint,
      maxOutputBytes: this.#maxLogBytes,
    });
    const log = (): string => (wasi === undefined ? "" : new TextDecoder("utf-8", { fatal: false }).decode(wasi.output().log));
    const fuel = invocation.fuel;
    let meteredInstances: WebAssembly.Instance[] = [];
    const used = (): bigint => meteredInstances.reduce((sum, i) => sum + fuelUsed(i, fuel), 0n);
    const exhausted = (): boolean => meteredInstances.some((i) => remainingFuel(i) < 0n);
    let instances: WebAssembly.Instance[] = [];
    // The instance set of this invocation, and whether it returned cleanly (only then may it serve another).
    let set: InstanceSet | undefined;
    let clean = false;
    let poolKey = "";
    const fail = (error: ReachError): ToolOutcome => {
      let err = error;
      if (halted === null && exhausted()) {
        // A fuel trap surfaces as whatever the glue makes of the trap; the counter tells it apart.
        err = fuelError(fuel, { toolName: invocation.toolName });
      } else if (halted === null && err.code === "EXEC_TOOL_FAILED") {
        // Running into the memory cap surfaces as the guest's "out of memory" err or a trap; the memory size tells
        // it apart (the guest cannot fake this without really filling its memory).
        const bytes = largestMemory(instances);
        if (bytes >= invocation.memoryLimitBytes * MEMORY_FULL_RATIO) {
          err = new ReachError(
            "EXEC_RESOURCE_EXHAUSTED",
            `tool "${invocation.toolName}" ran out of memory (limit ${invocation.memoryLimitBytes} bytes); ` +
              "raise the tool's memory limit or give it less data",
            { details: { reason: "memory", memoryLimitBytes: invocation.memoryLimitBytes, memoryBytes: bytes }, cause: error },
          );
        }
      }
      return { status: "error", error: err, log: log(), fuelUsed: exhausted() ? fuel : used() };
    };

    try {
      const component = this.#lookup(invocation);
      const { key, modules } = await this.#modules(invocation, component);
      poolKey = key;
      const imports: ImportObject = {
        ...(component.importNames.some((n) => n.startsWith("wasi:")) ? (wasi = makeWasi()).imports : {}),
        [HOST_INTERFACE]: { call: (op: unknown, request: unknown) => this.#hostCall(invocation, op, request, checkpoint, halt) },
      };
      const given = selectImports(component, imports);
      const input = JSON.stringify(invocation.input);
      if (input === undefined || input.length > MAX_INPUT_BYTES) {
        return fail(new ReachError("PROTO_INVALID_ARGUMENT", `component input must be JSON of at most ${MAX_INPUT_BYTES} bytes`));
      }
      const metered = new Set<WebAssembly.Module>();
      const getCoreModule = (name: string): WebAssembly.Module => {
        const m = modules.get(name);
        if (m === undefined) throw new ReachError("PACK_MALFORMED", `the glue asked for an unknown core module "${name}"`);
        if (m.metered) metered.add(m.module);
        return m.module;
      };
      checkpoint();
      let exports: ToolExports | undefined;
      set = this.#reuse ? this.#take(key) : undefined;
      if (set !== undefined) {
        // The glue is instantiated afresh (its resource tables and handles are new); its core instances are the
        // kept ones, already reset to their initial state by #take.
        try {
          exports = await component.instantiate(getCoreModule, given, set.replayingHook());
          set.endReplay();
        } catch (err) {
          if (!(err instanceof ShapeMismatch)) throw err;
          set = undefined; // not what was recorded: drop it and instantiate afresh
        }
      }
      if (set === undefined || exports === undefined) {
        const snapshotable = new Set([...modules.values()].filter((m) => m.snapshotable).map((m) => m.module));
        set = new InstanceSet((m) => snapshotable.has(m));
        exports = await component.instantiate(getCoreModule, given, set.recordingHook());
        if (this.#reuse) set.capture();
      }
      instances = set.instances;
      meteredInstances = set.cores.filter((c) => metered.has(c.module)).map((c) => c.instance);
      for (const instance of meteredInstances) setFuel(instance, fuel);
      let text: unknown;
      try {
        checkpoint();
        text = exports.invoke(input);
      } catch (err) {
        if (halted !== null) return fail(halted);
        // A guest's err(...) comes back as the glue's ComponentError after a normal return (post-return done).
        clean = err instanceof Error && Object.prototype.hasOwnProperty.call(err, "payload") && !exhausted();
        return fail(guestError(invocation.toolName, err));
      }
      // A guest may have caught the host's exception (e.g. with Wasm exception handling): the halt still stands.
      if (halted !== null) return fail(halted);
      clean = !exhausted();
      if (typeof text !== "string") {
        return fail(new ReachError("EXEC_OUTPUT_INVALID", `tool "${invocation.toolName}" returned no string`));
      }
      let output: JsonValue;
      try {
        output = JSON.parse(text) as JsonValue;
      } catch {
        return fail(
          new ReachError("EXEC_OUTPUT_INVALID", `tool "${invocation.toolName}" returned text that is not JSON; return JSON.stringify(output)`, {
            details: { outputPrefix: text.slice(0, 200) },
          }),
        );
      }
      return { status: "success", output, log: log(), fuelUsed: used() };
    } catch (err) {
      if (halted !== null) return fail(halted);
      return fail(err instanceof ReachError ? err : guestError(invocation.toolName, err));
    } finally {
      if (set !== undefined) {
        set.detach();
        if (clean && halted === null && this.#reuse && set.restorable()) this.#give(poolKey, set);
      }
    }
  }

  /** An idle instance set for `key`, reset to its initial state; undefined when there is none (or it grew). */
  #take(key: string): InstanceSet | undefined {
    const set = this.#pool.get(key);
    if (set === undefined) return undefined;
    this.#pool.delete(key);
    if (!set.restorable()) return undefined;
    set.restore();
    return set;
  }

  #give(key: string, set: InstanceSet): void {
    this.#pool.delete(key);
    this.#pool.set(key, set);
    while (this.#pool.size > POOLED_SETS) this.#pool.delete(this.#pool.keys().next().value!);
  }

  #lookup(invocation: ToolInvocation): TranspiledComponent {
    const code = invocation.code;
    if (!(code instanceof Uint8Array)) throw new TypeError(`"invocation.code" expected a Uint8Array`);
    let digest = digests.get(code);
    if (digest === undefined) {
      digest = sha256Hex(code);
      digests.set(code, digest);
    }
    const component = this.#bySha.get(digest);
    if (component === undefined) {
      throw new ReachError(
        "EXEC_RESOURCE_UNAVAILABLE",
        `component of tool "${invocation.toolName}" (sha256 ${digest}) has no transpiled glue registered; ` +
          `transpile it with jco (see src/sandbox/component/README.md) and pass it to ComponentRunner`,
        { details: { componentSha256: digest }, recoverable: false },
      );
    }
    return component;
  }

  async #modules(
    invocation: ToolInvocation,
    component: TranspiledComponent,
  ): Promise<{ key: string; modules: Map<string, CompiledCore> }> {
    const limit = invocation.memoryLimitBytes;
    if (!Number.isSafeInteger(limit) || limit < WASM_PAGE_BYTES) {
      throw new RangeError(`"memoryLimitBytes" expected an integer of at least ${WASM_PAGE_BYTES}, got ${limit}`);
    }
    const maxPages = Math.min(65_536, Math.floor(limit / WASM_PAGE_BYTES));
    const key = `${component.componentSha256}/${maxPages}/${this.#meterFuel}`;
    const hit = compiled.get(key);
    if (hit !== undefined) {
      compiled.delete(key); // refresh its place (LRU)
      compiled.set(key, hit);
      return { key, modules: hit };
    }
    const embedded = coreModulesOf(invocation.code);
    const out = new Map<string, CompiledCore>();
    for (const [name, source] of Object.entries(component.coreModules)) {
      let bytes: Uint8Array;
      if ("embedded" in source) {
        const m = embedded[source.embedded];
        if (m === undefined) throw new ReachError("PACK_MALFORMED", `component has no core module #${source.embedded}`);
        bytes = m;
      } else {
        bytes = base64ToBytes(source.base64);
      }
      // Meter the modules that define a memory: the guest's engine. The others are small adapters and trampolines
      // that only run when called from it (a per-module counter each would split the one budget).
      const meter = this.#meterFuel && definesMemory(bytes);
      if (meter) bytes = await instrumentedBytes(bytes);
      // Export every memory, table and mutable global so that an instance can be reset to its initial state.
      const state = exportState(bytes);
      if (state !== null) bytes = state.bytes;
      const module = await WebAssembly.compile(capMemory(bytes, maxPages) as Uint8Array<ArrayBuffer>);
      out.set(name, { module, metered: meter, snapshotable: state !== null });
    }
    compiled.set(key, out);
    while (compiled.size > COMPILED_CACHE_ENTRIES) compiled.delete(compiled.keys().next().value!);
    return { key, modules: out };
  }

  #hostCall(
    invocation: ToolInvocation,
    op: unknown,
    request: unknown,
    checkpoint: () => void,
    halt: (err: ReachError) => never,
  ): string {
    checkpoint();
    if (typeof op !== "string" || !isHostOp(op)) {
      return halt(
        new ReachError("POLICY_VIOLATION", `tool "${invocation.toolName}" called an unknown host operation`, {
          details: { violationType: "UNDEFINED_TOOL", attemptedCapability: String(op).slice(0, 100) },
        }),
      );
    }
    let parsed: unknown;
    try {
      parsed = typeof request === "string" ? JSON.parse(request) : undefined;
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return guestErr({ code: "PROTO_INVALID_ARGUMENT", message: `host call "${op}": the request must be a JSON object` });
    }
    const response = callHost(() => invocation.host.invokeSync(op, parsed as JsonObject), halt);
    if ("error" in response) return guestErr(response.error);
    checkpoint();
    return JSON.stringify(response.ok);
  }
}

/** Fuel-instrumented bytes of a core module, instrumented once per digest (bounded cache). */
function instrumentedBytes(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const digest = sha256Hex(bytes);
  let entry = instrumented.get(digest);
  if (entry === undefined) {
    entry = instrumentFuel(bytes);
    instrumented.set(digest, entry);
    entry.catch(() => instrumented.delete(digest));
    while (instrumented.size > INSTRUMENTED_CACHE_ENTRIES) instrumented.delete(instrumented.keys().next().value!);
  }
  return entry;
}

/**
 * jco's glue maps an import's return value to `ok(...)` and a thrown value to `err(...)`: an `Error` is re-thrown
 * (a trap), anything else becomes the err value, or its `payload` property when it has one (`getErrorPayload`).
 * Throwing `{ payload }` works with the glue of every jco version we have seen (1.17 and 1.35).
 */
function guestErr(error: { code: string; message: string }): never {
  throw { payload: JSON.stringify(error) };
}

/** Run a host call: halting errors stop the tool, other ReachErrors become the guest's `err`. */
function callHost(
  fn: () => JsonObject,
  halt: (err: ReachError) => never,
): { ok: JsonObject } | { error: { code: string; message: string } } {
  try {
    return { ok: fn() };
  } catch (err) {
    if (err instanceof ReachError && !halts(err)) return { error: { code: err.code, message: err.message } };
    // A non-ReachError from the host is a host bug: stop rather than hand its details to the tool.
    return halt(err instanceof ReachError ? err : toReachError(err, "EXEC_SANDBOX_VIOLATION"));
  }
}

/** Only the imports the glue looks up, each of them present (a missing one is refused before anything runs). */
function selectImports(component: TranspiledComponent, imports: ImportObject): ImportObject {
  const given: ImportObject = {};
  const missing: string[] = [];
  for (const name of component.importNames) {
    const iface = imports[name];
    if (iface === undefined) missing.push(name);
    else given[name] = iface;
  }
  if (missing.length > 0) {
    throw new ReachError(
      "EXEC_SANDBOX_VIOLATION",
      `component imports ${missing.join(", ")}, which reach-wasm does not supply; build the tool without them ` +
        `(componentize-js: disableFeatures ["http", "fetch-event"])`,
      { details: { missingImports: missing }, recoverable: false },
    );
  }
  return given;
}

/** Classify what `invoke` (or instantiation) threw. */
function guestError(toolName: string, err: unknown): ReachError {
  if (err instanceof GuestExit) {
    return new ReachError("EXEC_TOOL_FAILED", `tool "${toolName}" exited (status ${err.status}) instead of returning`, {
      details: { exitStatus: err.status },
    });
  }
  if (err instanceof Error && Object.prototype.hasOwnProperty.call(err, "payload")) {
    const payload = (err as Error & { payload: unknown }).payload;
    const text = typeof payload === "string" ? payload : String(payload);
    return new ReachError("EXEC_TOOL_FAILED", `tool "${toolName}" failed: ${text.slice(0, 1000)}`, {
      details: { toolError: parseMaybeJson(text) },
    });
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return new ReachError("EXEC_RESOURCE_EXHAUSTED", `tool "${toolName}" overflowed the stack`, {
      details: { reason: "stack" },
      cause: err,
    });
  }
  if (err instanceof WebAssembly.RuntimeError) {
    return new ReachError("EXEC_TOOL_FAILED", `tool "${toolName}" trapped: ${err.message}`, { details: { trap: err.message }, cause: err });
  }
  if (err instanceof ReachError) return err;
  const reach = toReachError(err, "EXEC_TOOL_FAILED");
  return isErrorCode(reach.code) ? reach : new ReachError("EXEC_TOOL_FAILED", String(err));
}

function parseMaybeJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text.slice(0, 1000);
  }
}
