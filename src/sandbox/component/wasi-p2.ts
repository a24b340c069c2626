/**
 * A deterministic WASI 0.2 (preview 2) import set for jco-transpiled components, written from the WIT of
 * WebAssembly/WASI v0.2 (`wasi:cli`, `wasi:clocks`, `wasi:random`, `wasi:io`, `wasi:filesystem`). It replaces
 * `@bytecodealliance/preview2-shim` completely; nothing here reaches the real environment:
 *
 * - `wasi:cli/environment`: no variables, no arguments, no working directory. `wasi:cli/exit` ends the tool.
 * - `wasi:cli/stdin` is empty; `stdout` / `stderr` are captured (capped) and become the tool's log.
 *   No terminals (`get-terminal-*` return none).
 * - `wasi:clocks/wall-clock` reads the host's virtual clock (host op `clock.now`, recorded on the tape);
 *   `wasi:clocks/monotonic-clock` is a per-invocation counter starting at 0 that advances 1 ms per read;
 *   sleeping (`subscribe-duration` / `subscribe-instant` + `block`/`poll`) moves it forward instead of waiting.
 * - `wasi:random/*` reads the invocation's seeded stream (host op `random.bytes`, recorded on the tape).
 * - `wasi:filesystem/preopens` returns no directories, so no descriptor can exist; `wasi:filesystem/types`
 *   methods answer `bad-descriptor`. (Files go through the host API's `fs.*` operations instead.)
 *
 * Interfaces that are not here (`wasi:sockets`, `wasi:http`, …) are not supplied: a component that imports them is
 * refused before it starts (see `runner.ts`).
 *
 * Errors that must stop the tool (timeout, limits, a policy violation from the host) are thrown as `ReachError`;
 * the glue re-throws `Error` instances instead of turning them into WIT `err` values, so they unwind the guest.
 * @module
 */
import { base64ToBytes } from "../../canonical/hex.ts";
import { ReachError } from "../../protocol/errors.ts";
import type { HostApi, JsonObject } from "../types.ts";

/** Options of `createWasiP2`. */
export type WasiP2Options = {
  /** The invocation's host API: wall clock (`clock.now`) and randomness (`random.bytes`) come from here. */
  host: HostApi;
  /** Called at the start of every WASI call; throws (a `ReachError`) to stop the tool, e.g. past its deadline. */
  checkpoint: () => void;
  /** Most bytes kept of stdout and of stderr each; the rest is dropped and counted. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Most bytes one `get-random-bytes` call may ask for. Default 1 MiB. */
  maxRandomBytes?: number;
};

/** What a component wrote to stdout / stderr (each capped), and both interleaved in write order (`log`). */
export type CapturedOutput = { stdout: Uint8Array; stderr: Uint8Array; log: Uint8Array; droppedBytes: number };

/** Thrown by `wasi:cli/exit`; the runner reports it as the tool's failure (a tool has no business exiting). */
export class GuestExit extends Error {
  /** The status: 0 for `exit(ok)`, 1 for `exit(err)`, or the code of `exit-with-code`. */
  readonly status: number;
  /** @param status the exit status */
  constructor(status: number) {
    super(`the component called wasi:cli/exit with status ${status}`);
    this.name = "GuestExit";
    this.status = status;
  }
}

/** The WASI interfaces `createWasiP2` supplies, by the unversioned names jco's glue looks them up with. */
export const WASI_P2_INTERFACES = [
  "wasi:cli/environment",
  "wasi:cli/exit",
  "wasi:cli/stderr",
  "wasi:cli/stdin",
  "wasi:cli/stdout",
  "wasi:cli/terminal-input",
  "wasi:cli/terminal-output",
  "wasi:cli/terminal-stderr",
  "wasi:cli/terminal-stdin",
  "wasi:cli/terminal-stdout",
  "wasi:clocks/monotonic-clock",
  "wasi:clocks/wall-clock",
  "wasi:filesystem/preopens",
  "wasi:filesystem/types",
  "wasi:io/error",
  "wasi:io/poll",
  "wasi:io/streams",
  "wasi:random/insecure",
  "wasi:random/insecure-seed",
  "wasi:random/random",
] as const;

/** An import object: interface name → its functions and resource classes. */
export type ImportObject = Record<string, Record<string, unknown>>;

/** A WASI 0.2 import set bound to one invocation. */
export type WasiP2 = {
  /** The imports, keyed by interface name (`wasi:io/streams`, …). */
  imports: ImportObject;
  /** stdout / stderr written so far. */
  output(): CapturedOutput;
};

const NS_PER_MS = 1_000_000n;
/** The maximum a single stream write may carry (`check-write` permit; also WASI's 4096 for blocking writes). */
const WRITE_PERMIT = 65_536n;
const U64_MAX = (1n << 64n) - 1n;

