/**
 * Writing results to the host without ever leaving a half-written file: every file is written to a temporary name
 * in the same directory and renamed into place; a directory of results is built under a temporary name and renamed
 * as a whole. Runs on Node and on Deno (through `node:` compatibility).
 * @module
 */
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { ReachError } from "../protocol/errors.ts";

let counter = 0;
/** Temporary files and folders being written now: removed before the process exits on a second signal. */
const inFlight = new Set<string>();
function tempName(path: string): string {
  counter++;
  const name = `${path}.tmp-${process.pid}-${counter}`;
  inFlight.add(name);
  return name;
}

/** Remove every temporary file or folder still being written (synchronously: the process is about to exit). */
function removeInFlight(): void {
  for (const path of inFlight) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // nothing more can be done on the way out
    }
  }
}

/**
 * Synchronous on purpose: while a file is written, no signal handler runs in between (they run on the event loop),
 * so a second signal finds every file either not started or renamed into place — never half-written — and the
 * runtime has no file operation still running on another thread when the process exits.
 */
function writeFileDurably(path: string, bytes: Uint8Array, mode: number): void {
  const fd = openSync(path, "wx", mode);
  try {
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(path, mode); // umask may have narrowed or widened nothing; make the mode exact
}

/**
 * Write a file atomically (temporary name, then rename). Parent directories are created.
 * @param path the destination
 * @param bytes the content
 * @param mode the file mode (default 0644; key files use 0600)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file cannot be written (nothing is left behind)
 * @example
 * ```ts
 * await writeFileAtomic(".reach/example.json", new TextEncoder().encode("{}\n"));
 * ```
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array, mode = 0o644): Promise<void> {
  const tmp = tempName(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileDurably(tmp, bytes, mode);
    renameSync(tmp, path);
    inFlight.delete(tmp);
  } catch (err) {
    rmSync(tmp, { force: true });
    inFlight.delete(tmp);
    throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot write ${JSON.stringify(path)}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Write a directory of files atomically: built under a temporary name beside `dir`, then renamed to `dir`. An
 * existing `dir` with the same name is replaced only after the new one is complete.
 * @param dir the destination directory
 * @param files relative `/`-separated paths (already validated by the caller) and their bytes
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written (nothing is left behind)
 * @example
 * ```ts
 * await writeDirAtomic(".reach/example", new Map([["a.txt", new TextEncoder().encode("a")]]));
 * ```
 */
export async function writeDirAtomic(dir: string, files: ReadonlyMap<string, Uint8Array>): Promise<void> {
  const tmp = tempName(dir);
  try {
    mkdirSync(tmp, { recursive: true });
    for (const [rel, bytes] of files) {
      const target = join(tmp, ...rel.split("/"));
      mkdirSync(dirname(target), { recursive: true });
      writeFileDurably(target, bytes, 0o644);
    }
    if (existsSync(dir)) {
      const old = tempName(`${dir}.old`);
      renameSync(dir, old);
      renameSync(tmp, dir);
      inFlight.delete(tmp);
      removeTree(old);
      inFlight.delete(old);
    } else {
      renameSync(tmp, dir);
      inFlight.delete(tmp);
    }
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    inFlight.delete(tmp);
    throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot write ${JSON.stringify(dir)}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Remove a directory this process just moved aside (a run's files: a few plain files and folders). Node's recursive
 * `rmSync` loads and runs its retrying remover, ~1 ms of a short run; this walks the tree once, and falls back to it
 * on any surprise.
 */
function removeTree(dir: string): void {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) removeTree(path);
      else unlinkSync(path);
    }
    rmdirSync(dir);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Read all of stdin.
 * @param maxBytes refuse more than this
 * @returns the bytes
 */
export async function readStdin(maxBytes = 64 * 1024 * 1024): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const c = chunk instanceof Uint8Array ? chunk : new TextEncoder().encode(String(chunk));
    total += c.length;
    if (total > maxBytes) throw new ReachError("PROTO_INVALID_ARGUMENT", `stdin holds more than ${maxBytes} bytes`);
    chunks.push(c);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Turn SIGINT and SIGTERM into an abort signal for the duration of a run. A second signal exits at once (130/143),
 * after removing any temporary file still being written, so no partial file is left.
 * @returns the signal and a function that removes the handlers (kept after a first signal: the process is ending)
 */
export function abortOnSignals(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handlers: [NodeJS.Signals, () => void][] = [];
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    const h = (): void => {
      if (controller.signal.aborted) {
        removeInFlight();
        process.exit(name === "SIGINT" ? 130 : 143);
      }
      controller.abort(name);
    };
    process.on(name, h);
    handlers.push([name, h]);
  }
  return {
    signal: controller.signal,
    dispose: () => {
      // Once a signal arrived the process is on its way out: the handlers stay, so a second signal still exits at
      // once with 130/143 (not by the default action) until it has.
      if (controller.signal.aborted) return;
      for (const [name, h] of handlers) process.off(name, h);
    },
  };
}
