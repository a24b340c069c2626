/**
 * Writing results to the host without ever leaving a half-written file: every file is written to a temporary name
 * in the same directory and renamed into place; a directory of results is built under a temporary name and renamed
 * as a whole. No write follows a symbolic link or leaves the folder it was given, and private data gets exact modes
 * (the primitives in `_safe-fs.ts`; docs/security.md "Files and paths"). Runs on Node and on Deno (through `node:`
 * compatibility).
 * @module
 */
import { renameSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { ReachError } from "../protocol/mod.ts";
import { createFile, dirsWithin, givenDir, isPrivateMode, lstatOrNull, newDir, removeTree, safeName, safeSegments, segmentsWithin } from "./_safe-fs.ts";
import { concatBytes } from "../canonical/mod.ts";

export { lstatOrNull, privateDir, safeName, safeSegments } from "./_safe-fs.ts";

let counter = 0;
/** Temporary files and folders being written now: removed before the process exits on a second signal. */
const inFlight = new Set<string>();
function tempName(path: string): string {
  counter++;
  return `${path}.tmp-${process.pid}-${counter}`;
}

/** Remove every temporary file or folder still being written (synchronously: the process is about to exit). */
function removeInFlight(): void {
  for (const path of inFlight) {
    try {
      removeTree(path);
    } catch {
      // nothing more can be done on the way out
    }
  }
}

/** Where to write and how: see {@link writeFileAtomic} and {@link writeDirAtomic}. */
export type WriteOptions = {
  /**
   * The folder the caller was given (`--out DIR`): the target must be inside it, and every name between is checked
   * ({@link safeName}: no separator, control character, `.` or `..`), must be a real directory, never a link, and
   * for private data one owned by this user (narrowed to 0700 when open to others). Without it, the target's own
   * folder is the one given (a path the user named: links in it are followed, missing folders created).
   */
  within?: string;
};

/** Folder mode that goes with a file mode: 0700 for private files, else 0755. */
function folderMode(mode: number): number {
  return isPrivateMode(mode) ? 0o700 : 0o755;
}

/** Create the folders up to `path`'s parent under the rules of {@link WriteOptions}; returns the parent and the name. */
function placeIn(path: string, mode: number, within: string | undefined): { parent: string; name: string } {
  if (within === undefined) {
    const parent = dirname(resolve(path));
    givenDir(parent, folderMode(mode));
    return { parent, name: basename(path) };
  }
  const segments = segmentsWithin(within, path).map((s) => safeName(s, `the name ${JSON.stringify(path)}: segment`));
  const name = segments.pop()!;
  givenDir(within, folderMode(mode));
  return { parent: dirsWithin(resolve(within), segments, folderMode(mode)), name };
}

/** Refuse to replace a link (or a folder, or a special file) at `target`. */
function replaceableFile(target: string): void {
  const st = lstatOrNull(target);
  if (st === null || st.isFile()) return;
  const what = st.isSymbolicLink() ? "is a symbolic link; reach-wasm never writes through a link, and leaves it and its target as they are"
    : st.isDirectory() ? "is a directory" : "is not a regular file";
  throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(target)} ${what} — remove it or choose another path`);
}

function cannotWrite(path: string, err: unknown): ReachError {
  if (err instanceof ReachError) return err;
  return new ReachError("PROTO_INVALID_ARGUMENT", `cannot write ${JSON.stringify(path)}: ${(err as Error).message}`, { cause: err });
}

/** A write done under a temporary name, not yet in place: `commit` renames it there, `discard` drops it. */
export type StagedWrite = { commit(): void; discard(): void };

/** Remove a temporary file or folder of ours and forget it. */
function dropTemp(tmp: string): void {
  removeTree(tmp);
  inFlight.delete(tmp);
}

/**
 * Write a file under a new temporary name beside `path` (opened `O_EXCL|O_NOFOLLOW`), to be put in place by `commit`
 * (a rename) or dropped by `discard`: for results a caller may still have to withdraw. Missing parent folders are
 * created (0700 when `mode` is private, else 0755). Synchronous on purpose: while a file is written, no signal
 * handler runs in between (they run on the event loop), so a second signal finds every file either not started or
 * renamed into place, never half-written.
 * @param path the destination; refused when it is a symbolic link or a directory (checked again at `commit`)
 * @param bytes the content
 * @param mode the exact file mode whatever the umask (default 0644; keys, stores and capsules use 0600)
 * @param options `within`: the folder the caller was given (see {@link WriteOptions})
 * @returns the staged write
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file cannot be written, or the path is a link, leaves
 *   `within` or names something unsafe (nothing is left behind)
 * @example const staged = stageFile(".reach/example.json", new TextEncoder().encode("{}\n")); staged.commit();
 */
export function stageFile(path: string, bytes: Uint8Array, mode = 0o644, options: WriteOptions = {}): StagedWrite {
  let tmp: string | null = null;
  let target: string;
  try {
    const { parent, name } = placeIn(path, mode, options.within);
    target = join(parent, name);
    replaceableFile(target);
    const candidate = tempName(target);
    createFile(candidate, bytes, mode);
    inFlight.add((tmp = candidate));
  } catch (err) {
    if (tmp !== null) dropTemp(tmp);
    throw cannotWrite(path, err);
  }
  const staged = tmp;
  return {
    commit: () => {
      try {
        replaceableFile(target); // a link planted since the file was staged is refused too
        renameSync(staged, target);
        inFlight.delete(staged);
      } catch (err) {
        dropTemp(staged);
        throw cannotWrite(path, err);
      }
    },
    discard: () => dropTemp(staged),
  };
}

/**
 * Write a file atomically: {@link stageFile}, then put in place at once.
 * @param path the destination; refused when it is a symbolic link or a directory
 * @param bytes the content
 * @param mode the exact file mode whatever the umask (default 0644; keys, stores and capsules use 0600)
 * @param options `within`: the folder the caller was given (see {@link WriteOptions})
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file cannot be written, or the path is a link, leaves
 *   `within` or names something unsafe (nothing is left behind)
 * @example
 * ```ts
 * await writeFileAtomic(".reach/example.json", new TextEncoder().encode("{}\n"));
 * ```
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array, mode = 0o644, options: WriteOptions = {}): Promise<void> {
  stageFile(path, bytes, mode, options).commit();
}

/** The directory at `target` as it may be replaced: null when absent; a link or another kind of file is refused. */
function replaceableDir(target: string): ReturnType<typeof lstatOrNull> {
  const existing = lstatOrNull(target);
  if (existing?.isSymbolicLink() === true) throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(target)} is a symbolic link; reach-wasm never writes or removes through a link, and leaves it and its target as they are — remove the link or choose another --out`);
  if (existing !== null && !existing.isDirectory()) throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(target)} exists and is not a directory; move it away or choose another --out`);
  return existing;
}

/** Rename the complete folder `tmp` to `target`, replacing a real directory there (removed without following links). */
function putDirInPlace(tmp: string, target: string): void {
  if (replaceableDir(target) === null) {
    renameSync(tmp, target);
    inFlight.delete(tmp);
    return;
  }
  const old = tempName(`${target}.old`);
  renameSync(target, old);
  inFlight.add(old);
  renameSync(tmp, target);
  inFlight.delete(tmp);
  dropTemp(old);
}

/**
 * Build a directory of files under a new temporary name beside `dir`, to be put in place by `commit` (an existing
 * `dir` is replaced only then, and only when it is a real directory: a link there is refused, never followed; the old
 * tree is removed without descending through any link) or dropped by `discard`.
 * @param dir the destination directory
 * @param files relative `/`-separated paths (each segment checked with {@link safeName}) and their bytes
 * @param options `within` (see {@link WriteOptions}); `mode` of the files (default 0644; run files 0600: folders
 *   follow, 0755 or 0700); `executable`: paths that also get the execute bits
 * @returns the staged write
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written, or a path is a link, leaves `within` or is
 *   unsafe (nothing is left behind)
 * @example const staged = stageDir(".reach/example", new Map([["a.txt", new TextEncoder().encode("a")]])); staged.commit();
 */
export function stageDir(dir: string, files: ReadonlyMap<string, Uint8Array>, options: WriteOptions & { mode?: number; executable?: ReadonlySet<string> } = {}): StagedWrite {
  const mode = options.mode ?? 0o644;
  let tmp: string | null = null;
  let target: string;
  try {
    const { parent, name } = placeIn(dir, mode, options.within ?? dirname(resolve(dir)));
    target = join(parent, name);
    replaceableDir(target);
    const candidate = tempName(target);
    newDir(candidate, folderMode(mode)); // fails when the name exists, a link included
    inFlight.add((tmp = candidate));
    fillDir(tmp, files, mode, options.executable);
  } catch (err) {
    if (tmp !== null) dropTemp(tmp);
    throw cannotWrite(dir, err);
  }
  const staged = tmp;
  return {
    commit: () => {
      try {
        putDirInPlace(staged, target);
      } catch (err) {
        if (inFlight.has(staged)) dropTemp(staged);
        throw cannotWrite(dir, err);
      }
    },
    discard: () => dropTemp(staged),
  };
}

/**
 * Write a directory of files atomically: {@link stageDir}, then put in place at once.
 * @param dir the destination directory
 * @param files relative `/`-separated paths (each segment checked with {@link safeName}) and their bytes
 * @param options `within` (see {@link WriteOptions}); `mode` of the files (default 0644; run files 0600: folders
 *   follow, 0755 or 0700); `executable`: paths that also get the execute bits
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written, or a path is a link, leaves `within` or is
 *   unsafe (nothing is left behind)
 * @example
 * ```ts
 * await writeDirAtomic(".reach/example", new Map([["a.txt", new TextEncoder().encode("a")]]));
 * ```
 */
export async function writeDirAtomic(dir: string, files: ReadonlyMap<string, Uint8Array>, options: WriteOptions & { mode?: number; executable?: ReadonlySet<string> } = {}): Promise<void> {
  stageDir(dir, files, options).commit();
}

/** Write `files` into the new folder `root` (ours, 0700 or 0755): folders with exact modes, files created new. */
function fillDir(root: string, files: ReadonlyMap<string, Uint8Array>, mode: number, executable?: ReadonlySet<string>): void {
  for (const [rel, bytes] of files) {
    const segments = safeSegments(rel, "the file");
    const name = segments.pop()!;
    const parent = dirsWithin(root, segments, folderMode(mode));
    createFile(join(parent, name), bytes, executable?.has(rel) === true ? mode | ((mode & 0o444) >> 2) : mode);
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
  return concatBytes(chunks, total);
}

/** The handlers of the last run whose results were taken (`settle`): kept until the next run's are installed. */
let lingering: (() => void) | null = null;

/**
 * Turn SIGINT and SIGTERM into an abort signal for the duration of a run. A second signal exits at once (130/143),
 * after removing any temporary file still being written, so no partial file is left.
 * @returns the signal; `dispose` removes the handlers (kept after a first signal: the process is ending); `settle`
 *   keeps them once the run's results are final, so that a signal while the process winds down (there is nothing
 *   left to stop) is reported through `late` instead of ending the process by the default action, whose exit status
 *   would contradict the results written (a second one still exits at once)
 */
export function abortOnSignals(): { signal: AbortSignal; dispose: () => void; settle: (late: (name: string) => void) => void } {
  lingering?.();
  lingering = null;
  const controller = new AbortController();
  const handlers: [NodeJS.Signals, () => void][] = [];
  let late: ((name: string) => void) | null = null;
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    const h = (): void => {
      if (controller.signal.aborted) {
        removeInFlight();
        process.exit(name === "SIGINT" ? 130 : 143);
      }
      controller.abort(name);
      late?.(name);
    };
    process.on(name, h);
    handlers.push([name, h]);
  }
  const remove = (): void => {
    for (const [name, h] of handlers) process.off(name, h);
  };
  return {
    signal: controller.signal,
    dispose: () => {
      // Once a signal arrived the process is on its way out: the handlers stay, so a second signal still exits at
      // once with 130/143 (not by the default action) until it has.
      if (controller.signal.aborted) return;
      remove();
    },
    settle: (note) => {
      if (controller.signal.aborted) return; // the run saw its signal: a second one exits at once
      late = note;
      lingering = remove; // signal handlers do not keep the process alive; the next run's replace them
    },
  };
}
