/**
 * The run-scoped key/value store behind `memory.get` / `memory.set` (seed 002 `read_memory` / `write_memory`),
 * staged per step like the workspace (seed 003 §4.3 "No Partial Effects").
 *
 * Keys are 1..256 UTF-16 code units of well-formed text without control characters; values are JSON, stored as
 * their RFC 8785 canonical text (at most 1 MiB), so a read returns a fresh copy and nothing a tool keeps can change
 * the store. `beginStep()` opens a {@link MemoryTransaction}; its writes reach the store only on `commit()`.
 * @module
 */
import { canonicalize } from "../../canonical/mod.ts";
import { sha256Hex } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import type { JsonValue } from "../../protocol/mod.ts";

/** Longest key, in UTF-16 code units. */
export const MAX_MEMORY_KEY_LENGTH = 256;
/** Largest value, in bytes of canonical JSON (UTF-16 code units bound it from below; we count UTF-8 bytes). */
export const MAX_MEMORY_VALUE_BYTES = 1024 * 1024;
/** Default most keys. */
export const DEFAULT_MAX_MEMORY_ENTRIES = 10_000;
/** Default largest total of all values, in bytes: 64 MiB. */
export const DEFAULT_MAX_MEMORY_BYTES = 64 * 1024 * 1024;

/** Limits of a store. */
export type MemoryStoreOptions = { maxEntries?: number; maxTotalBytes?: number };

/** What `get` answers. */
export type MemoryRead = { found: boolean; value: JsonValue };

const encoder = new TextEncoder();
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const BAD_KEY = /[\u0000-\u001f\u007f]|\p{Surrogate}/u;

function invalid(message: string, details: Record<string, unknown>): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", message, { details });
}

/**
 * Check a memory key.
 * @param key the key
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it is not a string of 1..256 printable, well-formed characters
 * @example assertMemoryKey("notes/summary")
 */
export function assertMemoryKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_MEMORY_KEY_LENGTH || BAD_KEY.test(key)) {
    throw invalid(`memory key must be a string of 1..${MAX_MEMORY_KEY_LENGTH} printable characters; shorten or clean it`,
      { field: "key", reason: typeof key === "string" ? `length ${key.length} or control characters` : typeof key });
  }
}

/**
 * Canonical text of a memory value, within the size limit.
 * @param value any JSON value
 * @returns the canonical text and its UTF-8 byte length
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it is not JSON or is over 1 MiB
 */
export function memoryValueText(value: unknown): { text: string; bytes: number } {
  let text: string;
  try {
    text = canonicalize(value);
  } catch (err) {
    throw invalid(`memory value is not JSON: ${(err as Error).message}`, { field: "value" });
  }
  const bytes = text.length > MAX_MEMORY_VALUE_BYTES ? text.length * 3 : encoder.encode(text).length;
  if (text.length > MAX_MEMORY_VALUE_BYTES || bytes > MAX_MEMORY_VALUE_BYTES) {
    throw invalid(`memory value is over ${MAX_MEMORY_VALUE_BYTES} bytes of canonical JSON; store a smaller value ` +
      `or write the data to temp/`, { field: "value", max: MAX_MEMORY_VALUE_BYTES });
  }
  return { text, bytes };
}

type State = { values: Map<string, string>; sizes: Map<string, number>; totalBytes: number };

/**
 * The state of every new store. States are never changed once made (a transaction copies its base on its first write
 * and commit installs the copy), so new stores can share this one instead of making two maps each.
 */
const EMPTY_STATE: State = Object.freeze({ values: new Map<string, string>(), sizes: new Map<string, number>(), totalBytes: 0 });

function positive(v: number | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`"${name}" expected a positive safe integer, got ${v}`);
  return v;
}

function read(s: State, key: string): MemoryRead {
  assertMemoryKey(key);
  const text = s.values.get(key);
  return text === undefined ? { found: false, value: null } : { found: true, value: JSON.parse(text) as JsonValue };
}

/**
 * The committed store of a run.
 * @example
 * const store = new MemoryStore();
 * const tx = store.beginStep(); tx.set("a", { x: 1 }); tx.commit();
 * store.get("a") // { found: true, value: { x: 1 } }
 */
export class MemoryStore {
  #state: State = EMPTY_STATE;
  #open: MemoryTransaction | null = null;
  readonly #maxEntries: number;
  readonly #maxTotalBytes: number;

  /**
   * @param options limits (entries, total bytes)
   * @throws RangeError when a limit is not a positive safe integer
   */
  constructor(options: MemoryStoreOptions = {}) {
    this.#maxEntries = positive(options.maxEntries, "maxEntries", DEFAULT_MAX_MEMORY_ENTRIES);
    this.#maxTotalBytes = positive(options.maxTotalBytes, "maxTotalBytes", DEFAULT_MAX_MEMORY_BYTES);
  }

