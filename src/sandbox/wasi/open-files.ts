/**
 * The open-file table of one WASI instance: one {@link OpenFile} per workspace file node with open descriptors,
 * shared by all of them (see `fd-table.ts`), and the timestamps the guest set.
 *
 * Timestamps (WASI `filestat.atim/mtim/ctim`): the workspace keeps none (they are not part of a snapshot, a digest
 * or a capsule), so every entry reports {@link FILE_TIME_NS} until the guest sets a time with
 * `fd_filestat_set_times` / `path_filestat_set_times`; a `*_NOW` flag takes the virtual clock. What the guest set
 * lasts for this instance only, keyed by file node (so hard links agree) or by path for directories and links.
 * Writing a file does not change its times: that would need a clock read per write, i.e. a host call on the tape.
 * @module
 */
import type { WorkspaceView } from "../workspace/workspace.ts";
import { Errno, FstFlags, WasiErrno } from "./errno.ts";
import { flush } from "./fd-table.ts";
import type { OpenFile } from "./fd-table.ts";

/** The time every entry reports until the guest sets one: 1970-01-01T00:00:01Z, in ns (never 0: guests subtract). */
export const FILE_TIME_NS = 1_000_000_000n;

/** Most entries whose times one instance remembers (`ENOSPC` beyond): a guest cannot grow the table without bound. */
export const MAX_TIMED_ENTRIES = 65_536;

/** Timestamps of one entry, in ns. */
export type Times = { atim: bigint; mtim: bigint; ctim: bigint };

/** The open files and the guest-set timestamps of one instance. */
export class OpenFiles {
  readonly #byNode = new Map<number, OpenFile>();
  readonly #times = new Map<string, Times>();

  /**
   * The open file of a node, opening it (with `load()` as its content) when no descriptor has it yet.
   * @param ino the workspace file node
   * @param path the name it was opened under
   * @param load reads the content (called only for a node not yet open)
   * @returns the shared open file, its reference count raised
   * @throws whatever `load` throws
   * @example files.open(3, "data/a.txt", () => ws.read("data/a.txt"))
   */
  open(ino: number, path: string, load: () => Uint8Array): OpenFile {
    let f = this.#byNode.get(ino);
    if (f === undefined) {
      const data = load();
      f = { ino, path, data, size: data.length, dirty: false, refs: 0 };
      this.#byNode.set(ino, f);
    }
    f.path = path;
    f.refs++;
    return f;
  }

  /**
   * The open file of a node, if a descriptor has it.
   * @param ino the node
   * @returns the open file or undefined
   * @example files.get(ino)?.size
   */
  get(ino: number): OpenFile | undefined {
    return this.#byNode.get(ino);
  }

  /**
   * Drop one descriptor's reference, writing back first (the reference goes even when writing back fails).
   * @param fs the workspace view
   * @param f the open file
   * @returns nothing
   * @throws ReachError from writing back
   * @example files.release(ws, entry.file)
   */
  release(fs: WorkspaceView | null, f: OpenFile): void {
    try {
      if (fs !== null) flush(fs, f);
    } finally {
      if (--f.refs <= 0) this.#byNode.delete(f.ino);
    }
  }

  /**
   * Keep the names of open files right after a rename of `from` (and everything below it) to `to`.
   * @param from the old path
   * @param to the new path
   * @returns nothing
   * @example files.renamed("temp/a", "temp/b")
   */
  renamed(from: string, to: string): void {
    for (const f of this.#byNode.values()) f.path = movedPath(f.path, from, to);
    for (const key of [...this.#times.keys()]) {
      if (!key.startsWith("p:")) continue;
      const moved = "p:" + movedPath(key.slice(2), from, to);
      if (moved !== key) {
        this.#times.set(moved, this.#times.get(key)!);
        this.#times.delete(key);
      }
    }
  }

  /**
   * The timestamps of an entry.
   * @param path its resolved path
   * @param ino its file node, or null for a directory or link
   * @returns the times (FILE_TIME_NS for each until set)
   * @example files.times("data", null).mtim
   */
  times(path: string, ino: number | null): Times {
    return this.#times.get(timeKey(path, ino)) ?? { atim: FILE_TIME_NS, mtim: FILE_TIME_NS, ctim: FILE_TIME_NS };
  }

  /**
   * Set timestamps as `*_filestat_set_times` asks (the flags are checked by {@link checkFstFlags} first).
   * @param path the resolved path
   * @param ino the file node or null
   * @param atim the access time asked for (ns)
   * @param mtim the modification time asked for (ns)
   * @param flags the fstflags
   * @param now the virtual time in ns, read only when a `*_NOW` flag asks for it
   * @returns nothing
   * @throws WasiErrno `ENOSPC` when {@link MAX_TIMED_ENTRIES} entries have times already
   * @example files.setTimes("temp/a", 7, 0n, 5n, FstFlags.MTIM, () => 0n)
   */
  setTimes(path: string, ino: number | null, atim: bigint, mtim: bigint, flags: number, now: () => bigint): void {
    const key = timeKey(path, ino);
    if (!this.#times.has(key) && this.#times.size >= MAX_TIMED_ENTRIES) throw new WasiErrno(Errno.NOSPC, "too many timed entries");
    const t = { ...this.times(path, ino) };
    const clock = (flags & (FstFlags.ATIM_NOW | FstFlags.MTIM_NOW)) !== 0 ? now() : 0n;
    if ((flags & FstFlags.ATIM) !== 0) t.atim = atim;
    if ((flags & FstFlags.ATIM_NOW) !== 0) t.atim = clock;
    if ((flags & FstFlags.MTIM) !== 0) t.mtim = mtim;
    if ((flags & FstFlags.MTIM_NOW) !== 0) t.mtim = clock;
    if (flags !== 0) t.ctim = t.mtim > t.atim ? t.mtim : t.atim;
    this.#times.set(key, t);
  }
}

/**
 * Check `fstflags`: known bits only, and never a time together with its `_NOW` (WASI preview1: `EINVAL`).
 * @param flags the fstflags argument
 * @returns nothing
 * @throws WasiErrno `EINVAL`
 * @example checkFstFlags(FstFlags.MTIM)
 */
export function checkFstFlags(flags: number): void {
  const both = (a: number, b: number): boolean => (flags & a) !== 0 && (flags & b) !== 0;
  if ((flags & ~0xf) !== 0 || both(FstFlags.ATIM, FstFlags.ATIM_NOW) || both(FstFlags.MTIM, FstFlags.MTIM_NOW)) {
    throw new WasiErrno(Errno.INVAL, "bad fstflags");
  }
}

function timeKey(path: string, ino: number | null): string {
  return ino === null ? `p:${path}` : `f:${ino}`;
}

function movedPath(path: string, from: string, to: string): string {
  if (path === from) return to;
  return path.startsWith(from + "/") ? to + path.slice(from.length) : path;
}
