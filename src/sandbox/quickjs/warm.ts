/**
 * A sandbox prepared on a fresh engine and kept across invocations (README.md "Reuse"): a runtime and context with
 * the prelude set up, and a snapshot of the engine's memory taken right after. The first invocation runs on the
 * sandbox as prepared; after each invocation the memory is put back to the snapshot, so every invocation starts
 * from the same bytes — those of a fresh engine with a freshly prepared sandbox, whatever ran before. That is what
 * makes fuel a function of the tool, its input, the host's answers and the budget only.
 *
 * An invocation that leaves the engine in a state the snapshot cannot stand for — its linear memory grew, the tool
 * reached the module loader, or quickjs-emscripten's host-side bookkeeping changed (a helper context, host
 * references) — ends the engine: it is dropped, and the next invocation gets a fresh engine and sandbox. Nothing is
 * ever prepared on an engine that already ran a tool.
 * @module
 */
import type { QuickJSRuntime } from "quickjs-emscripten-core";
import { ReachError } from "../../protocol/mod.ts";
import { unmeteredWork } from "../fuel/mod.ts";
import type { SandboxApiLevel } from "../types.ts";
import type { InvocationState } from "./bridge.ts";
import type { QuickJsEngine } from "./engine.ts";
import { idleSlot, openSandbox, prepareGuest, Stop } from "./sandbox.ts";
import type { InvocationSlot, Sandbox } from "./sandbox.ts";
import { MemorySnapshot } from "./snapshot.ts";

/** A snapshot larger than this is not taken (the engine then serves one invocation); ≈0.5 MB is usual. */
export const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;

/** quickjs-emscripten 0.32's host-reference table (private fields, read only to detect a change). */
type HostRefTable = { nextId: number; freelist: unknown[] };

function hostRefTable(runtime: QuickJSRuntime): HostRefTable | undefined {
  const table = (runtime as unknown as { hostRefs?: Partial<HostRefTable> }).hostRefs;
  return typeof table?.nextId === "number" && Array.isArray(table.freelist) ? (table as HostRefTable) : undefined;
}

/** A sandbox on its own engine, served from a memory snapshot when one could be taken; one per engine. */
export class WarmSandbox {
  /** The engine (fresh when the sandbox was prepared). */
  readonly engine: QuickJsEngine;
  /** The QuickJS heap limit the sandbox was prepared with. */
  readonly memoryLimitBytes: number;
  /** The sandbox API level whose prelude it was prepared with (a snapshot serves that level only). */
  readonly level: SandboxApiLevel;
  /** The sandbox (runtime, context, guest). */
  readonly sandbox: Sandbox;
  /** What its host functions answer for. */
  readonly slot: InvocationSlot;
  readonly #snapshot: MemorySnapshot | null;
  readonly #memoryBytes: number;
  readonly #hostRefs: { nextId: number; free: number };

  private constructor(engine: QuickJsEngine, memoryLimitBytes: number, level: SandboxApiLevel, sandbox: Sandbox, slot: InvocationSlot, snapshot: MemorySnapshot | null, hostRefs: HostRefTable | undefined) {
    this.engine = engine;
    this.memoryLimitBytes = memoryLimitBytes;
    this.level = level;
    this.sandbox = sandbox;
    this.slot = slot;
    this.#snapshot = hostRefs === undefined ? null : snapshot;
    this.#memoryBytes = engine.memory.buffer.byteLength;
    this.#hostRefs = { nextId: hostRefs?.nextId ?? 0, free: hostRefs?.freelist.length ?? 0 };
  }

  /**
   * Prepare a sandbox on a fresh engine and, when `keep`, snapshot it. Preparing is not metered against any
   * invocation's budget (the engine runs it on a meter of its own); it is the same work on every fresh engine.
   * @param engine a fresh engine (`EngineHost.instantiate`; nothing ran on it)
   * @param memoryLimitBytes QuickJS's heap limit
   * @param maxStackBytes QuickJS's stack limit
   * @param keep take a snapshot so that the engine can serve more than one invocation
   * @param level the sandbox API level (which prelude; default 1)
   * @returns the sandbox; `reusable` is false when no snapshot was taken (unknown memory layout, `keep` false, or
   *   a surprise in the engine's state), and the engine then serves one invocation
   * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the sandbox cannot be prepared (the engine must be dropped)
   * @example const warm = WarmSandbox.prepare(await engines.instantiate(limit), limit, 256 * 1024, true);
   */
  static prepare(engine: QuickJsEngine, memoryLimitBytes: number, maxStackBytes: number, keep: boolean, level: SandboxApiLevel = 1): WarmSandbox {
    const slot = idleSlot();
    let sandbox: Sandbox;
    try {
      const setup = unmeteredWork();
      if (engine.slot !== null) setup.bind(engine.slot);
      sandbox = openSandbox(engine.module, memoryLimitBytes, maxStackBytes, slot);
      prepareGuest(sandbox, slot, level);
    } catch (err) {
      if (err instanceof Stop) throw err.error;
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the QuickJS sandbox could not be prepared", { cause: err });
    }
    const table = hostRefTable(sandbox.runtime);
    const layout = engine.layout;
    let snapshot: MemorySnapshot | null = null;
    if (keep && layout !== null && table !== undefined && sandbox.runtime.context === undefined) {
      snapshot = MemorySnapshot.take(engine.memory, layout, maxStackBytes);
      if (snapshot !== null && snapshot.size > MAX_SNAPSHOT_BYTES) snapshot = null;
    }
    return new WarmSandbox(engine, memoryLimitBytes, level, sandbox, slot, snapshot, table);
  }

  /** Whether the engine can serve another invocation after the current one (a snapshot was taken). */
  get reusable(): boolean {
    return this.#snapshot !== null;
  }

  /** Bytes a restore copies (static data, the top of the stack, the heap); 0 without a snapshot. */
  get snapshotBytes(): number {
    return this.#snapshot?.size ?? 0;
  }

  /**
   * Hand the sandbox to an invocation.
   * @param slot the invocation's host and state
   */
  begin(slot: InvocationSlot): void {
    Object.assign(this.slot, slot);
  }

  /**
   * Take the sandbox back after an invocation and, when the engine's state allows it, put the snapshot back.
   * @param state the invocation's state
   * @returns true when the engine is in its snapshot's state again and can serve the next invocation; false when
   *   there is no snapshot, or the invocation moved the engine past what it stands for (the linear memory grew,
   *   the tool reached the module loader, quickjs-emscripten made a helper context or changed its host
   *   references): the caller drops the engine
   */
  end(state: InvocationState): boolean {
    Object.assign(this.slot, idleSlot());
    const snapshot = this.#snapshot;
    if (snapshot === null || state.importAttempted || this.sandbox.runtime.context !== undefined) return false;
    const table = hostRefTable(this.sandbox.runtime);
    if (table === undefined || table.nextId !== this.#hostRefs.nextId || table.freelist.length !== this.#hostRefs.free) return false;
    const memory = this.engine.memory;
    if (memory.buffer.byteLength !== this.#memoryBytes) return false;
    try {
      snapshot.restore(memory); // also zeroes what the heap grew into within the memory (dlmalloc's state is static data)
    } catch {
      return false;
    }
    return true;
  }
}
