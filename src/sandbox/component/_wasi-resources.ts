/**
 * The resources of the WASI 0.2 import set (`wasi-p2.ts`): streams, pollables, the error resource, the filesystem's
 * descriptors (which never exist) and terminals, with the state of one invocation they work on.
 *
 * The classes are made once per process, not per invocation: making ~10 classes and defining the filesystem methods
 * cost ~0.15 ms per invocation. Everything an invocation changes lives in its `WasiState`; its import set's functions
 * close over it, its resources hold it from their constructor, so nothing is shared between invocations. jco's glue
 * only reads these classes (`instanceof`, `Object.create(Class.prototype)`, `Class[Symbol.for("cabiDispose")]`) and
 * sets the constant flag `_isHostProvided = true` on them; its handle and rep tables belong to each instantiation.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import type { HostApi } from "../types.ts";

/** The maximum a single stream write may carry (`check-write` permit; also WASI's 4096 for blocking writes). */
const WRITE_PERMIT = 65_536n;
const U64_MAX = (1n << 64n) - 1n;

/**
 * A WIT `u64` argument from the glue as a number, within a limit.
 * @param value the argument (a bigint from the glue)
 * @param name the parameter's name, for the messages and `details.reason`
 * @param max the largest value allowed
 * @returns the value as a number
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` for anything but a u64; `EXEC_RESOURCE_EXHAUSTED` above `max`
 * @example u64ToNumber(8n, "len", 1024) // 8
 */
export function u64ToNumber(value: unknown, name: string, max: number): number {
  if (typeof value !== "bigint" || value < 0n || value > U64_MAX) {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", `wasi: "${name}" expected a u64, got ${typeof value}`);
  }
  if (value > BigInt(max)) {
    throw new ReachError(
      "EXEC_RESOURCE_EXHAUSTED",
      `wasi: "${name}" is ${value}, above the limit of ${max}; ask for less at a time`,
      { details: { reason: name, limit: max } },
    );
  }
  return Number(value);
}

/** The state of one invocation's WASI import set. */
export type WasiState = {
  readonly host: HostApi;
  readonly checkpoint: () => void;
  readonly maxOutput: number;
  /** The virtual monotonic clock (ns): starts at 0, +1 ms per read, jumps forward on a sleep. */
  monotonic: bigint;
  /** stdout and stderr as written (each capped), and both in write order. */
  readonly captured: {
    stdout: Uint8Array[];
    stderr: Uint8Array[];
    log: Uint8Array[];
    size: { stdout: number; stderr: number };
    dropped: number;
  };
};

/** The error for an object the glue made for a handle that is no live resource (the component model traps). */
function notLive(): ReachError {
  return new ReachError("EXEC_SANDBOX_VIOLATION", "wasi: a resource was used through a handle that is not live");
}

