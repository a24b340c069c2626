/**
 * WASI preview1 `filestat` (64 bytes: dev, ino, filetype, nlink, size, atim, mtim, ctim) of workspace entries and
 * descriptors. `dev` is always 0 (one file system); `ino` is {@link inodeOf}; a file open in this instance reports
 * its in-memory size; times come from {@link OpenFiles.times}.
 * @module
 */
import type { WorkspaceView } from "../workspace/workspace.ts";
import type { WasiContext } from "./context.ts";
import { FileType } from "./errno.ts";
import { inodeOf } from "./fd-table.ts";
import type { FdEntry } from "./fd-table.ts";
import { FILE_TIME_NS } from "./open-files.ts";
import type { Times } from "./open-files.ts";

/** The fields of a filestat. */
export type Stat = { type: number; ino: bigint; nlink: number; size: number; times: Times };

const TYPES = { file: FileType.REGULAR_FILE, dir: FileType.DIRECTORY, symlink: FileType.SYMBOLIC_LINK } as const;

/**
 * The filestat of a resolved workspace path (a link at the end is described, not followed).
 * @param ctx the instance
 * @param fs the workspace view
 * @param path a resolved path
 * @returns the stat
 * @throws ReachError from `lstat` (access, missing entry)
 * @example writeFilestat(ctx, out, statPath(ctx, fs, "data/a.txt"))
 */
export function statPath(ctx: WasiContext, fs: WorkspaceView, path: string): Stat {
  const st = fs.lstat(path);
  const open = st.ino === null ? undefined : ctx.files.get(st.ino);
  return { type: TYPES[st.type], ino: inodeOf(path, st.ino), nlink: st.nlink, size: open?.size ?? st.size, times: ctx.files.times(path, st.ino) };
}

/**
 * The filestat of a descriptor.
 * @param ctx the instance
 * @param e the descriptor's entry
 * @returns the stat
 * @example statFd(ctx, ctx.fds.get(3)).type // FileType.DIRECTORY
 */
export function statFd(ctx: WasiContext, e: FdEntry): Stat {
  if (e.kind === "dir") return { type: FileType.DIRECTORY, ino: inodeOf(e.path, null), nlink: 1, size: 0, times: ctx.files.times(e.path, null) };
  if (e.kind !== "file") {
    return { type: FileType.CHARACTER_DEVICE, ino: 0n, nlink: 1, size: 0, times: { atim: FILE_TIME_NS, mtim: FILE_TIME_NS, ctim: FILE_TIME_NS } };
  }
  const f = e.file;
  const nlink = ctx.fs?.nodeLinks(f.ino) ?? 1; // the descriptor is the capability: no path is looked up again
  return { type: FileType.REGULAR_FILE, ino: inodeOf(f.path, f.ino), nlink, size: f.size, times: ctx.files.times(f.path, f.ino) };
}

/**
 * Write a filestat into guest memory.
 * @param ctx the instance
 * @param ptr the guest address (8-aligned, 64 bytes)
 * @param st the stat
 * @returns nothing
 * @throws WasiErrno `EFAULT` for a bad address
 * @example writeFilestat(ctx, 4000, statFd(ctx, ctx.fds.get(1)))
 */
export function writeFilestat(ctx: WasiContext, ptr: number, st: Stat): void {
  ctx.mem.check(ptr, 64, 8);
  ctx.mem.bytes(ptr, 64).fill(0);
  ctx.mem.setU64(ptr + 8, st.ino);
  ctx.mem.setU8(ptr + 16, st.type);
  ctx.mem.setU64(ptr + 24, BigInt(st.nlink));
  ctx.mem.setU64(ptr + 32, BigInt(st.size));
  ctx.mem.setU64(ptr + 40, st.times.atim);
  ctx.mem.setU64(ptr + 48, st.times.mtim);
  ctx.mem.setU64(ptr + 56, st.times.ctim);
}
