/**
 * The `component` tool kind (README.md in this folder, "The WIT world"): a WebAssembly component of the world
 * `reach:tool/tool` (`wasm-tools/component/wit/tool.wit`), run through glue that jco generates (`--instantiation async
 * --no-wasi-shim`), with every import supplied here: `reach:tool/host` goes to the invocation's `HostApi`, every
 * `wasi:*` interface to the deterministic `wasi-p2.ts`. See `README.md`.
 *
 * The runner finds a component's glue by the sha256 of `invocation.code`: among the components it was given, else
 * through `load` (by default `loadComponent`: jco transpiles it on first use, the glue is checked before it is
 * evaluated, and kept in memory and the platform's disk store). The core modules are
 * taken from the component bytes themselves (the glue carries none), with their memory capped to the invocation's
 * memory limit, and compiled once per (digest, limit). Each runner instantiates a component's core modules once and
 * resets them to their initial state before every later invocation (`_instance-pool.ts`): memories, tables and
 * mutable globals are restored from a snapshot taken right after instantiation, and the glue (with its resource
 * tables) and WASI are made afresh. So no state survives from one invocation to the next, and a set of instances
 * that trapped, halted, ran out of fuel or grew its memory is dropped, never reused.
 *
 * The pieces: `transpiled.ts` (what a transpiled component is), `_call.ts` (one invocation's state and outcome),
 * `_core-modules.ts` (compiling, metering and caching the core modules), `_guest.ts` (the host import, the import
 * selection and the mapping of guest errors), `_instance-pool.ts` and `_state-exports.ts` (instance reuse),
 * `wasi-p2.ts` (WASI).
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import type { ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import { ComponentCall } from "./_call.ts";
import { compileCoreModules, componentDigest } from "./_core-modules.ts";
import type { CompiledCores } from "./_core-modules.ts";
import { callHostImport, guestError, selectImports } from "./_guest.ts";
import { InstanceSet, ShapeMismatch } from "./_instance-pool.ts";
import { loadComponent } from "./load.ts";
import type { ComponentGlueStore } from "./store.ts";
import { HOST_INTERFACE } from "./transpiled.ts";
import type { ToolExports, TranspiledComponent } from "./transpiled.ts";
import type { ImportObject } from "./wasi-p2.ts";

/** Reusable instance sets kept per runner (one per compiled key); each holds ~2x the component's memory. */
const POOLED_SETS = 4;

