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
 * refused before it starts (see `selectImports` in `_guest.ts`).
 *
 * Errors that must stop the tool (timeout, limits, a policy violation from the host) are thrown as `ReachError`;
 * the glue re-throws `Error` instances instead of turning them into WIT `err` values, so they unwind the guest.
 * @module
 */
import { base64ToBytes } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import type { HostApi } from "../types.ts";
import {
  filesystemClasses,
  InputStream,
  IoError,
  OutputStream,
  poll,
  Pollable,
  TerminalInput,
  TerminalOutput,
  u64ToNumber,
} from "./_wasi-resources.ts";
import type { WasiState } from "./_wasi-resources.ts";
import { concatBytes } from "../../canonical/mod.ts";

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

function exit(status: number): never {
  throw new GuestExit(status);
}

// ---- host-backed wall clock and randomness ----
function wallNow(w: WasiState): { seconds: bigint; nanoseconds: number } {
  const { ms } = w.host.invokeSync("clock.now", {});
  if (typeof ms !== "number" || !Number.isSafeInteger(ms)) {
    throw new ReachError("EXEC_TOOL_FAILED", "host clock.now returned no integer `ms`; this is a host bug");
  }
  // wall-clock datetimes are unsigned: a virtual epoch before 1970 reads as 1970-01-01T00:00:00Z.
  const clamped = Math.max(0, ms);
  return { seconds: BigInt(Math.floor(clamped / 1000)), nanoseconds: (clamped % 1000) * 1_000_000 };
}

function randomBytes(w: WasiState, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; ) {
    const want = Math.min(65_536, n - at);
    const { data } = w.host.invokeSync("random.bytes", { n: want });
    const chunk = typeof data === "string" ? base64ToBytes(data) : new Uint8Array(0);
    if (chunk.length !== want) {
      throw new ReachError("EXEC_TOOL_FAILED", `host random.bytes returned ${chunk.length} bytes, not ${want}`);
    }
    out.set(chunk, at);
    at += want;
  }
  return out;
}

function randomU64(w: WasiState): bigint {
  const b = randomBytes(w, 8);
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
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
  const maxRandom = options.maxRandomBytes ?? 1024 * 1024;
  // Per invocation: this state, the std streams, the filesystem classes and the functions below (closures over `w`).
  // The other resource classes are shared (`_wasi-resources.ts`); their instances hold `w`.
  const w: WasiState = {
    host,
    checkpoint,
    maxOutput: options.maxOutputBytes ?? 1024 * 1024,
    monotonic: 0n,
    captured: { stdout: [], stderr: [], log: [], size: { stdout: 0, stderr: 0 }, dropped: 0 },
  };
  const guard: Guard = (fn) => (...args) => {
    checkpoint();
    return fn(...args);
  };
  const imports: ImportObject = {
    ...cliImports(w, guard),
    ...clockImports(w, guard),
    "wasi:filesystem/preopens": { getDirectories: guard((): [unknown, string][] => []) },
    "wasi:filesystem/types": {
      ...filesystemClasses(w),
      filesystemErrorCode: guard((_err: unknown): string | undefined => undefined),
    },
    "wasi:io/error": { Error: IoError },
    "wasi:io/poll": { Pollable, poll: (list: unknown) => poll(w, list) },
    "wasi:io/streams": { InputStream, OutputStream },
    ...randomImports(w, guard, maxRandom),
  };

  const captured = w.captured;
  return {
    imports,
    output: () => ({
      stdout: concatBytes(captured.stdout, captured.size.stdout),
      stderr: concatBytes(captured.stderr, captured.size.stderr),
      log: concatBytes(captured.log, captured.size.stdout + captured.size.stderr),
      droppedBytes: captured.dropped,
    }),
  };
}

/** Wraps an import so that it passes the checkpoint before it runs. */
type Guard = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R;

/** `wasi:cli/*`: no environment, arguments or working directory, exit, the std streams, no terminal. */
function cliImports(w: WasiState, guard: Guard): ImportObject {
  const stdin = new InputStream(w);
  const stdout = new OutputStream(w, "stdout");
  const stderr = new OutputStream(w, "stderr");
  return {
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
  };
}

/** `wasi:clocks/*`: the virtual monotonic clock (a millisecond per reading) and the wall clock. */
function clockImports(w: WasiState, guard: Guard): ImportObject {
  const readMonotonic = (): bigint => {
    const t = w.monotonic;
    w.monotonic += NS_PER_MS;
    return t;
  };
  return {
    "wasi:clocks/monotonic-clock": {
      now: guard(readMonotonic),
      resolution: guard(() => NS_PER_MS),
      subscribeInstant: guard((when: unknown) => {
        if (typeof when !== "bigint") throw new ReachError("EXEC_SANDBOX_VIOLATION", "subscribe-instant expects a u64");
        return new Pollable(w, when);
      }),
      subscribeDuration: guard((d: unknown) => {
        if (typeof d !== "bigint") throw new ReachError("EXEC_SANDBOX_VIOLATION", "subscribe-duration expects a u64");
        return new Pollable(w, w.monotonic + d);
      }),
    },
    "wasi:clocks/wall-clock": {
      now: guard(() => wallNow(w)),
      resolution: guard(() => ({ seconds: 0n, nanoseconds: 1_000_000 })),
    },
  };
}

/** `wasi:random/*`: the seeded randomness the host hands out, at most `maxRandom` bytes a call. */
function randomImports(w: WasiState, guard: Guard, maxRandom: number): ImportObject {
  return {
    "wasi:random/random": {
      getRandomBytes: guard((len: unknown) => randomBytes(w, u64ToNumber(len, "len", maxRandom))),
      getRandomU64: guard(() => randomU64(w)),
    },
    "wasi:random/insecure": {
      getInsecureRandomBytes: guard((len: unknown) => randomBytes(w, u64ToNumber(len, "len", maxRandom))),
      getInsecureRandomU64: guard(() => randomU64(w)),
    },
    "wasi:random/insecure-seed": {
      insecureSeed: guard((): [bigint, bigint] => [randomU64(w), randomU64(w)]),
    },
  };
}

function isOkResult(status: unknown): boolean {
  return typeof status === "object" && status !== null && (status as { tag?: unknown }).tag === "ok";
}

