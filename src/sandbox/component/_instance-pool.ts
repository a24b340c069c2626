/**
 * Reusing a component's core instances across invocations without letting one invocation see another's state.
 *
 * Instantiating componentize-js output (a ~12 MB SpiderMonkey core module with ~9.5 MB of initial memory) costs
 * ~11 ms, and the first call into a fresh instance pays another few ms of page faults. An `InstanceSet` keeps the core
 * instances of one component and resets them before every invocation to the state they had right after the first
 * instantiation:
 *
 * - **Wasm state.** Every core module is rewritten (`_state-exports.ts`) so that every memory, table and mutable
 *   global it defines is exported, and a module with state that exports cannot capture (passive segments, a start
 *   function, v128 globals, …) makes the set non-reusable. Right after the first instantiation the set records all
 *   of it (memory bytes and size, table entries and size, global values). Before each later invocation it writes
 *   all of it back. Memory and tables can only grow, so a set whose memory or table grew is dropped, never
 *   reused. Zero pages of the snapshot are restored with `fill(0)`, the rest with a copy.
 * - **JS glue state.** The jco glue keeps its resource tables, handles and task state in the closure of its
 *   `instantiate`, so the runner calls `instantiate` afresh for every invocation. Only `instantiateCore` is
 *   intercepted: on reuse it hands back the recorded instance instead of instantiating. A core instance is bound
 *   to the JavaScript functions it was instantiated with, so each function import that came from the glue is
 *   given as a forwarder whose target is swapped to the current glue's function on every invocation (and to a
 *   function that throws while the set is idle). Imports that are exports of the set's own instances are the same
 *   objects every time, and this is checked. Any other import (a memory, table or global made by the glue itself)
 *   makes the set non-reusable.
 * - **Host state.** WASI (`wasi-p2.ts`) and the host API are created per invocation, as before.
 *
 * Anything unexpected (the glue instantiates other modules, in another order, or with other imports) is a
 * `ShapeMismatch`: the runner drops the set and instantiates fresh. The runner gives a set back to the pool only
 * after a clean return (never after a trap, a halt or running out of fuel), so a trapped instance is never reused.
 * @module
 */
import { FuelSlot, REFILL_MODULE, unmeteredWork } from "../fuel/mod.ts";
import { STATE_EXPORT_PREFIX } from "./_state-exports.ts";

/** The glue did not instantiate the same modules with the same imports as the first time. */
export class ShapeMismatch extends Error {
  constructor(what: string) {
    super(`component instance cannot be reused: ${what}`);
    this.name = "ShapeMismatch";
  }
}

type Slot = { fn: (...args: unknown[]) => unknown };
type Recorded = {
  module: WebAssembly.Module;
  instance: WebAssembly.Instance;
  /** Function imports from the glue, by `module\0name`: forwarded through a swappable slot. */
  slots: Map<string, Slot>;
  /** Imports that are exports of the set's own instances, by `module\0name`: must be the same objects again. */
  direct: Map<string, unknown>;
  /** The refill import of a metered module (added by the set), else null. */
  fuel: FuelSlot | null;
};

/** Runs of 4 KiB pages of a memory snapshot: all-zero runs are filled, the others copied from `data`. */
type MemorySnapshot = {
  memory: WebAssembly.Memory;
  byteLength: number;
  runs: Array<{ start: number; end: number; zero: boolean; at: number }>;
  data: Uint8Array;
};
type TableSnapshot = { table: WebAssembly.Table; entries: unknown[] };
type GlobalSnapshot = { global: WebAssembly.Global; value: unknown };
type Snapshot = { memories: MemorySnapshot[]; tables: TableSnapshot[]; globals: GlobalSnapshot[] };

const PAGE = 4096;
const idle: Slot["fn"] = () => {
  throw new Error("a reused component instance called an import while no invocation was running");
};

/** The core instances of one component instantiation, reusable once snapshotted. */
export class InstanceSet {
  readonly #calls: Recorded[] = [];
  readonly #own = new Set<unknown>();
  #snapshot: Snapshot | undefined;
  #reusable = true;
  #cursor = 0;

  /**
   * @param snapshotable whether a module was rewritten to export all its state (`exportState` did not give up)
   */
  constructor(private readonly snapshotable: (module: WebAssembly.Module) => boolean) {}