const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Options of `ComponentRunner`. */
export type ComponentRunnerOptions = {
  /** Transpiled components to use for these component digests (default: none; everything goes through `load`). */
  components?: readonly TranspiledComponent[];
  /**
   * The glue of any other component (default `loadComponent`: jco, checked, cached). Its errors become the
   * invocation's error outcome.
   */
  load?: (code: Uint8Array) => Promise<TranspiledComponent>;
  /** Where the default `load` keeps glue between processes (default: memory only). */
  glueStore?: ComponentGlueStore;
  /** Most bytes kept of the guest's stdout and stderr each (default 1 MiB). */
  maxLogBytes?: number;
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
 * const runner = new ComponentRunner(); // any component: glue from jco on first use
 * const outcome = await runner.run(invocation); // invocation.code = wasm-tools/component/build/tool.component.wasm
 */
export class ComponentRunner implements ToolRunner {
  /** Always "component". */
  readonly kind = "component" as const;
  readonly #bySha = new Map<string, TranspiledComponent>();
  readonly #load: (code: Uint8Array) => Promise<TranspiledComponent>;
  readonly #maxLogBytes: number;
  readonly #meterFuel: boolean;
  readonly #reuse: boolean;
  /** Idle instance sets, already detached from their last invocation, by compiled key (LRU order). */
  readonly #pool = new Map<string, InstanceSet>();

  /**
   * @param options the registered transpiled components and limits
   * @throws TypeError when a component entry is malformed
   */
  constructor(options: ComponentRunnerOptions = {}) {
    for (const c of options.components ?? []) {
      if (typeof c?.instantiate !== "function" || !/^[0-9a-f]{64}$/.test(c.componentSha256 ?? "") || !/^[0-9a-f]{64}$/.test(c.glueSha256 ?? "")) {
        throw new TypeError(`"components" expected transpiled components with a sha256 and an instantiate function`);
      }
      this.#bySha.set(c.componentSha256, c);
    }
    this.#maxLogBytes = options.maxLogBytes ?? 1024 * 1024;
    this.#meterFuel = options.meterFuel ?? true;
    this.#reuse = options.reuseInstances ?? true;
    const store = options.glueStore ?? null;
    this.#load = options.load ?? ((code) => loadComponent(code, store));
  }

  /**
   * Run one invocation: instantiate the component (or reset a kept instance set to its initial state), call
   * `invoke(JSON.stringify(input))`, parse the result.
   * @param invocation the invocation (its `code` is the component's bytes)
   * @returns the outcome; tool misbehaviour is reported, never thrown
   * @throws nothing: an unknown component, a bad limit or malformed code is an error outcome as well
   * @example
   * const outcome = await runner.run({ ...invocation, code: componentBytes });
   * if (outcome.status === "success") console.log(outcome.output, outcome.fuelUsed);
   */
  async run(invocation: ToolInvocation): Promise<ToolOutcome> {
    const call = new ComponentCall(invocation, this.#maxLogBytes);
    try {
      return await this.#invoke(call);
    } catch (err) {
      if (call.halted !== null) return call.fail(call.halted);
      return call.fail(err instanceof ReachError ? err : guestError(invocation.toolName, err));
    } finally {
      const set = call.set;
      if (set !== undefined) {
        set.detach();
        if (call.clean && call.halted === null && this.#reuse && set.restorable()) this.#give(call.poolKey, set);
      }
    }
  }

  /** Compile, link, instantiate (or reset a kept instance set) and invoke. */
  async #invoke(call: ComponentCall): Promise<ToolOutcome> {
    const invocation = call.invocation;
    const component = await this.#lookup(invocation);
    const cores = await compileCoreModules(invocation.code, component, invocation.memoryLimitBytes, this.#meterFuel);
    call.identity = { sha256: component.componentSha256, metered: this.#meterFuel ? cores.meteredDigest : null };
    call.poolKey = cores.key;
    const imports: ImportObject = {
      ...(component.importNames.some((n) => n.startsWith("wasi:")) ? call.makeWasi().imports : {}),
      [HOST_INTERFACE]: { call: (op: unknown, request: unknown) => callHostImport(invocation, op, request, call.checkpoint, call.halt) },
    };
    const given = selectImports(component, imports);
    const input = JSON.stringify(invocation.input);
    if (input === undefined || input.length > MAX_INPUT_BYTES) {
      return call.fail(new ReachError("PROTO_INVALID_ARGUMENT", `component input must be JSON of at most ${MAX_INPUT_BYTES} bytes`));
    }
    call.checkpoint();
    const { set, exports } = await this.#instantiate(call, component, cores, given);
    call.instances = set.instances;
    for (const slot of set.fuelSlots) call.meter.bind(slot);
    call.meter.start();
    return call.invoke(exports, input);
  }

  /**
   * Instantiate the glue over a kept instance set reset to its initial state, or over new core instances (kept for
   * later when reuse is on). `call.set` follows the set in use, so that the caller detaches it whatever happens.
   */
  async #instantiate(
    call: ComponentCall,
    component: TranspiledComponent,
    cores: CompiledCores,
    given: ImportObject,
  ): Promise<{ set: InstanceSet; exports: ToolExports }> {
    const getCoreModule = (name: string): WebAssembly.Module => {
      const m = cores.modules.get(name);
      if (m === undefined) throw new ReachError("PACK_MALFORMED", `the glue asked for an unknown core module "${name}"`);
      return m.module;
    };
    call.set = this.#reuse ? this.#take(cores.key) : undefined;
    if (call.set !== undefined) {
      // The glue is instantiated afresh (its resource tables and handles are new); its core instances are the
      // kept ones, already reset to their initial state by #take.
      try {
        const exports = await component.instantiate(getCoreModule, given, call.set.replayingHook());
        call.set.endReplay();
        return { set: call.set, exports };
      } catch (err) {
        if (!(err instanceof ShapeMismatch)) throw err;
        call.set = undefined; // not what was recorded: drop it and instantiate afresh
      }
    }
    const snapshotable = new Set([...cores.modules.values()].filter((m) => m.snapshotable).map((m) => m.module));
    const set = new InstanceSet((m) => snapshotable.has(m));
    call.set = set;
    const exports = await component.instantiate(getCoreModule, given, set.recordingHook());
    if (this.#reuse) set.capture();
    return { set, exports };
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

  async #lookup(invocation: ToolInvocation): Promise<TranspiledComponent> {
    const digest = componentDigest(invocation.code);
    const component = this.#bySha.get(digest) ?? (await this.#load(invocation.code));
    if (component.componentSha256 !== digest) {
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the glue found for tool "${invocation.toolName}" belongs to another component`, {
        details: { componentSha256: digest, glueFor: component.componentSha256 },
        recoverable: false,
      });
    }
    return component;
  }
}