function u64ToNumber(value: unknown, name: string, max: number): number {
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

/**
 * Build the WASI 0.2 imports for one invocation.
 * @param options the host API, the checkpoint and the capture limits
 * @returns the import object and a reader for the captured output
 * @throws TypeError when `options.host` or `options.checkpoint` is missing
 * @example
 * const wasi = createWasiP2({ host, checkpoint: () => {} });
 * const instance = await instantiate(getCoreModule, { ...wasi.imports, "reach:tool/host": hostImport });
 */
export function createWasiP2(options: WasiP2Options): WasiP2 {
  const { host, checkpoint } = options;
  if (typeof host?.invokeSync !== "function") throw new TypeError(`"host" expected a HostApi`);
  if (typeof checkpoint !== "function") throw new TypeError(`"checkpoint" expected a function`);
  const maxOutput = options.maxOutputBytes ?? 1024 * 1024;
  const maxRandom = options.maxRandomBytes ?? 1024 * 1024;

  // ---- virtual monotonic clock (ns), per invocation ----
  let monotonic = 0n;
  const readMonotonic = (): bigint => {
    const t = monotonic;
    monotonic += NS_PER_MS;
    return t;
  };

  // ---- host-backed wall clock and randomness ----
  const hostCall = (op: "clock.now" | "random.bytes", request: JsonObject): JsonObject => host.invokeSync(op, request);
  const wallNow = (): { seconds: bigint; nanoseconds: number } => {
    const { ms } = hostCall("clock.now", {});
    if (typeof ms !== "number" || !Number.isSafeInteger(ms)) {
      throw new ReachError("EXEC_TOOL_FAILED", "host clock.now returned no integer `ms`; this is a host bug");
    }
    // wall-clock datetimes are unsigned: a virtual epoch before 1970 reads as 1970-01-01T00:00:00Z.
    const clamped = Math.max(0, ms);
    return { seconds: BigInt(Math.floor(clamped / 1000)), nanoseconds: (clamped % 1000) * 1_000_000 };
  };
  const randomBytes = (n: number): Uint8Array => {
    const out = new Uint8Array(n);
    for (let at = 0; at < n; ) {
      const want = Math.min(65_536, n - at);
      const { data } = hostCall("random.bytes", { n: want });
      const chunk = typeof data === "string" ? base64ToBytes(data) : new Uint8Array(0);
      if (chunk.length !== want) {
        throw new ReachError("EXEC_TOOL_FAILED", `host random.bytes returned ${chunk.length} bytes, not ${want}`);
      }
      out.set(chunk, at);
      at += want;
    }
    return out;
  };
  const randomU64 = (): bigint => {
    const b = randomBytes(8);
    return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
  };

  // ---- io ----
  class IoError {
    constructor(readonly message: string) {}
    toDebugString(): string {
      checkpoint();
      return this.message;
    }
  }
  class Pollable {
    /** Monotonic instant (ns) at which it becomes ready; 0n = ready now. */
    constructor(readonly readyAt: bigint = 0n) {}
    ready(): boolean {
      checkpoint();
      return monotonic >= this.readyAt;
    }
    block(): void {
      checkpoint();
      // A virtual sleep: jump the clock forward instead of waiting.
      if (monotonic < this.readyAt) monotonic = this.readyAt;
    }
  }
  const poll = (list: unknown): Uint32Array => {
    checkpoint();
    if (!Array.isArray(list) || list.length === 0) {
      throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:io/poll.poll needs a non-empty list of pollables");
    }
    const pollables = list.map((p) => {
      if (!(p instanceof Pollable)) throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:io/poll.poll: not a pollable");
      return p;
    });
    // Everything is ready at once except virtual timers: advance to the earliest of those if none is ready.
    if (!pollables.some((p) => p.readyAt <= monotonic)) {
      monotonic = pollables.reduce((m, p) => (p.readyAt < m ? p.readyAt : m), pollables[0]!.readyAt);
    }
    const ready: number[] = [];
    pollables.forEach((p, i) => {
      if (p.readyAt <= monotonic) ready.push(i);
    });
    return Uint32Array.from(ready);
  };

  class InputStream {
    // stdin is empty: every read reports the stream closed (WIT `stream-error::closed`).
    read(len: unknown): Uint8Array {
      checkpoint();
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
      checkpoint();
      return new Pollable();
    }
  }

  const captured = {
    stdout: [] as Uint8Array[],
    stderr: [] as Uint8Array[],
    log: [] as Uint8Array[],
    size: { stdout: 0, stderr: 0 },
    dropped: 0,
  };
  class OutputStream {
    constructor(readonly which: "stdout" | "stderr") {}
    #append(buf: unknown): void {
      if (!(buf instanceof Uint8Array)) throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:io/streams: write expects bytes");
      if (BigInt(buf.length) > WRITE_PERMIT) {
        throw new ReachError("EXEC_SANDBOX_VIOLATION", `wasi:io/streams: a write of ${buf.length} bytes exceeds its permit`);
      }
      const room = Math.max(0, maxOutput - captured.size[this.which]);
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
      checkpoint();
      return WRITE_PERMIT;
    }
    write(buf: unknown): void {
      checkpoint();
      this.#append(buf);
    }
    blockingWriteAndFlush(buf: unknown): void {
      checkpoint();
      this.#append(buf);
    }
    flush(): void {
      checkpoint();
    }
    blockingFlush(): void {
      checkpoint();
    }
    writeZeroes(len: unknown): void {
      checkpoint();
      this.#append(new Uint8Array(u64ToNumber(len, "len", Number(WRITE_PERMIT))));
    }
    blockingWriteZeroesAndFlush(len: unknown): void {
      this.writeZeroes(len);
    }
    splice(): bigint {
      checkpoint();
      throw { tag: "closed" };
    }
    blockingSplice(): bigint {
      return this.splice();
    }
    subscribe(): Pollable {
      checkpoint();
      return new Pollable();
    }
  }
  const stdin = new InputStream();
  const stdout = new OutputStream("stdout");
  const stderr = new OutputStream("stderr");

  // ---- filesystem: no preopens, so no descriptor ever exists ----
  const badDescriptor = (): never => {
    checkpoint();
    throw "bad-descriptor";
  };
  class Descriptor {
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
    Object.defineProperty(Descriptor.prototype, name, { value: badDescriptor });
  }
  class DirectoryEntryStream {
    constructor() {
      throw new ReachError("EXEC_SANDBOX_VIOLATION", "wasi:filesystem: directory streams cannot be created");
    }
  }
  Object.defineProperty(DirectoryEntryStream.prototype, "readDirectoryEntry", { value: badDescriptor });

  class TerminalInput {}
  class TerminalOutput {}

  const exit = (status: number): never => {
    throw new GuestExit(status);
  };
  const guard = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): R => {
    checkpoint();
    return fn(...args);
  };

  const imports: ImportObject = {
    "wasi:cli/environment": {
      getEnvironment: guard((): [string, string][] => []),
      getArguments: guard((): string[] => []),
      initialCwd: guard((): string | undefined => undefined),
    },
    "wasi:cli/exit": {
      exit: guard((status: unknown) => exit(isOkResult(status) ? 0 : 1)),
      exitWithCode: guard((code: unknown) => exit(typeof code === "number" ? code : 1)),
    },
    "wasi:cli/stdin": { getStdin: guard(() => stdin) },
    "wasi:cli/stdout": { getStdout: guard(() => stdout) },
    "wasi:cli/stderr": { getStderr: guard(() => stderr) },
    "wasi:cli/terminal-input": { TerminalInput },
    "wasi:cli/terminal-output": { TerminalOutput },
    "wasi:cli/terminal-stdin": { getTerminalStdin: guard((): TerminalInput | undefined => undefined) },
    "wasi:cli/terminal-stdout": { getTerminalStdout: guard((): TerminalOutput | undefined => undefined) },
    "wasi:cli/terminal-stderr": { getTerminalStderr: guard((): TerminalOutput | undefined => undefined) },
    "wasi:clocks/monotonic-clock": {
      now: guard(readMonotonic),
      resolution: guard(() => NS_PER_MS),
      subscribeInstant: guard((when: unknown) => {
        if (typeof when !== "bigint") throw new ReachError("EXEC_SANDBOX_VIOLATION", "subscribe-instant expects a u64");
        return new Pollable(when);
      }),
      subscribeDuration: guard((d: unknown) => {
        if (typeof d !== "bigint") throw new ReachError("EXEC_SANDBOX_VIOLATION", "subscribe-duration expects a u64");
        return new Pollable(monotonic + d);
      }),
    },
    "wasi:clocks/wall-clock": {
      now: guard(wallNow),
      resolution: guard(() => ({ seconds: 0n, nanoseconds: 1_000_000 })),
    },
    "wasi:filesystem/preopens": { getDirectories: guard((): [Descriptor, string][] => []) },
    "wasi:filesystem/types": {
      Descriptor,
      DirectoryEntryStream,
      filesystemErrorCode: guard((_err: unknown): string | undefined => undefined),
    },
    "wasi:io/error": { Error: IoError },
    "wasi:io/poll": { Pollable, poll },
    "wasi:io/streams": { InputStream, OutputStream },
    "wasi:random/random": {
      getRandomBytes: guard((len: unknown) => randomBytes(u64ToNumber(len, "len", maxRandom))),
      getRandomU64: guard(randomU64),
    },
    "wasi:random/insecure": {
      getInsecureRandomBytes: guard((len: unknown) => randomBytes(u64ToNumber(len, "len", maxRandom))),
      getInsecureRandomU64: guard(randomU64),
    },
    "wasi:random/insecure-seed": {
      insecureSeed: guard((): [bigint, bigint] => [randomU64(), randomU64()]),
    },
  };

  return {
    imports,
    output: () => ({
      stdout: concat(captured.stdout, captured.size.stdout),
      stderr: concat(captured.stderr, captured.size.stderr),
      log: concat(captured.log, captured.size.stdout + captured.size.stderr),
      droppedBytes: captured.dropped,
    }),
  };
}

function isOkResult(status: unknown): boolean {
  return typeof status === "object" && status !== null && (status as { tag?: unknown }).tag === "ok";
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
