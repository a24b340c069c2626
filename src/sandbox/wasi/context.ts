/**
 * The state of one WASI preview1 instance and the wrapper every host function runs in. The wrapper is what makes
 * the shim safe against a hostile guest: nothing a guest passes can make a host function throw into the engine;
 * failures become errno values (WASI preview1 `errno`). Only two sentinels leave a host function: {@link WasiExit}
 * (`proc_exit`) and {@link WasiHalt} (a limit or a policy decision stops the guest); the runner catches both.
 * @module
 */
import type { ReachError } from "../../protocol/mod.ts";
import type { VirtualClock } from "../../determinism/mod.ts";
import type { RandomStream } from "../../determinism/mod.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { Errno, errnoOf, STDIO_RIGHTS } from "./errno.ts";
import { FdTable, OutputSink } from "./fd-table.ts";
import { GuestMemory } from "./memory.ts";
import { DIR_RIGHTS } from "./errno.ts";
import { OpenFiles } from "./open-files.ts";

/** Where a guest's time and randomness come from (ARCHITECTURE "Determinism": both virtual). */
export interface WasiSources {
  /** A clock read: the virtual time in ms since the Unix epoch (the clock then advances, `VirtualClock.read`). */
  readClockMs(): number;
  /** Let `ms` of virtual time pass (`poll_oneoff` sleeps). Optional: without it sleeps return at once. */
  sleepMs?(ms: number): void;
  /** `n` (≤ 65 536) bytes of the invocation's seeded stream. */
  randomBytes(n: number): Uint8Array;
}

/**
 * Sources backed directly by a VirtualClock and a RandomStream (the CLI, tests).
 * @param clock the virtual clock (read per call; sleeps advance it)
 * @param random the seeded stream
 * @returns the sources
 * @example virtualSources(new VirtualClock(), deriveStream("0", "wasi"))
 */
export function virtualSources(clock: VirtualClock, random: RandomStream): WasiSources {
  return {
    readClockMs: () => clock.read(),
    sleepMs: (ms) => clock.advance(ms),
    randomBytes: (n) => random.bytes(n),
  };
}

/** A preopened directory: `guest` is the name the guest sees (`"/data"`, `"."`), `path` the workspace folder. */
export type Preopen = { guest: string; path: string };

/** Options of a WASI instance. */
export type WasiOptions = {
  /** argv, `args[0]` being the program name. Default `["tool"]`. */
  args?: readonly string[];
  /** The environment, exactly these variables in this order. Default none. */
  env?: ReadonlyArray<readonly [string, string]>;
  /** Bytes of standard input. Default empty. */
  stdin?: Uint8Array;
  /** Clock and randomness. */
  sources: WasiSources;
  /** The workspace (or a step's transaction) that preopens point into. */
  fs?: WorkspaceView;
  /** Preopened directories, given fds 3, 4, … in this order. Requires `fs`. */
  preopens?: readonly Preopen[];
  /** Cap on stdout bytes (default 16 MiB); more is `EXEC_RESOURCE_EXHAUSTED`. */
  maxStdoutBytes?: number;
  /** Cap on stderr bytes (default 1 MiB). */
  maxStderrBytes?: number;
  /** Pass-through of stdout chunks. */
  onStdout?: (bytes: Uint8Array) => void;
  /** Pass-through of stderr chunks. */
  onStderr?: (bytes: Uint8Array) => void;
  /** Called before every host call (the runner checks limits here and may throw a {@link WasiHalt}). */
  beforeCall?: () => void;
};

/** Thrown by `proc_exit`: the guest ended with `code`. */
export class WasiExit {
  /** The exit code (u32). */
  readonly code: number;
  /** @param code the exit code */
  constructor(code: number) {
    this.code = code;
  }
}

/** Thrown to stop the guest for a reason the runner reports (`error`). */
export class WasiHalt {
  /** Why the guest was stopped. */
  readonly error: ReachError;
  /** @param error the reason */
  constructor(error: ReachError) {
    this.error = error;
  }
}

