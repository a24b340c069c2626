/**
 * WASI preview1 descriptor calls (`fd_*`) over the {@link FdTable} (WASI preview1 `wasi_snapshot_preview1.witx`,
 * section "fd"). Every argument is validated; failures are thrown as {@link WasiErrno} and turned into errno values
 * by `WasiContext.wrap`.
 * @module
 */
import { Errno, FdFlags, FileType, Rights, Whence, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import { ensureCapacity, fileTypeOf, flush, inodeOf } from "./fd-table.ts";
import type { FdEntry, FileEntry } from "./fd-table.ts";
import { u32 } from "./memory.ts";

type Fn = (...args: never[]) => number | void;

function need(e: FdEntry, right: bigint): void {
  if ((e.rights & right) === 0n) throw new WasiErrno(Errno.NOTCAPABLE, "descriptor lacks the right");
}

function asFile(e: FdEntry): FileEntry {
  if (e.kind === "dir") throw new WasiErrno(Errno.ISDIR, "is a directory");
  if (e.kind !== "file") throw new WasiErrno(Errno.SPIPE, "not seekable");
  return e;
}

function offset(v: unknown): number {
  if (typeof v !== "bigint") throw new WasiErrno(Errno.INVAL, "offset must be an i64");
  const u = BigInt.asUintN(64, v);
  if (u > BigInt(Number.MAX_SAFE_INTEGER)) throw new WasiErrno(Errno.INVAL, "offset too large");
  return Number(u);
}

/** Write a filestat (64 bytes: dev, ino, filetype, nlink, size, atim, mtim, ctim); timestamps are fixed at 0. */
export function writeFilestat(ctx: WasiContext, ptr: number, type: number, ino: bigint, size: number): void {
  ctx.mem.check(ptr, 64, 8);
  ctx.mem.bytes(ptr, 64).fill(0);
  ctx.mem.setU64(ptr + 8, ino);
  ctx.mem.setU8(ptr + 16, type);
  ctx.mem.setU64(ptr + 24, 1n);
  ctx.mem.setU64(ptr + 32, BigInt(size));
}

function readInto(ctx: WasiContext, e: FdEntry, iovs: number, n: number, at: number | null): number {
  const bufs = ctx.mem.iovecs(u32(iovs), u32(n));
  let src: Uint8Array;
  let pos: number;
  if (e.kind === "stdin") {
    if (at !== null) throw new WasiErrno(Errno.SPIPE, "stdin is not seekable");
    src = e.data;
    pos = e.pos;
  } else if (e.kind === "file") {
    need(e, Rights.FD_READ);
    src = e.data.subarray(0, e.size);
    pos = at ?? e.pos;
  } else if (e.kind === "dir") {
    throw new WasiErrno(Errno.ISDIR, "is a directory");
  } else {
    throw new WasiErrno(Errno.BADF, "not readable");
  }
  let total = 0;
  for (const b of bufs) {
    if (pos >= src.length) break;
    const take = Math.min(b.length, src.length - pos);
    b.set(src.subarray(pos, pos + take));
    pos += take;
    total += take;
  }
  if (at === null) {
    if (e.kind === "stdin") e.pos = pos;
    else if (e.kind === "file") e.pos = pos;
  }
  return total;
}

function writeFrom(ctx: WasiContext, e: FdEntry, iovs: number, n: number, at: number | null): number {
  const bufs = ctx.mem.iovecs(u32(iovs), u32(n));
  if (e.kind === "out") {
    if (at !== null) throw new WasiErrno(Errno.SPIPE, "not seekable");
    let total = 0;
    for (const b of bufs) {
      e.sink.write(b);
      total += b.length;
    }
    return total;
  }
  if (e.kind !== "file") throw new WasiErrno(e.kind === "dir" ? Errno.ISDIR : Errno.BADF, "not writable");
  need(e, Rights.FD_WRITE);
  let pos = at ?? (e.append ? e.size : e.pos);
  const total = bufs.reduce((s, b) => s + b.length, 0);
  ensureCapacity(e, pos + total);
  if (pos > e.size) e.data.fill(0, e.size, pos);
  for (const b of bufs) {
    e.data.set(b, pos);
    pos += b.length;
  }
  e.size = Math.max(e.size, pos);
  if (total > 0) e.dirty = true;
  if (at === null) e.pos = pos;
  return total;
}

/**
 * The `fd_*` host functions.
 * @param ctx the instance state
 * @returns name → implementation (wrapped by the caller)
 */
export function fdCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  const get = (fd: number): FdEntry => ctx.fds.get(u32(fd));
  return {
    fd_read: (fd: number, iovs: number, n: number, out: number) => {
      m.check(u32(out), 4, 4);
      m.setU32(u32(out), readInto(ctx, get(fd), iovs, n, null));
    },
    fd_pread: (fd: number, iovs: number, n: number, off: bigint, out: number) => {
      m.check(u32(out), 4, 4);
      m.setU32(u32(out), readInto(ctx, get(fd), iovs, n, offset(off)));
    },
    fd_write: (fd: number, iovs: number, n: number, out: number) => {
      m.check(u32(out), 4, 4);
      m.setU32(u32(out), writeFrom(ctx, get(fd), iovs, n, null));
    },
    fd_pwrite: (fd: number, iovs: number, n: number, off: bigint, out: number) => {
      m.check(u32(out), 4, 4);
      m.setU32(u32(out), writeFrom(ctx, get(fd), iovs, n, offset(off)));
    },
    fd_seek: (fd: number, off: bigint, whence: number, out: number) => {
      const f = asFile(get(fd));
      need(f, Rights.FD_SEEK);
      m.check(u32(out), 8, 8);
      if (typeof off !== "bigint") throw new WasiErrno(Errno.INVAL, "offset must be an i64");
      const base = whence === Whence.SET ? 0 : whence === Whence.CUR ? f.pos : whence === Whence.END ? f.size : -1;
      if (base < 0) throw new WasiErrno(Errno.INVAL, "bad whence");
      const next = BigInt(base) + BigInt.asIntN(64, off);
      if (next < 0n || next > BigInt(Number.MAX_SAFE_INTEGER)) throw new WasiErrno(Errno.INVAL, "bad offset");
      f.pos = Number(next);
      m.setU64(u32(out), next);
    },
    fd_tell: (fd: number, out: number) => {
      const f = asFile(get(fd));
      m.check(u32(out), 8, 8);
      m.setU64(u32(out), BigInt(f.pos));
    },
    fd_close: (fd: number) => {
      const e = get(fd);
      try {
        if (e.kind === "file" && ctx.fs !== null) flush(ctx.fs, e);
      } finally {
        ctx.fds.remove(u32(fd));
      }
    },
    fd_sync: (fd: number) => {
      const e = get(fd);
      if (e.kind === "file" && ctx.fs !== null) flush(ctx.fs, e);
    },
    fd_datasync: (fd: number) => {
      const e = get(fd);
      if (e.kind === "file" && ctx.fs !== null) flush(ctx.fs, e);
    },
    fd_fdstat_get: (fd: number, out: number) => {
      const e = get(fd);
      const p = u32(out);
      m.check(p, 24, 8);
      m.bytes(p, 24).fill(0);
      m.setU8(p, fileTypeOf(e));
      m.setU16(p + 2, e.kind === "file" && e.append ? FdFlags.APPEND : 0);
      m.setU64(p + 8, e.rights);
      m.setU64(p + 16, e.kind === "dir" ? e.inheriting : 0n);
    },
    fd_fdstat_set_flags: (fd: number, flags: number) => {
      const e = get(fd);
      if ((flags & ~(FdFlags.APPEND | FdFlags.NONBLOCK)) !== 0) throw new WasiErrno(Errno.NOTSUP, "flag not supported");
      if (e.kind === "file") e.append = (flags & FdFlags.APPEND) !== 0;
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
      const e = get(fd);
      if (e.kind === "file") writeFilestat(ctx, u32(out), FileType.REGULAR_FILE, inodeOf(e.path), e.size);
      else if (e.kind === "dir") writeFilestat(ctx, u32(out), FileType.DIRECTORY, inodeOf(e.path), 0);
      else writeFilestat(ctx, u32(out), FileType.CHARACTER_DEVICE, 0n, 0);
    },
    fd_filestat_set_size: (fd: number, size: bigint) => {
      const f = asFile(get(fd));
      need(f, Rights.FD_FILESTAT_SET_SIZE);
      const n = offset(size);
      ensureCapacity(f, n);
      if (n > f.size) f.data.fill(0, f.size, n);
      f.size = n;
      f.dirty = true;
    },
    fd_advise: (fd: number) => {
      asFile(get(fd));
    },
    fd_renumber: (from: number, to: number) => {
      const e = get(from);
      get(to); // must be open (preview1 semantics)
      const target = ctx.fds.get(u32(to));
      if (target.kind === "file" && ctx.fs !== null) flush(ctx.fs, target);
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
  };
}

const enc = new TextEncoder();
