/**
 * A prepared sandbox kept across invocations (README.md "Reuse"): a runtime and context with the prelude set up, and
 * a snapshot of the engine's memory taken right after. Before each invocation the memory is put back to the
 * snapshot, so every invocation starts from the same bytes: nothing a tool did (globals, prototypes, heap contents)
 * survives it.
 *
 * Fuel stays what a fresh sandbox per invocation costs: the sandbox is prepared by the same calls
 * (`sandbox.ts`), on the same engine state (right after the previous sandbox was torn down), and the fuel that took
 * (`setupFuel`) is charged to every invocation that starts from the snapshot. An invocation that leaves the engine
 * in a state the snapshot cannot stand for — its heap grew past the snapshot's break, or quickjs-emscripten's
 * host-side bookkeeping changed — is torn down as a per-invocation sandbox would be, and the next invocation
 * prepares a new one.
 * @module
 */
import type { QuickJSRuntime } from "quickjs-emscripten-core";
import { fuelUsed, MAX_FUEL, setFuel } from "../fuel/mod.ts";
import type { InvocationState } from "./bridge.ts";
import type { QuickJsEngine } from "./engine.ts";
import { closeSandbox, idleSlot, openSandbox, prepareGuest, Stop } from "./sandbox.ts";
import type { InvocationSlot, Sandbox } from "./sandbox.ts";
import { MemorySnapshot } from "./snapshot.ts";

/** A snapshot larger than this (a heap a big tool grew) costs more to restore than a fresh sandbox to prepare. */
export const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;

/** quickjs-emscripten 0.32's host-reference table (private fields, read only to detect a change). */
type HostRefTable = { nextId: number; freelist: unknown[] };

function hostRefTable(runtime: QuickJSRuntime): HostRefTable | undefined {
  const table = (runtime as unknown as { hostRefs?: Partial<HostRefTable> }).hostRefs;
  return typeof table?.nextId === "number" && Array.isArray(table.freelist) ? (table as HostRefTable) : undefined;
}

/** A sandbox served from a memory snapshot; one per engine at a time. */
export class WarmSandbox {
  /** The engine whose memory the snapshot is of. */
  readonly engine: QuickJsEngine;
  /** The QuickJS heap limit the sandbox was prepared with. */
  readonly memoryLimitBytes: number;
  /** The sandbox (runtime, context, guest). */
  readonly sandbox: Sandbox;
  /** What its host functions answer for. */
  readonly slot: InvocationSlot;
  /** Fuel that preparing the sandbox took (0 on an unmetered engine), charged to every invocation. */
  readonly setupFuel: bigint;
  readonly #snapshot: MemorySnapshot;
  readonly #hostRefs: { nextId: number; free: number };
  #dirty = false;

  private constructor(engine: QuickJsEngine, memoryLimitBytes: number, sandbox: Sandbox, slot: InvocationSlot, setupFuel: bigint, snapshot: MemorySnapshot, hostRefs: HostRefTable) {
    this.engine = engine;
    this.memoryLimitBytes = memoryLimitBytes;
    this.sandbox = sandbox;
    this.slot = slot;
    this.setupFuel = setupFuel;
    this.#snapshot = snapshot;
    this.#hostRefs = { nextId: hostRefs.nextId, free: hostRefs.freelist.length };
  }

  /**
   * Prepare a sandbox on an engine that has run an invocation and torn its sandbox down, and snapshot it.
   * @param engine the engine (`layout` known)
   * @param memoryLimitBytes QuickJS's heap limit
   * @param maxStackBytes QuickJS's stack limit
   * @returns the sandbox, or `null` when it cannot be snapshotted (the sandbox is torn down again; the engine is
   *   marked dead if that trapped)
   * @throws whatever the engine throws while preparing (a trap): the engine is torn and must be dropped
   */
  static open(engine: QuickJsEngine, memoryLimitBytes: number, maxStackBytes: number): WarmSandbox | null {
    const layout = engine.layout;
    if (layout === null) return null;
    const slot = idleSlot();
    if (engine.metered) setFuel(engine.instance, MAX_FUEL);
    const sandbox = openSandbox(engine.module, memoryLimitBytes, maxStackBytes, slot);
    let snapshot: MemorySnapshot | null = null;
    try {
      prepareGuest(sandbox, slot);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
    }
    const setupFuel = engine.metered ? fuelUsed(engine.instance, MAX_FUEL) : 0n;
    const table = hostRefTable(sandbox.runtime);
    if (sandbox.guest !== undefined && table !== undefined && sandbox.runtime.context === undefined) {
      snapshot = MemorySnapshot.take(engine.memory, layout, maxStackBytes);
    }
    if (snapshot === null || table === undefined || snapshot.size > MAX_SNAPSHOT_BYTES) {
      if (!closeSandbox(sandbox, slot.state)) engine.dead = true;
      return null;
    }
    return new WarmSandbox(engine, memoryLimitBytes, sandbox, slot, setupFuel, snapshot, table);
  }

  /** Bytes a restore copies (static data, the top of the stack, the heap). */
  get snapshotBytes(): number {
    return this.#snapshot.size;
  }

  /**
   * Put the engine's memory back to the snapshot if an invocation ran since it was taken.
   * @throws Error when the memory no longer fits the snapshot (the engine must be dropped)
   */
  restore(): void {
    if (!this.#dirty) return;
    this.#snapshot.restore(this.engine.memory);
    this.#dirty = false;
  }

  /**
   * Hand the sandbox to an invocation (after `restore`).
   * @param slot the invocation's host, state and deadline
   */
  begin(slot: InvocationSlot): void {
    this.#dirty = true;
    Object.assign(this.slot, slot);
  }

  /**
   * Take the sandbox back after an invocation.
   * @param state the invocation's state
   * @returns true when the next invocation can start from the snapshot; false when the engine's state has moved
   *   past it (the heap grew, the tool reached the module loader, or quickjs-emscripten made a helper context or
   *   changed its host references) and the caller must `close` the sandbox as it is
   */
  end(state: InvocationState): boolean {
    Object.assign(this.slot, idleSlot());
    const table = hostRefTable(this.sandbox.runtime);
    const same = !state.importAttempted && table !== undefined && table.nextId === this.#hostRefs.nextId && table.freelist.length === this.#hostRefs.free &&
      this.sandbox.runtime.context === undefined && this.#snapshot.breakUnmoved(this.engine.memory);
    // Kept: the promises of unanswered host calls live in memory the next restore overwrites.
    if (same) state.deferreds.clear();
    return same;
  }

  /**
   * Tear the sandbox down, in the engine's memory as it is (after `end` returned false, or after `restore`).
   * @param state the last invocation's state, if its deferred promises are still to be disposed
   * @returns false when tearing down trapped (the engine must be dropped)
   */
  close(state: InvocationState = idleSlot().state): boolean {
    if (this.engine.metered) setFuel(this.engine.instance, MAX_FUEL);
    return closeSandbox(this.sandbox, state);
  }
}
