/**
 * Writing results to the host without ever leaving a half-written file: every file is written to a temporary name
 * in the same directory and renamed into place; a directory of results is built under a temporary name and renamed
 * as a whole. Runs on Node and on Deno (through `node:` compatibility).
 * @module
 */
import { rmSync } from "node:fs";
import { chmod, mkdir, open, rename, rm, stat } from "node:fs/promises";
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

async function writeFileDurably(path: string, bytes: Uint8Array, mode: number): Promise<void> {
  const fh = await open(path, "wx", mode);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await chmod(path, mode); // umask may have narrowed or widened nothing; make the mode exact
}

/**
 * Write a file atomically (temporary name, then rename). Parent directories are created.
 * @param path the destination
 * @param bytes the content
 * @param mode the file mode (default 0644; key files use 0600)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file cannot be written (nothing is left behind)
 * @example await writeFileAtomic(".reach/run.json", bytes)
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array, mode = 0o644): Promise<void> {
  const tmp = tempName(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFileDurably(tmp, bytes, mode);
    await rename(tmp, path);
    inFlight.delete(tmp);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
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
 */
export async function writeDirAtomic(dir: string, files: ReadonlyMap<string, Uint8Array>): Promise<void> {
  const tmp = tempName(dir);
  try {
    await mkdir(tmp, { recursive: true });
    for (const [rel, bytes] of files) {
      const target = join(tmp, ...rel.split("/"));
      await mkdir(dirname(target), { recursive: true });
      await writeFileDurably(target, bytes, 0o644);
    }
    const exists = await stat(dir).then(() => true, () => false);
    if (exists) {
      const old = tempName(`${dir}.old`);
      await rename(dir, old);
      await rename(tmp, dir);
      inFlight.delete(tmp);
      await rm(old, { recursive: true, force: true });
      inFlight.delete(old);
    } else {
      await rename(tmp, dir);
      inFlight.delete(tmp);
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true }).catch(() => {});
    inFlight.delete(tmp);
    throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot write ${JSON.stringify(dir)}: ${(err as Error).message}`, { cause: err });
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
 * @returns the signal and a function that removes the handlers
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
      for (const [name, h] of handlers) process.off(name, h);
    },
  };
}
