/**
 * The conformance suite's vocabulary (seed 003 §10): five categories, cases that each name the clause they check, the
 * results, and the host the platform hands in (process spawning, files, ports, time) so that the suite itself stays
 * web-standard and runs the same on Node and Deno.
 * @module
 */

/** The five categories of seed 003 §10, in its order. */
export const CATEGORIES = ["schema", "determinism", "replay", "policy", "federation"] as const;
/** One category. */
export type Category = (typeof CATEGORIES)[number];

/** What one run of the implementation gave back. */
export type ExecResult = {
  /** Exit code; null when it was killed (by the suite's timeout or a signal). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the suite killed it at its timeout. */
  timedOut: boolean;
};

/** A long-running implementation process (`node serve`), started and ready. */
export type ServedProcess = {
  /** Its first line on stdout (with `--json`, the readiness object). */
  line: string;
  /** Stop it (SIGTERM, then SIGKILL) and wait for it to exit. */
  stop(): Promise<void>;
};

/**
 * What the platform gives the suite: the implementation as a command, files, ports and time. Paths are host paths
 * joined with `/`. Every process is bounded by a timeout; output is bounded in bytes.
 */
export type ConformanceHost = {
  /** Run the implementation with these arguments (after its command words) and wait for it. */
  exec(args: readonly string[], options?: { timeoutMs?: number }): Promise<ExecResult>;
  /** Start the implementation as a long-running process; resolves at its first stdout line. */
  serve(args: readonly string[], options?: { timeoutMs?: number }): Promise<ServedProcess>;
  /** A file's bytes, or null when it does not exist. */
  readFile(path: string): Promise<Uint8Array | null>;
  /** Write a file (its folder is created). */
  writeFile(path: string, bytes: Uint8Array): Promise<void>;
  /** Whether anything exists at `path`. */
  exists(path: string): Promise<boolean>;
  /** The names directly inside a folder, sorted (empty when it does not exist). */
  list(path: string): Promise<string[]>;
  /** Every regular file under a folder, as sorted `/`-separated relative paths (empty when it does not exist). */
  listFiles(path: string): Promise<string[]>;
  /** Copy a folder tree. */
  copyDir(from: string, to: string): Promise<void>;
  /** A fresh, empty scratch folder for one suite run (removed by `cleanup`). */
  scratchDir(): Promise<string>;
  /** Remove everything the suite made. */
  cleanup(): Promise<void>;
  /** A TCP port free on 127.0.0.1 right now. */
  freePort(): Promise<number>;
  /** Wall-clock milliseconds (delegation expiry only; no verdict depends on speed). */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** The installed reach-wasm package's root: `packs/` and `conformance/` are read from there. */
  packageRoot: string;
};

/** A case's verdict. */
export type CaseResult = {
  id: string;
  category: Category;
  clause: string;
  title: string;
  status: "passed" | "failed";
  /** Why it failed (host paths replaced by `<scratch>` and `<package>`). */
  message?: string;
};

/** A category's verdicts. */
export type CategoryResult = { category: Category; passed: number; failed: number; cases: CaseResult[] };

/** The suite's report: one object, the same bytes on Node and Deno for the same implementation. */
export type ConformanceReport = {
  specVersion: "1.0.0";
  /** `reach-wasm (this installation)` or the `--impl` command as given. */
  implementation: string;
  passed: boolean;
  summary: { total: number; passed: number; failed: number };
  categories: CategoryResult[];
};
