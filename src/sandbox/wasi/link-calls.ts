/**
 * WASI preview1 link calls: `path_symlink`, `path_readlink`, `path_link` and `path_rename` (WASI preview1
 * `wasi_snapshot_preview1.witx`, section "path"), over the workspace's links (`workspace/_resolve.ts`).
 *
 * - `path_symlink` stores the target text as given; it is resolved only when used, beneath the directory
 *   descriptor of that use. An absolute target is refused (`EPERM`): a guest cannot know how the host maps its
 *   preopens, and an absolute link could be read differently through another descriptor. Absolute links that
 *   exist already (copied from a host folder, made by the host) are followed within the preopen's guest name.
 * - `path_link` makes a hard link (the workspace shares one file node between both names; both need write access).
 * - `path_readlink` copies the target text, cut to the buffer (POSIX `readlink`).
 * - `path_rename` follows POSIX `rename`; open descriptors on the moved entries keep working.
 * @module
 */
import { Errno, LookupFlags, Rights, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import { pathArgs, resolveGuest } from "./_guest-path.ts";
import { u32 } from "./memory.ts";

type Fn = (...args: never[]) => number | void;
const enc = new TextEncoder();

function moved(path: string, from: string, to: string): string {
  if (path === from) return to;
  return path.startsWith(from + "/") ? to + path.slice(from.length) : path;
}

/**
 * The link host functions.
 * @param ctx the instance state
 * @returns name → implementation (wrapped by the caller)
 * @example linkCalls(ctx).path_readlink!(3, ptr, len, buf, 64, out)
 */
export function linkCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  const { dirOf, fsOf, text } = pathArgs(ctx);
  return {
    path_symlink: (oldPtr: number, oldLen: number, dirfd: number, ptr: number, len: number) => {
      const d = dirOf(dirfd, Rights.PATH_SYMLINK);
      const fs = fsOf();
      const target = text(oldPtr, oldLen);
      if (target.includes("\0")) throw new WasiErrno(Errno.INVAL, "a link target cannot contain NUL");
      if (target === "") throw new WasiErrno(Errno.NOENT, "an empty link target");
      if (target.startsWith("/")) throw new WasiErrno(Errno.PERM, "absolute link targets cannot be made by a guest");
      const r = resolveGuest(fs, d, text(ptr, len), "fs.symlink", false, false);
      if (r.kind !== null) throw new WasiErrno(Errno.EXIST, "exists");
      if (r.slash || r.missing > 1) throw new WasiErrno(Errno.NOENT, "the parent directory does not exist");
      fs.symlink(r.path, target);
    },

    path_readlink: (dirfd: number, ptr: number, len: number, buf: number, bufLen: number, out: number) => {
      m.check(u32(out), 4, 4);
      const d = dirOf(dirfd, Rights.PATH_READLINK);
      const fs = fsOf();
      const r = resolveGuest(fs, d, text(ptr, len), "fs.readlink", false);
      if (r.kind === null) throw new WasiErrno(Errno.NOENT, "no such link");
      const bytes = enc.encode(fs.readlink(r.path));
      const n = Math.min(bytes.length, u32(bufLen));
      m.bytes(u32(buf), n).set(bytes.subarray(0, n));
      m.setU32(u32(out), n);
    },

    path_link: (oldFd: number, oldFlags: number, oldPtr: number, oldLen: number, newFd: number, ptr: number, len: number) => {
      const from = dirOf(oldFd, Rights.PATH_LINK_SOURCE);
      const to = dirOf(newFd, Rights.PATH_LINK_TARGET);
      const fs = fsOf();
      const a = resolveGuest(fs, from, text(oldPtr, oldLen), "fs.link", (oldFlags & LookupFlags.SYMLINK_FOLLOW) !== 0);
      if (a.kind === null) throw new WasiErrno(Errno.NOENT, "no such file");
      if (a.kind === "dir") throw new WasiErrno(Errno.PERM, "a directory cannot be hard-linked");
      const b = resolveGuest(fs, to, text(ptr, len), "fs.link", false, false);
      if (b.kind !== null) throw new WasiErrno(Errno.EXIST, "exists");
      if (b.slash || b.missing > 1) throw new WasiErrno(Errno.NOENT, "the parent directory does not exist");
      fs.link(a.path, b.path);
    },

    path_rename: (fd: number, oldPtr: number, oldLen: number, newFd: number, ptr: number, len: number) => {
      const from = dirOf(fd, Rights.PATH_RENAME_SOURCE);
      const to = dirOf(newFd, Rights.PATH_RENAME_TARGET);
      const fs = fsOf();
      const a = resolveGuest(fs, from, text(oldPtr, oldLen), "fs.rename", false, false);
      const b = resolveGuest(fs, to, text(ptr, len), "fs.rename", false, false);
      if (a.kind === null) throw new WasiErrno(Errno.NOENT, "no such file or directory");
      for (const [, e] of ctx.fds.entries()) {
        if (e.kind === "dir" && e.preopen !== null && (e.path === a.path || e.path === b.path)) throw new WasiErrno(Errno.BUSY, "a preopen");
      }
      fs.rename(a.path + (a.slash ? "/" : ""), b.path + (b.slash ? "/" : ""));
      if (a.path === b.path) return;
      for (const [, e] of ctx.fds.entries()) if (e.kind === "dir") e.path = moved(e.path, a.path, b.path);
      ctx.files.renamed(a.path, b.path);
    },
  };
}
