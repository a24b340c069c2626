/**
 * WASI preview1 descriptor bookkeeping: `fd_fdstat_*`, `fd_filestat_get`, `fd_filestat_set_times`,
 * `fd_renumber`, `fd_prestat_*`, and the `sock_*` calls (no descriptor here is a socket: `ENOTSOCK`, or `EBADF`
 * for one that is not open) (WASI preview1 `wasi_snapshot_preview1.witx`, sections "fd" and "sock").
 * @module
 */
import { nanos } from "../../determinism/mod.ts";
import { Errno, FdFlags, Rights, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import { need } from "./fd-calls.ts";
import { fileTypeOf } from "./fd-table.ts";
import type { FdEntry } from "./fd-table.ts";
import { statFd, writeFilestat } from "./filestat.ts";
import { u32 } from "./memory.ts";
import { checkFstFlags } from "./open-files.ts";

type Fn = (...args: never[]) => number | void;
const enc = new TextEncoder();
/** The fdflags `fd_fdstat_set_flags` may change. */
const SETTABLE = FdFlags.APPEND | FdFlags.NONBLOCK;

/**
 * The descriptor bookkeeping host functions.
 * @param ctx the instance state
 * @returns name → implementation (wrapped by the caller)
 * @example fdMetaCalls(ctx).sock_shutdown!(1, 0) // Errno.NOTSOCK
 */
export function fdMetaCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  const get = (fd: number): FdEntry => ctx.fds.get(u32(fd));
  const notSocket = (fd: number): number => {
    get(fd);
    return Errno.NOTSOCK;
  };
  return {
    fd_fdstat_get: (fd: number, out: number) => {
      const e = get(fd);
      const p = u32(out);
      m.check(p, 24, 8);
      m.bytes(p, 24).fill(0);
      m.setU8(p, fileTypeOf(e));
      m.setU16(p + 2, e.kind === "file" ? e.fdflags : 0);
      m.setU64(p + 8, e.rights);
      m.setU64(p + 16, e.kind === "dir" ? e.inheriting : 0n);
    },
    fd_fdstat_set_flags: (fd: number, flags: number) => {
      const e = get(fd);
      if ((flags & ~SETTABLE) !== 0) throw new WasiErrno(Errno.NOTSUP, "flag not supported");
      if (e.kind === "file") e.fdflags = (e.fdflags & ~SETTABLE) | flags;
      else if ((flags & FdFlags.APPEND) !== 0) throw new WasiErrno(Errno.NOTSUP, "append only on files");
    },
    fd_fdstat_set_rights: (fd: number, base: bigint, inheriting: bigint) => {
      const e = get(fd);
      if (typeof base !== "bigint" || typeof inheriting !== "bigint") throw new WasiErrno(Errno.INVAL, "rights");
      if ((base & ~e.rights) !== 0n) throw new WasiErrno(Errno.NOTCAPABLE, "rights can only shrink");
      e.rights = base;
      if (e.kind === "dir") e.inheriting &= inheriting;
    },
    fd_filestat_get: (fd: number, out: number) => {
      writeFilestat(ctx, u32(out), statFd(ctx, get(fd)));
    },
    fd_filestat_set_times: (fd: number, atim: bigint, mtim: bigint, flags: number) => {
      const e = get(fd);
      if (typeof atim !== "bigint" || typeof mtim !== "bigint") throw new WasiErrno(Errno.INVAL, "timestamps");
      if (e.kind !== "file" && e.kind !== "dir") throw new WasiErrno(Errno.NOTSUP, "not a file or directory");
      need(e, Rights.FD_FILESTAT_SET_TIMES);
      checkFstFlags(flags);
      const path = e.kind === "file" ? e.file.path : e.path;
      if (e.kind === "dir") ctx.fs?.checkAccess(path, "write");
      else if ((e.rights & Rights.FD_WRITE) === 0n) ctx.fs?.checkAccess(path, "write"); // a writer was checked at open
      const ino = e.kind === "file" ? e.file.ino : null;
      ctx.files.setTimes(path, ino, BigInt.asUintN(64, atim), BigInt.asUintN(64, mtim), flags, () => nanos(ctx.sources.readClockMs()));
    },
    fd_renumber: (from: number, to: number) => {
      const e = get(from);
      const target = get(to); // must be open (preview1 semantics)
      if (u32(from) === u32(to)) return;
      if (target.kind === "file") ctx.files.release(ctx.fs, target.file);
      ctx.fds.remove(u32(from));
      ctx.fds.set(u32(to), e);
    },
    fd_prestat_get: (fd: number, out: number) => {
      const e = get(fd);
      if (e.kind !== "dir" || e.preopen === null) throw new WasiErrno(Errno.BADF, "not a preopen");
      m.check(u32(out), 8, 4);
      m.setU32(u32(out), 0);
      m.setU32(u32(out) + 4, enc.encode(e.preopen).length);
    },
    fd_prestat_dir_name: (fd: number, ptr: number, len: number) => {
      const e = get(fd);
      if (e.kind !== "dir" || e.preopen === null) throw new WasiErrno(Errno.BADF, "not a preopen");
      const name = enc.encode(e.preopen);
      if (u32(len) < name.length) throw new WasiErrno(Errno.NAMETOOLONG, "buffer too small");
      m.bytes(u32(ptr), name.length).set(name);
    },
    sock_accept: (fd: number) => notSocket(fd),
    sock_recv: (fd: number) => notSocket(fd),
    sock_send: (fd: number) => notSocket(fd),
    sock_shutdown: (fd: number) => notSocket(fd),
  };
}
