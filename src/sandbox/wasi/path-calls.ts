/**
 * WASI preview1 path calls (`path_open`, `path_filestat_*`, `path_create_directory`, `path_remove_directory`,
 * `path_unlink_file`) and `fd_readdir`, over the virtual workspace (WASI preview1 `wasi_snapshot_preview1.witx`,
 * section "path"). Every path is resolved beneath its directory descriptor (`_guest-path.ts`); links are followed
 * there as `lookupflags.symlink_follow` says for the last segment and always before it. The link calls
 * (`path_symlink`, `path_link`, `path_readlink`, `path_rename`) are in `link-calls.ts`.
 * @module
 */
import { parentPath } from "../workspace/path.ts";
import type { ResolvedPath, WorkspaceView } from "../workspace/workspace.ts";
import { DIR_RIGHTS, Errno, FILE_RIGHTS, FileType, LookupFlags, OFlags, Rights, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import { flush, inodeOf } from "./fd-table.ts";
import type { DirEntry } from "./fd-table.ts";
import { statPath, writeFilestat } from "./filestat.ts";
import { pathArgs, resolveGuest } from "./_guest-path.ts";
import { checkFstFlags } from "./open-files.ts";
import { nanos } from "../../determinism/mod.ts";
import { u32 } from "./memory.ts";

type Fn = (...args: never[]) => number | void;

/** Rights that mean "this descriptor may change the file". */
const WRITE_RIGHTS = Rights.FD_WRITE | Rights.FD_FILESTAT_SET_SIZE | Rights.FD_ALLOCATE;
const enc = new TextEncoder();

/** `path_open` of a directory: a new directory descriptor beneath the same preopen. */
function openDir(ctx: WasiContext, fs: WorkspaceView, d: DirEntry, path: string, base: bigint, inheriting: bigint): number {
  fs.list(path); // read access check
  const entry: DirEntry = { kind: "dir", path, preopen: null, base: d.base, rights: base & DIR_RIGHTS & d.inheriting, inheriting: inheriting & d.inheriting };
  return ctx.fds.add(entry);
}

/** `path_open` of a regular file (created first when missing and asked for). */
function openFile(ctx: WasiContext, fs: WorkspaceView, d: DirEntry, path: string, exists: boolean, oflags: number, base: bigint, fdflags: number): number {
  const trunc = (oflags & OFlags.TRUNC) !== 0;
  if (!exists) fs.write(path, new Uint8Array(0)); // creates the file; refused on a read-only root (PERMISSION_DENIED)
  else if ((base & WRITE_RIGHTS) !== 0n || trunc) fs.checkAccess(path, "write"); // a read-only root refuses at open
  const ino = fs.nodeOf(path)!;
  const file = ctx.files.open(ino, path, () => ((trunc && (base & Rights.FD_READ) === 0n) || !exists ? new Uint8Array(0) : fs.read(path)));
  if (trunc && file.size > 0) {
    file.size = 0;
    file.dirty = true;
    flush(fs, file); // written back at once, as O_TRUNC truncates at open
  }
  try {
    return ctx.fds.add({ kind: "file", file, pos: 0, fdflags, rights: base & FILE_RIGHTS & d.inheriting });
  } catch (err) {
    ctx.files.release(null, file);
    throw err;
  }
}

/** `path_open`'s flags and rights, checked before anything is resolved. */
function checkOpenArgs(
  d: DirEntry,
  dirflags: number,
  oflags: number,
  base: bigint,
  inheriting: bigint,
  fdflags: number,
): void {
  if (typeof base !== "bigint" || typeof inheriting !== "bigint") throw new WasiErrno(Errno.INVAL, "rights");
  if ((oflags & ~0xf) !== 0 || (fdflags & ~0x1f) !== 0 || (dirflags & ~1) !== 0) throw new WasiErrno(Errno.INVAL, "unknown flag");
  if ((oflags & OFlags.CREAT) !== 0 && (d.rights & Rights.PATH_CREATE_FILE) === 0n) throw new WasiErrno(Errno.NOTCAPABLE, "no path_create_file right");
  if ((oflags & OFlags.TRUNC) !== 0 && (d.rights & Rights.PATH_FILESTAT_SET_SIZE) === 0n) throw new WasiErrno(Errno.NOTCAPABLE, "no path_filestat_set_size right");
}

/** `path_open` of a resolved path: a directory or a file descriptor, or the errno of why neither. */
function openResolved(
  ctx: WasiContext,
  fs: WorkspaceView,
  d: DirEntry,
  r: ResolvedPath,
  oflags: number,
  base: bigint,
  inheriting: bigint,
  fdflags: number,
): number {
  const create = (oflags & OFlags.CREAT) !== 0;
  if (create && (oflags & OFlags.EXCL) !== 0 && r.kind !== null) throw new WasiErrno(Errno.EXIST, "exists");
  if (r.kind === "symlink") throw new WasiErrno(Errno.LOOP, "a link at the end, not followed (O_NOFOLLOW)");
  const wantsWrite = (base & WRITE_RIGHTS) !== 0n || (oflags & OFlags.TRUNC) !== 0;
  if (r.kind === "dir" || (oflags & OFlags.DIRECTORY) !== 0 || r.slash) {
    if (r.kind === null) throw new WasiErrno(create && (oflags & OFlags.DIRECTORY) === 0 ? Errno.ISDIR : Errno.NOENT, "no such directory");
    if (r.kind !== "dir") throw new WasiErrno(Errno.NOTDIR, "not a directory");
    if (wantsWrite) throw new WasiErrno(Errno.ISDIR, "a directory cannot be opened for writing");
    return openDir(ctx, fs, d, r.path, base, inheriting);
  }
  if (r.kind === null && (!create || r.missing > 1)) throw new WasiErrno(Errno.NOENT, "no such file");
  return openFile(ctx, fs, d, r.path, r.kind !== null, oflags, base, fdflags);
}

/** The entries `fd_readdir` lists for `d`: `.`, `..`, then the directory's own. */
function direntsOf(fs: WorkspaceView, d: DirEntry): [string, number, bigint][] {
  return [
    [".", FileType.DIRECTORY, inodeOf(d.path, null)],
    ["..", FileType.DIRECTORY, inodeOf(parentPath(d.path), null)],
    ...fs.list(d.path).map((e): [string, number, bigint] => {
      const path = d.path === "" ? e.name : `${d.path}/${e.name}`;
      const type = e.type === "dir" ? FileType.DIRECTORY : e.type === "file" ? FileType.REGULAR_FILE : FileType.SYMBOLIC_LINK;
      return [e.name, type, inodeOf(path, e.type === "file" ? fs.nodeOf(path) : null)];
    }),
  ];
}

/**
 * The `path_*` host functions that are not about links, and `fd_readdir`.
 * @param ctx the instance state
 * @returns name → implementation (wrapped by the caller)
 */
export function pathCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  const { dirOf, fsOf, text } = pathArgs(ctx);

  return {
    path_open: (dirfd: number, dirflags: number, ptr: number, len: number, oflags: number, base: bigint, inheriting: bigint, fdflags: number, out: number) => {
      m.check(u32(out), 4, 4);
      const d = dirOf(dirfd, Rights.PATH_OPEN);
      const fs = fsOf();
      checkOpenArgs(d, dirflags, oflags, base, inheriting, fdflags);
      ctx.fds.reserve(); // validate before change: never create or truncate and then fail for want of a descriptor
      const r = resolveGuest(fs, d, text(ptr, len), "fs.open", (dirflags & LookupFlags.SYMLINK_FOLLOW) !== 0);
      m.setU32(u32(out), openResolved(ctx, fs, d, r, oflags, base, inheriting, fdflags));
    },

    path_filestat_get: (dirfd: number, flags: number, ptr: number, len: number, out: number) => {
      m.check(u32(out), 64, 8);
      const d = dirOf(dirfd, Rights.PATH_FILESTAT_GET);
      const fs = fsOf();
      const r = resolveGuest(fs, d, text(ptr, len), "fs.stat", (flags & LookupFlags.SYMLINK_FOLLOW) !== 0);
      if (r.kind === null) throw new WasiErrno(Errno.NOENT, "no such file");
      writeFilestat(ctx, u32(out), statPath(ctx, fs, r.path));
    },

    path_filestat_set_times: (dirfd: number, flags: number, ptr: number, len: number, atim: bigint, mtim: bigint, fst: number) => {
      const d = dirOf(dirfd, Rights.PATH_FILESTAT_SET_TIMES);
      const fs = fsOf();
      if (typeof atim !== "bigint" || typeof mtim !== "bigint") throw new WasiErrno(Errno.INVAL, "timestamps");
      checkFstFlags(fst);
      const follow = (flags & LookupFlags.SYMLINK_FOLLOW) !== 0;
      const r = resolveGuest(fs, d, text(ptr, len), "fs.touch", follow);
      if (r.kind === null) throw new WasiErrno(Errno.NOENT, "no such file");
      fs.checkAccess(r.path, "write", { follow: false });
      const ino = fs.lstat(r.path).ino;
      ctx.files.setTimes(r.path, ino, BigInt.asUintN(64, atim), BigInt.asUintN(64, mtim), fst, () => nanos(ctx.sources.readClockMs()));
    },

    path_create_directory: (dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_CREATE_DIRECTORY);
      const fs = fsOf();
      const r = resolveGuest(fs, d, text(ptr, len), "fs.mkdir", false, false);
      if (r.kind !== null) throw new WasiErrno(Errno.EXIST, "exists");
      if (r.missing > 1) throw new WasiErrno(Errno.NOENT, "the parent directory does not exist");
      fs.mkdir(r.path);
    },

    path_remove_directory: (dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_REMOVE_DIRECTORY);
      const fs = fsOf();
      const r = resolveGuest(fs, d, text(ptr, len), "fs.remove", false, false);
      if (r.kind === null) throw new WasiErrno(Errno.NOENT, "no such directory");
      if (r.kind !== "dir") throw new WasiErrno(Errno.NOTDIR, "not a directory");
      if (r.path === d.path) throw new WasiErrno(Errno.INVAL, "cannot remove the descriptor's own directory");
      for (const [, e] of ctx.fds.entries()) {
        if (e.kind === "dir" && e.preopen !== null && e.path === r.path) throw new WasiErrno(Errno.ACCES, "a preopen");
      }
      fs.remove(r.path);
    },

    path_unlink_file: (dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_UNLINK_FILE);
      const fs = fsOf();
      const r = resolveGuest(fs, d, text(ptr, len), "fs.remove", false, false);
      if (r.kind === null) throw new WasiErrno(Errno.NOENT, "no such file");
      if (r.kind === "dir") throw new WasiErrno(Errno.ISDIR, "is a directory");
      if (r.slash) throw new WasiErrno(Errno.NOTDIR, "trailing slash on a file");
      fs.remove(r.path);
    },

    fd_readdir: (fd: number, buf: number, bufLen: number, cookie: bigint, out: number) => {
      m.check(u32(out), 4, 4);
      const d = dirOf(fd, Rights.FD_READDIR);
      const fs = fsOf();
      const target = m.bytes(u32(buf), u32(bufLen));
      if (typeof cookie !== "bigint") throw new WasiErrno(Errno.INVAL, "cookie");
      m.setU32(u32(out), writeDirents(target, direntsOf(fs, d), cookie));
    },
  };
}

/** Write dirents (24-byte header + name) from `cookie` on, the last one cut at the buffer's end; returns bytes used. */
function writeDirents(target: Uint8Array, list: [string, number, bigint][], cookie: bigint): number {
  const start = cookie > BigInt(list.length) ? list.length : Number(cookie);
  let at = 0;
  for (let i = start; i < list.length && at < target.length; i++) {
    const [name, type, ino] = list[i]!;
    const nameBytes = enc.encode(name);
    const rec = new Uint8Array(24 + nameBytes.length);
    const dv = new DataView(rec.buffer);
    dv.setBigUint64(0, BigInt(i + 1), true); // d_next: the cookie of the next entry
    dv.setBigUint64(8, ino, true);
    dv.setUint32(16, nameBytes.length, true);
    dv.setUint8(20, type);
    rec.set(nameBytes, 24);
    const take = Math.min(rec.length, target.length - at);
    target.set(rec.subarray(0, take), at);
    at += take;
  }
  return at;
}