  /** The instances, in instantiation order. */
  get instances(): WebAssembly.Instance[] {
    return this.#calls.map((c) => c.instance);
  }

  /**
   * The fuel slots of the metered instances (their `reach_fuel.refill` imports, which the glue does not know about:
   * the set adds them), in instantiation order. Bind an invocation's `FuelMeter` to each.
   */
  get fuelSlots(): FuelSlot[] {
    return this.#calls.flatMap((c) => (c.fuel === null ? [] : [c.fuel]));
  }

  /** Each instance with the module it was made from, in instantiation order. */
  get cores(): Array<{ module: WebAssembly.Module; instance: WebAssembly.Instance }> {
    return this.#calls.map((c) => ({ module: c.module, instance: c.instance }));
  }

  /** Whether the set can be snapshotted and reused (known after the first instantiation). */
  get reusable(): boolean {
    return this.#reusable && this.#calls.length > 0;
  }

  /**
   * The `instantiateCore` for the first instantiation: instantiate, with glue functions behind forwarders.
   * @returns the hook to pass to the glue's `instantiate`
   */
  recordingHook(): (module: WebAssembly.Module, imports?: WebAssembly.Imports) => Promise<WebAssembly.Instance> {
    return async (module, imports) => {
      if (!this.snapshotable(module)) this.#reusable = false;
      const slots = new Map<string, Slot>();
      const direct = new Map<string, unknown>();
      const given: WebAssembly.Imports = {};
      for (const [ns, members] of Object.entries(imports ?? {})) {
        const out: Record<string, WebAssembly.ImportValue> = {};
        for (const [name, value] of Object.entries(members)) {
          const key = `${ns}\0${name}`;
          if (this.#own.has(value)) {
            direct.set(key, value);
            out[name] = value;
          } else if (typeof value === "function") {
            const slot: Slot = { fn: value as Slot["fn"] };
            slots.set(key, slot);
            out[name] = (...args: unknown[]) => slot.fn(...args);
          } else {
            this.#reusable = false; // state made outside the set: not covered by the snapshot
            out[name] = value;
          }
        }
        given[ns] = out;
      }
      // A metered module draws its fuel through a slot of its own; until an invocation binds its meter, what runs
      // (instantiation, start-up) is not a tool's work.
      const fuel = WebAssembly.Module.imports(module).some((i) => i.module === REFILL_MODULE) ? new FuelSlot() : null;
      if (fuel !== null) {
        unmeteredWork().bind(fuel);
        Object.assign(given, fuel.imports);
      }
      const instance = await WebAssembly.instantiate(module, given);
      fuel?.attach(instance);
      for (const value of Object.values(instance.exports)) this.#own.add(value);
      this.#calls.push({ module, instance, slots, direct, fuel });
      return instance;
    };
  }

