/**
 * WASI preview1 path calls (`path_*`) and `fd_readdir`, over the virtual workspace (WASI preview1
 * `wasi_snapshot_preview1.witx`, section "path"). A guest path is always relative to a directory descriptor;
 * absolute paths, `..`, NUL, backslashes and links are refused by `normalizeWorkspacePath` and the workspace with a
 * `RESOURCE_ACCESS` policy violation, which the guest sees as `ENOTCAPABLE` and the runner reports (seed 003 §4.3).
 * Symbolic links are never created, read or followed: `path_symlink` and `path_link` are `EPERM`, `path_readlink`
 * `ENOTSUP`.
 * @module
 */
import { parentPath, normalizeWorkspacePath, pathViolation } from "../workspace/path.ts";
import { WorkspaceError } from "../workspace/workspace.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { DIR_RIGHTS, Errno, FILE_RIGHTS, FdFlags, FileType, OFlags, Rights, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import { inodeOf } from "./fd-table.ts";
import type { DirEntry } from "./fd-table.ts";
import { writeFilestat } from "./fd-calls.ts";
import { u32 } from "./memory.ts";

type Fn = (...args: never[]) => number | void;
type Kind = "file" | "dir" | "symlink" | null;

/** Rights that mean "this descriptor may change the file". */
const WRITE_RIGHTS = Rights.FD_WRITE | Rights.FD_FILESTAT_SET_SIZE | Rights.FD_ALLOCATE;
const LOOKUP_SYMLINK_FOLLOW = 1;

/** Kind of an entry without following a link at the end (`lstat`); null when it does not exist. */
function lkind(fs: WorkspaceView, p: string): Kind {
  if (p === "") return "dir";
  const parent = parentPath(p);
  const name = parent === "" ? p : p.slice(parent.length + 1);
  try {
    const hit = fs.list(parent).find((e) => e.name === name);
    return hit === undefined ? null : hit.type;
  } catch (err) {
    if (err instanceof WorkspaceError && err.errno === "ENOENT") return null;
    throw err;
  }
}

/**
 * The `path_*` host functions and `fd_readdir`.
 * @param ctx the instance state
 * @returns name → implementation (wrapped by the caller)
 */
