/**
 * Runtime-neutral conformance cases. Each case file under `conformance/lib/` exports a function that takes a
 * `ConformanceIO` (file access supplied by the runner) and returns named cases; the Node runner (vitest,
 * `conformance/node/`) and the Deno runner (`deno test`, `conformance/deno/`) run the same list.
 * A case passes when `run()` returns; it fails by throwing. `run()` may return a string "fingerprint"
 * (for example a digest of what it computed) so that the two runtimes can be compared byte for byte.
 * @module
 */

/** File access given to case files, rooted at the `conformance/` folder. */
export type ConformanceIO = {
  /** Step threads of this runtime (`EngineEnvironment.stepThreads`), when the runner can start them. */
  stepThreads?: EngineEnvironment["stepThreads"];
  /** Read a file under `conformance/` as bytes. `path` is relative and uses forward slashes. */
  readBytes(path: string): Uint8Array;
  /** Read a file under `conformance/` as UTF-8 text. */
  readText(path: string): string;
  /** List the file names (not paths) directly inside a folder under `conformance/`, sorted. */
  list(path: string): string[];
};

import type { EngineEnvironment } from "../../src/engine/runners.ts";

/** One named conformance case. */
export type ConformanceCase = {
  name: string;
  run(): string | void | Promise<string | void>;
};

/** Throw with `message` unless `cond` holds. */
export function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}