/** The state shared by all host functions of one instance. */
export class WasiContext {
  readonly mem = new GuestMemory();
  readonly fds = new FdTable();
  /** The open files (one per workspace file node) and the timestamps the guest set. */
  readonly files = new OpenFiles();
  readonly fs: WorkspaceView | null;
  readonly sources: WasiSources;
  readonly args: Uint8Array[];
  readonly env: Uint8Array[];
  readonly stdout: OutputSink;
  readonly stderr: OutputSink;
  readonly #beforeCall: (() => void) | undefined;
  /** The first policy violation or resource limit the guest hit (it saw only an errno). */
  violation: ReachError | null = null;
  /** Set once the guest was halted; later calls halt again (a guest cannot swallow a halt). */
  halted: WasiHalt | null = null;
  /** Set by `proc_exit`. */
  exited: WasiExit | null = null;

  /**
   * @param options see {@link WasiOptions}
   * @throws TypeError when args or env contain NUL, or an env name contains `=`; or preopens are given without `fs`
   */
  constructor(options: WasiOptions) {
    const enc = new TextEncoder();
    const args = options.args ?? ["tool"];
    for (const a of args) if (typeof a !== "string" || a.includes("\0")) throw new TypeError(`"args" must be strings without NUL`);
    const env = options.env ?? [];
    for (const [k, v] of env) {
      if (k.length === 0 || k.includes("=") || k.includes("\0") || v.includes("\0")) {
        throw new TypeError(`"env" entries must be NAME=VALUE with a non-empty NAME without "=" and no NUL`);
      }
    }
    this.args = args.map((a) => enc.encode(a + "\0"));
    this.env = env.map(([k, v]) => enc.encode(`${k}=${v}\0`));
    this.sources = options.sources;
    this.fs = options.fs ?? null;
    this.#beforeCall = options.beforeCall;
    this.stdout = new OutputSink("stdout", options.maxStdoutBytes ?? 16 * 1024 * 1024, options.onStdout);
    this.stderr = new OutputSink("stderr", options.maxStderrBytes ?? 1024 * 1024, options.onStderr);
    this.fds.set(0, { kind: "stdin", data: options.stdin ?? new Uint8Array(0), pos: 0, rights: STDIO_RIGHTS });
    this.fds.set(1, { kind: "out", sink: this.stdout, rights: STDIO_RIGHTS });
    this.fds.set(2, { kind: "out", sink: this.stderr, rights: STDIO_RIGHTS });
    const preopens = options.preopens ?? [];
    if (preopens.length > 0 && this.fs === null) throw new TypeError(`"preopens" need "fs" (a workspace view)`);
    for (const p of preopens) {
      const base = { guest: p.guest, path: p.path };
      this.fds.add({ kind: "dir", path: p.path, preopen: p.guest, base, rights: DIR_RIGHTS, inheriting: DIR_RIGHTS | FILE_ALL });
    }
  }

  /** Remember the first violation (seed 003 §4.3: it halts the step after the call). */
  remember(err: ReachError): void {
    if (this.violation === null) this.violation = err;
  }

  /**
   * Wrap a host function: limits first, then the call; anything thrown becomes an errno, except the sentinels.
   * @param fn the implementation (returns an errno, or nothing for success)
   * @returns the import
   */
  wrap(fn: (...args: never[]) => number | void): (...args: unknown[]) => number {
    return (...args: unknown[]): number => {
      if (this.halted !== null) throw this.halted;
      if (this.exited !== null) throw this.exited;
      try {
        this.#beforeCall?.();
        return (fn as (...a: unknown[]) => number | void)(...args) ?? Errno.SUCCESS;
      } catch (err) {
        if (err instanceof WasiExit) {
          this.exited = err;
          throw err;
        }
        if (err instanceof WasiHalt) {
          this.halted = err;
          throw err;
        }
        if (isReachErrorCode(err, "EXEC_RESOURCE_EXHAUSTED")) {
          this.halted = new WasiHalt(err as ReachError);
          throw this.halted;
        }
        const { errno, violation } = errnoOf(err);
        if (violation !== null) this.remember(violation);
        return errno;
      }
    };
  }
}

const FILE_ALL = (1n << 30n) - 1n;

function isReachErrorCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code && err instanceof Error;
}