export function pathCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  const dirOf = (fd: number, right: bigint): DirEntry => {
    const d = ctx.fds.get(u32(fd));
    if (d.kind !== "dir") throw new WasiErrno(Errno.NOTDIR, "not a directory descriptor");
    if ((d.rights & right) === 0n) throw new WasiErrno(Errno.NOTCAPABLE, "directory lacks the right");
    return d;
  };
  const fsOf = (): WorkspaceView => {
    if (ctx.fs === null) throw new WasiErrno(Errno.NOTCAPABLE, "no file system");
    return ctx.fs;
  };
  /** Resolve a guest path against a directory descriptor; returns [workspace path, path as given]. */
  const resolve = (d: DirEntry, ptr: number, len: number, op: string): [string, string] => {
    const guest = m.string(u32(ptr), u32(len));
    if (guest.startsWith("/")) throw pathViolation(op, guest, "absolute paths are not allowed");
    const joined = d.path === "" ? guest : guest === "" ? d.path : `${d.path}/${guest}`;
    return [normalizeWorkspacePath(joined, { directory: true, operation: op }), guest];
  };
  const parentMustBeDir = (fs: WorkspaceView, p: string): void => {
    const k = lkind(fs, parentPath(p));
    if (k === null) throw new WasiErrno(Errno.NOENT, "parent missing");
    if (k !== "dir") throw new WasiErrno(Errno.NOTDIR, "parent is not a directory");
  };
  const linkRefused = (op: string, p: string): never => {
    throw pathViolation(op, p, "symbolic links are never followed inside the workspace");
  };

  return {
    path_open: (
      dirfd: number,
      dirflags: number,
      ptr: number,
      len: number,
      oflags: number,
      base: bigint,
      inheriting: bigint,
      fdflags: number,
      out: number,
    ) => {
      m.check(u32(out), 4, 4);
      const d = dirOf(dirfd, Rights.PATH_OPEN);
      const fs = fsOf();
      if (typeof base !== "bigint" || typeof inheriting !== "bigint") throw new WasiErrno(Errno.INVAL, "rights");
      if ((oflags & ~0xf) !== 0 || (fdflags & ~0x1f) !== 0 || (dirflags & ~1) !== 0) {
        throw new WasiErrno(Errno.INVAL, "unknown flag");
      }
      const [p, guest] = resolve(d, ptr, len, "fs.open");
      const k = lkind(fs, p);
      if (k === "symlink") linkRefused("fs.open", p);
      const wantsWrite = (base & WRITE_RIGHTS) !== 0n || (oflags & OFlags.TRUNC) !== 0;
      if ((oflags & OFlags.CREAT) !== 0 && (oflags & OFlags.EXCL) !== 0 && k !== null) {
        throw new WasiErrno(Errno.EXIST, "exists");
      }
      if (k === "dir" || (oflags & OFlags.DIRECTORY) !== 0) {
        if (k === null) throw new WasiErrno(Errno.NOENT, "no such directory");
        if (k !== "dir") throw new WasiErrno(Errno.NOTDIR, "not a directory");
        if (wantsWrite) throw new WasiErrno(Errno.ISDIR, "a directory cannot be opened for writing");
        fs.list(p); // read access check
        const entry: DirEntry = {
          kind: "dir",
          path: p,
          preopen: null,
          rights: base & DIR_RIGHTS & d.inheriting,
          inheriting: inheriting & d.inheriting,
        };
        m.setU32(u32(out), ctx.fds.add(entry));
        return;
      }
      if (guest.endsWith("/")) throw new WasiErrno(k === null ? Errno.NOENT : Errno.NOTDIR, "trailing slash");
      let data: Uint8Array;
      if (k === null) {
        if ((oflags & OFlags.CREAT) === 0) throw new WasiErrno(Errno.NOENT, "no such file");
        parentMustBeDir(fs, p);
        data = new Uint8Array(0);
        fs.write(p, data); // creates the file; refused on a read-only root (PERMISSION_DENIED)
      } else {
        const trunc = (oflags & OFlags.TRUNC) !== 0;
        data = trunc && (base & Rights.FD_READ) === 0n ? new Uint8Array(0) : fs.read(p);
        if (trunc) data = new Uint8Array(0);
        // A write-back probe: a read-only root refuses here, at open, not at the first write (seed 003 §4.2).
        if (wantsWrite) fs.write(p, data);
      }
      const fd = ctx.fds.add({
        kind: "file",
        path: p,
        data,
        size: data.length,
        pos: 0,
        append: (fdflags & FdFlags.APPEND) !== 0,
        dirty: false,
        rights: base & FILE_RIGHTS & d.inheriting,
      });
      m.setU32(u32(out), fd);
    },

    path_filestat_get: (dirfd: number, flags: number, ptr: number, len: number, out: number) => {
      m.check(u32(out), 64, 8);
      const d = dirOf(dirfd, Rights.PATH_FILESTAT_GET);
      const fs = fsOf();
      const [p] = resolve(d, ptr, len, "fs.stat");
      const k = lkind(fs, p);
      if (k === null) throw new WasiErrno(Errno.NOENT, "no such file");
      if (k === "symlink") {
        if ((flags & LOOKUP_SYMLINK_FOLLOW) !== 0) linkRefused("fs.stat", p);
        writeFilestat(ctx, u32(out), FileType.SYMBOLIC_LINK, inodeOf(p), 0);
        return;
      }
      const st = fs.stat(p);
      writeFilestat(ctx, u32(out), k === "dir" ? FileType.DIRECTORY : FileType.REGULAR_FILE, inodeOf(p), st.size);
    },

    path_create_directory: (dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_CREATE_DIRECTORY);
      const fs = fsOf();
      const [p] = resolve(d, ptr, len, "fs.mkdir");
      if (lkind(fs, p) !== null) throw new WasiErrno(Errno.EXIST, "exists");
      parentMustBeDir(fs, p);
      fs.mkdir(p);
    },

    path_remove_directory: (dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_REMOVE_DIRECTORY);
      const fs = fsOf();
      const [p] = resolve(d, ptr, len, "fs.remove");
      const k = lkind(fs, p);
      if (k === null) throw new WasiErrno(Errno.NOENT, "no such directory");
      if (k !== "dir") throw new WasiErrno(Errno.NOTDIR, "not a directory");
      for (const [, e] of ctx.fds.entries()) {
        if (e.kind === "dir" && e.preopen !== null && e.path === p) throw new WasiErrno(Errno.ACCES, "a preopen");
      }
      fs.remove(p);
    },

    path_unlink_file: (dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_UNLINK_FILE);
      const fs = fsOf();
      const [p, guest] = resolve(d, ptr, len, "fs.remove");
      const k = lkind(fs, p);
      if (k === null) throw new WasiErrno(Errno.NOENT, "no such file");
      if (k === "dir") throw new WasiErrno(Errno.ISDIR, "is a directory");
      if (guest.endsWith("/")) throw new WasiErrno(Errno.NOTDIR, "trailing slash on a file");
      fs.remove(p);
    },

    path_rename: (fd: number, oldPtr: number, oldLen: number, newFd: number, newPtr: number, newLen: number) => {
      const from = dirOf(fd, Rights.PATH_RENAME_SOURCE);
      const to = dirOf(newFd, Rights.PATH_RENAME_TARGET);
      const fs = fsOf();
      const [src] = resolve(from, oldPtr, oldLen, "fs.rename");
      const [dst] = resolve(to, newPtr, newLen, "fs.rename");
      const ks = lkind(fs, src);
      if (ks === null) throw new WasiErrno(Errno.NOENT, "no such file");
      if (ks === "symlink") linkRefused("fs.rename", src);
      if (ks === "dir") throw new WasiErrno(Errno.NOTSUP, "renaming directories is not supported");
      const kd = lkind(fs, dst);
      if (kd === "dir") throw new WasiErrno(Errno.ISDIR, "target is a directory");
      if (kd === "symlink") linkRefused("fs.rename", dst);
      if (src === dst) return;
      parentMustBeDir(fs, dst);
      const bytes = fs.read(src);
      const previous = kd === "file" ? fs.read(dst) : null;
      fs.write(dst, bytes); // "renamed into" a read-only root is refused here
      try {
        fs.remove(src);
      } catch (err) {
        if (previous !== null) fs.write(dst, previous);
        else fs.remove(dst);
        throw err;
      }
    },

    path_symlink: () => Errno.PERM,
    path_link: () => Errno.PERM,
    path_readlink: () => Errno.NOTSUP,
    path_filestat_set_times: () => Errno.NOTSUP,

    fd_readdir: (fd: number, buf: number, bufLen: number, cookie: bigint, out: number) => {
      m.check(u32(out), 4, 4);
      const d = dirOf(fd, Rights.FD_READDIR);
      const fs = fsOf();
      const target = m.bytes(u32(buf), u32(bufLen));
      if (typeof cookie !== "bigint") throw new WasiErrno(Errno.INVAL, "cookie");
      const list: [string, number, bigint][] = [
        [".", FileType.DIRECTORY, inodeOf(d.path)],
        ["..", FileType.DIRECTORY, inodeOf(parentPath(d.path))],
        ...fs.list(d.path).map((e): [string, number, bigint] => [
          e.name,
          e.type === "dir" ? FileType.DIRECTORY : e.type === "file" ? FileType.REGULAR_FILE : FileType.SYMBOLIC_LINK,
          inodeOf(d.path === "" ? e.name : `${d.path}/${e.name}`),
        ]),
      ];
      const start = cookie > BigInt(list.length) ? list.length : Number(cookie);
      const chunks: Uint8Array[] = [];
      let total = 0;
      for (let i = start; i < list.length && total < target.length; i++) {
        const [name, type, ino] = list[i]!;
        const nameBytes = enc.encode(name);
        const rec = new Uint8Array(24 + nameBytes.length);
        const dv = new DataView(rec.buffer);
        dv.setBigUint64(0, BigInt(i + 1), true); // d_next: the cookie of the next entry
        dv.setBigUint64(8, ino, true);
        dv.setUint32(16, nameBytes.length, true);
        dv.setUint8(20, type);
        rec.set(nameBytes, 24);
        chunks.push(rec);
        total += rec.length;
      }
      let at = 0;
      for (const c of chunks) {
        const take = Math.min(c.length, target.length - at);
        target.set(c.subarray(0, take), at);
        at += take;
      }
      m.setU32(u32(out), at);
    },
  };
}

const enc = new TextEncoder();