  /**
   * The `instantiateCore` for a reuse: hand back the recorded instances in order, with the forwarders pointed at
   * the current glue's functions. Synchronous, so the glue's `instantiate` completes without awaiting.
   * @returns the hook to pass to the glue's `instantiate`
   * @throws ShapeMismatch (from the hook) when the glue asks for something else than the first time
   */
  replayingHook(): (module: WebAssembly.Module, imports?: WebAssembly.Imports) => WebAssembly.Instance {
    this.#cursor = 0;
    return (module, imports) => {
      const rec = this.#calls[this.#cursor++];
      if (rec === undefined || rec.module !== module) throw new ShapeMismatch("the glue instantiated another core module");
      let count = 0;
      for (const [ns, members] of Object.entries(imports ?? {})) {
        for (const [name, value] of Object.entries(members)) {
          count++;
          const key = `${ns}\0${name}`;
          const slot = rec.slots.get(key);
          if (slot !== undefined) {
            if (typeof value !== "function" || this.#own.has(value)) throw new ShapeMismatch(`import ${ns}#${name} changed kind`);
            slot.fn = value as Slot["fn"];
          } else if (!rec.direct.has(key) || rec.direct.get(key) !== value) {
            throw new ShapeMismatch(`import ${ns}#${name} changed`);
          }
        }
      }
      if (count !== rec.slots.size + rec.direct.size) throw new ShapeMismatch("the glue gave fewer imports");
      return rec.instance;
    };
  }

  /**
   * After a replayed instantiation: check every recorded instance was asked for.
   * @throws ShapeMismatch when the glue instantiated fewer modules than the first time
   */
  endReplay(): void {
    if (this.#cursor !== this.#calls.length) throw new ShapeMismatch("the glue instantiated fewer core modules");
  }

  /** Record the current (initial) state of every instance. Call once, right after the first instantiation. */
  capture(): void {
    if (!this.reusable) return;
    const snapshot: Snapshot = { memories: [], tables: [], globals: [] };
    const seen = new Set<unknown>();
    for (const { instance } of this.#calls) {
      for (const [name, value] of Object.entries(instance.exports)) {
        if (!name.startsWith(STATE_EXPORT_PREFIX) || seen.has(value)) continue;
        seen.add(value);
        if (value instanceof WebAssembly.Memory) snapshot.memories.push(snapshotMemory(value));
        else if (value instanceof WebAssembly.Table) {
          const entries: unknown[] = [];
          for (let i = 0; i < value.length; i++) entries.push(value.get(i));
          snapshot.tables.push({ table: value, entries });
        } else if (value instanceof WebAssembly.Global) snapshot.globals.push({ global: value, value: value.value });
      }
    }
    this.#snapshot = snapshot;
  }

  /**
   * Whether the instances still have the shape of the snapshot (no memory or table grew), so that `restore` can
   * bring them back exactly.
   * @returns false when the set must be dropped
   */
  restorable(): boolean {
    const s = this.#snapshot;
    if (s === undefined || !this.reusable) return false;
    return (
      s.memories.every((m) => m.memory.buffer.byteLength === m.byteLength) &&
      s.tables.every((t) => t.table.length === t.entries.length)
    );
  }

  /**
   * Put every memory, table and global back to the snapshot.
   * @throws ShapeMismatch when a memory or table grew since the snapshot (the set must be dropped)
   */
  restore(): void {
    const s = this.#snapshot;
    if (s === undefined || !this.restorable()) throw new ShapeMismatch("a memory or table grew");
    for (const m of s.memories) {
      const bytes = new Uint8Array(m.memory.buffer);
      for (const run of m.runs) {
        if (run.zero) bytes.fill(0, run.start, run.end);
        else bytes.set(m.data.subarray(run.at, run.at + (run.end - run.start)), run.start);
      }
    }
    // Reading an entry is ~3x cheaper than writing one, and tables (SpiderMonkey's has ~7700 entries) rarely change.
    for (const t of s.tables) {
      for (let i = 0; i < t.entries.length; i++) if (t.table.get(i) !== t.entries[i]) t.table.set(i, t.entries[i] as never);
    }
    for (const g of s.globals) g.global.value = g.value;
  }

  /** Point every forwarder at a function that throws (between invocations nothing may call the old glue). */
  detach(): void {
    for (const { slots } of this.#calls) for (const slot of slots.values()) slot.fn = idle;
  }
}

function snapshotMemory(memory: WebAssembly.Memory): MemorySnapshot {
  const bytes = new Uint8Array(memory.buffer);
  const words = new Int32Array(memory.buffer, 0, bytes.length >>> 2);
  const runs: MemorySnapshot["runs"] = [];
  let dataBytes = 0;
  for (let start = 0; start < bytes.length; start += PAGE) {
    const end = Math.min(bytes.length, start + PAGE);
    let zero = true;
    for (let w = start >>> 2, stop = end >>> 2; w < stop; w++) {
      if (words[w] !== 0) {
        zero = false;
        break;
      }
    }
    for (let b = end & ~3; zero && b < end; b++) if (bytes[b] !== 0) zero = false;
    const last = runs[runs.length - 1];
    if (last !== undefined && last.zero === zero && last.end === start) last.end = end;
    else runs.push({ start, end, zero, at: 0 });
  }
  for (const run of runs) {
    if (!run.zero) {
      run.at = dataBytes;
      dataBytes += run.end - run.start;
    }
  }
  const data = new Uint8Array(dataBytes);
  for (const run of runs) if (!run.zero) data.set(bytes.subarray(run.start, run.end), run.at);
  return { memory, byteLength: bytes.length, runs, data };
}