  /**
   * A store holding these entries (canonical value texts, as {@link MemoryStore.entries} gives them): how a step that
   * runs apart (another thread) starts from the state its dependencies left (`src/engine/step-graph.ts`).
   * @param entries `[key, canonicalValueText]` pairs
   * @param options limits
   * @returns the store
   * @throws RangeError when a limit is not a positive safe integer
   * @example MemoryStore.fromEntries([["a", "1"]]).get("a") // { found: true, value: 1 }
   */
  static fromEntries(entries: Iterable<readonly [string, string]>, options: MemoryStoreOptions = {}): MemoryStore {
    const store = new MemoryStore(options);
    const values = new Map<string, string>();
    const sizes = new Map<string, number>();
    let totalBytes = 0;
    for (const [k, text] of entries) {
      const bytes = encoder.encode(text).length;
      totalBytes += bytes - (sizes.get(k) ?? 0);
      values.set(k, text);
      sizes.set(k, bytes);
    }
    store.#state = { values, sizes, totalBytes };
    return store;
  }

  /**
   * Read a committed value.
   * @param key the key
   * @returns `{found, value}` (`value` null when not found)
   * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad key
   */
  get(key: string): MemoryRead {
    return read(this.#state, key);
  }

  /**
   * Open the staging transaction of one step.
   * @returns the transaction
   * @throws ReachError `PROTO_SEQUENCE_ERROR` when one is already open
   */
  beginStep(): MemoryTransaction {
    if (this.#open !== null) throw new ReachError("PROTO_SEQUENCE_ERROR", "a memory transaction is already open; commit or roll it back first");
    const tx = new MemoryTransaction(this.#state, this.#maxEntries, this.#maxTotalBytes, (t, s) => {
      if (this.#open !== t) return;
      if (s !== null) this.#state = s;
      this.#open = null;
    });
    this.#open = tx;
    return tx;
  }

  /**
   * Keys and canonical values, sorted by key (UTF-16 code units).
   * @returns `[key, canonicalValueText]` pairs
   */
  entries(): [string, string][] {
    return [...this.#state.values.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /**
   * SHA-256 of the canonical JSON of `entries()`; equal digests mean equal stores.
   * @returns 64 hex digits
   */
  digest(): string {
    return sha256Hex(canonicalize(this.entries()));
  }
}

/**
 * The staged view of one step: reads see the step's own writes; `commit()` installs them, `rollback()` drops them.
 * Made by {@link MemoryStore.beginStep}.
 */
export class MemoryTransaction {
  readonly #base: State;
  #staged: State | null = null;
  #open = true;
  readonly #maxEntries: number;
  readonly #maxTotalBytes: number;
  readonly #close: (tx: MemoryTransaction, state: State | null) => void;

  /** @internal */
  constructor(base: State, maxEntries: number, maxTotalBytes: number, close: (tx: MemoryTransaction, state: State | null) => void) {
    this.#base = base;
    this.#maxEntries = maxEntries;
    this.#maxTotalBytes = maxTotalBytes;
    this.#close = close;
  }

  #state(): State {
    if (!this.#open) throw new ReachError("PROTO_SEQUENCE_ERROR", "this memory transaction is closed; begin a new step");
    return this.#staged ?? this.#base;
  }

  /** Whether the transaction can still be used. */
  isOpen(): boolean {
    return this.#open;
  }

  /**
   * Read a value (staged writes included).
   * @param key the key
   * @returns `{found, value}`
   * @throws ReachError `PROTO_INVALID_ARGUMENT`; `PROTO_SEQUENCE_ERROR` when closed
   */
  get(key: string): MemoryRead {
    return read(this.#state(), key);
  }

  /**
   * Stage a value. Validates completely before changing anything.
   * @param key the key
   * @param value a JSON value (at most 1 MiB canonical)
   * @throws ReachError `PROTO_INVALID_ARGUMENT`; `EXEC_RESOURCE_EXHAUSTED` over the entry or byte limit;
   *   `PROTO_SEQUENCE_ERROR` when closed
   * @example tx.set("notes/a", [1, 2])
   */
  set(key: string, value: unknown): void {
    const s = this.#state();
    assertMemoryKey(key);
    const { text, bytes } = memoryValueText(value);
    const old = s.sizes.get(key);
    const entries = s.values.size + (old === undefined ? 1 : 0);
    const total = s.totalBytes - (old ?? 0) + bytes;
    if (entries > this.#maxEntries || total > this.#maxTotalBytes) {
      throw new ReachError("EXEC_RESOURCE_EXHAUSTED", `memory.set would hold ${entries} keys / ${total} bytes, over the ` +
        `limit of ${this.#maxEntries} / ${this.#maxTotalBytes}; store less`, { details: { entries, total } });
    }
    if (this.#staged === null) {
      this.#staged = { values: new Map(this.#base.values), sizes: new Map(this.#base.sizes), totalBytes: this.#base.totalBytes };
    }
    this.#staged.values.set(key, text);
    this.#staged.sizes.set(key, bytes);
    this.#staged.totalBytes = total;
  }

  /**
   * Install the staged writes in the store, all at once.
   * @throws ReachError `PROTO_SEQUENCE_ERROR` when closed
   */
  commit(): void {
    this.#state();
    this.#open = false;
    this.#close(this, this.#staged);
    this.#staged = null;
  }

  /** Drop the staged writes. Idempotent. */
  rollback(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#staged = null;
    this.#close(this, null);
  }
}