/** A resource of one invocation: it holds that invocation's state. */
abstract class Resource {
  readonly #wasi: WasiState;
  constructor(wasi: WasiState) {
    this.#wasi = wasi;
  }
  /** The invocation state of `r`, or undefined when `r` is no resource made by `createWasiP2`. */
  static stateOf(r: object): WasiState | undefined {
    return #wasi in r ? r.#wasi : undefined;
  }
  /** Run the invocation's checkpoint and return its state (every method starts with it). */
  protected enter(): WasiState {
    // The glue makes a bare `Object.create(Class.prototype)` when a guest passes a handle it does not know.
    if (!(#wasi in this)) throw notLive();
    this.#wasi.checkpoint();
    return this.#wasi;
  }
}

// ---- io ----
/** WIT `wasi:io/error.error` (never made here: no stream operation fails with `last-operation-failed`). */
export class IoError extends Resource {
  constructor(wasi: WasiState, readonly message: string) {
    super(wasi);
  }
  toDebugString(): string {
    this.enter();
    return this.message;
  }
}

/** WIT `wasi:io/poll.pollable`: ready at once, or at a virtual instant. */
export class Pollable extends Resource {
  /** Monotonic instant (ns) at which it becomes ready; 0n = ready now. */
  readonly readyAt: bigint;
  constructor(wasi: WasiState, readyAt: bigint = 0n) {
    super(wasi);
    this.readyAt = readyAt;
  }
  ready(): boolean {
    return this.enter().monotonic >= this.readyAt;
  }
  block(): void {
    const w = this.enter();
    // A virtual sleep: jump the clock forward instead of waiting.
    if (w.monotonic < this.readyAt) w.monotonic = this.readyAt;
  }
}

/**
 * WIT `wasi:io/poll.poll` for one invocation: everything is ready at once except virtual timers; when none is
 * ready, the clock jumps to the earliest.
 * @param w the invocation's state
 * @param list the pollables (the glue's list of borrows)
 * @returns the indices of the ready pollables
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` for an empty list or anything but this invocation's pollables; what
 *   the checkpoint throws
 * @example poll(w, [new Pollable(w, 9_000n), new Pollable(w, 4_000n)]) // Uint32Array [1], clock now 4000 ns
 */
export function poll(w: WasiState, list: unknown): Uint32Array {
  w.checkpoint();
  if (!Array.isArray(list) || list.length === 0) {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:io/poll.poll needs a non-empty list of pollables");
  }
  const pollables = list.map((p) => {
    // A pollable of another invocation cannot get here (the glue's tables are per instantiation); refuse it anyway.
    if (!(p instanceof Pollable) || Resource.stateOf(p) !== w) {
      throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:io/poll.poll: not a pollable");
    }
    return p;
  });
  // Everything is ready at once except virtual timers: advance to the earliest of those if none is ready.
  if (!pollables.some((p) => p.readyAt <= w.monotonic)) {
    w.monotonic = pollables.reduce((m, p) => (p.readyAt < m ? p.readyAt : m), pollables[0]!.readyAt);
  }
  const ready: number[] = [];
  pollables.forEach((p, i) => {
    if (p.readyAt <= w.monotonic) ready.push(i);
  });
  return Uint32Array.from(ready);
}

/** WIT `wasi:io/streams.input-stream`: stdin, which is empty. */
export class InputStream extends Resource {
  // stdin is empty: every read reports the stream closed (WIT `stream-error::closed`).
  read(len: unknown): Uint8Array {
    this.enter();
    u64ToNumber(len, "len", Number.MAX_SAFE_INTEGER);
    throw { tag: "closed" };
  }
  blockingRead(len: unknown): Uint8Array {
    return this.read(len);
  }
  skip(len: unknown): bigint {
    this.read(len);
    return 0n;
  }
  blockingSkip(len: unknown): bigint {
    return this.skip(len);
  }
  subscribe(): Pollable {
    return new Pollable(this.enter());
  }
}

/** WIT `wasi:io/streams.output-stream`: stdout or stderr, captured into the invocation's state (capped). */
export class OutputStream extends Resource {
  constructor(wasi: WasiState, readonly which: "stdout" | "stderr") {
    super(wasi);
  }
  #append(w: WasiState, buf: unknown): void {
    if (!(buf instanceof Uint8Array)) throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:io/streams: write expects bytes");
    if (BigInt(buf.length) > WRITE_PERMIT) {
      throw new ReachError("EXEC_SANDBOX_VIOLATION", `wasi:io/streams: a write of ${buf.length} bytes exceeds its permit`);
    }
    const captured = w.captured;
    const room = Math.max(0, w.maxOutput - captured.size[this.which]);
    const kept = buf.length <= room ? buf : buf.subarray(0, room);
    if (kept.length > 0) {
      const copy = kept.slice();
      captured[this.which].push(copy);
      captured.log.push(copy);
      captured.size[this.which] += kept.length;
    }
    captured.dropped += buf.length - kept.length;
  }
  checkWrite(): bigint {
    this.enter();
    return WRITE_PERMIT;
  }
  write(buf: unknown): void {
    const w = this.enter();
    this.#append(w, buf);
  }
  blockingWriteAndFlush(buf: unknown): void {
    const w = this.enter();
    this.#append(w, buf);
  }
  flush(): void {
    this.enter();
  }
  blockingFlush(): void {
    this.enter();
  }
  writeZeroes(len: unknown): void {
    const w = this.enter();
    this.#append(w, new Uint8Array(u64ToNumber(len, "len", Number(WRITE_PERMIT))));
  }
  blockingWriteZeroesAndFlush(len: unknown): void {
    this.writeZeroes(len);
  }
  splice(): bigint {
    this.enter();
    throw { tag: "closed" };
  }
  blockingSplice(): bigint {
    return this.splice();
  }
  subscribe(): Pollable {
    return new Pollable(this.enter());
  }
}

// ---- filesystem: no preopens, so no descriptor ever exists ----
// A descriptor method can only be reached through a handle the guest made up, on a bare object the glue made from
// the class's prototype. To answer `bad-descriptor` after the invocation's checkpoint, the classes handed to the glue
// are per invocation: empty subclasses of these (`filesystemClasses`, ~3 µs each) that carry the state as a static
// property. The methods themselves are defined once, here.
const FS_STATE: unique symbol = Symbol("wasi state");
type FsClass = { readonly [FS_STATE]?: WasiState };

function badDescriptor(this: unknown): never {
  const wasi = (this as { constructor?: FsClass } | null | undefined)?.constructor?.[FS_STATE];
  if (wasi === undefined) throw notLive();
  wasi.checkpoint();
  throw "bad-descriptor";
}

/** The shared `wasi:filesystem/types.descriptor`: cannot be constructed; its methods answer `bad-descriptor`. */
class DescriptorBase {
  constructor() {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:filesystem: descriptors cannot be created");
  }
}
for (const name of [
  "readViaStream", "writeViaStream", "appendViaStream", "advise", "syncData", "getFlags", "getType", "setSize",
  "setTimes", "read", "write", "readDirectory", "sync", "createDirectoryAt", "stat", "statAt", "setTimesAt",
  "linkAt", "openAt", "readlinkAt", "removeDirectoryAt", "renameAt", "symlinkAt", "unlinkFileAt", "isSameObject",
  "metadataHash", "metadataHashAt",
]) {
  Object.defineProperty(DescriptorBase.prototype, name, { value: badDescriptor });
}
/** The shared `wasi:filesystem/types.directory-entry-stream`: cannot be constructed. */
class DirectoryEntryStreamBase {
  constructor() {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:filesystem: directory streams cannot be created");
  }
}
Object.defineProperty(DirectoryEntryStreamBase.prototype, "readDirectoryEntry", { value: badDescriptor });

/**
 * The `wasi:filesystem/types` resource classes of one invocation: subclasses of the shared ones that carry `w`, so
 * that a method reached through a made-up handle runs this invocation's checkpoint before it answers
 * `bad-descriptor`. Neither class can be constructed.
 * @param w the invocation's state
 * @returns the classes `Descriptor` and `DirectoryEntryStream` for the import object
 * @throws nothing
 * @example
 * const { Descriptor } = filesystemClasses(w);
 * new Descriptor(); // throws ReachError EXEC_SANDBOX_VIOLATION
 */
export function filesystemClasses(w: WasiState): { Descriptor: typeof DescriptorBase; DirectoryEntryStream: typeof DirectoryEntryStreamBase } {
  class Descriptor extends DescriptorBase {
    static readonly [FS_STATE] = w;
  }
  class DirectoryEntryStream extends DirectoryEntryStreamBase {
    static readonly [FS_STATE] = w;
  }
  return { Descriptor, DirectoryEntryStream };
}

// ---- cli: no terminals (the `get-terminal-*` functions return none) ----
/** WIT `wasi:cli/terminal-input.terminal-input` (never made). */
export class TerminalInput {}
/** WIT `wasi:cli/terminal-output.terminal-output` (never made). */
export class TerminalOutput {}
