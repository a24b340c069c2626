/**
 * WASI preview1 descriptor calls (`fd_*`) over the {@link FdTable} (WASI preview1 `wasi_snapshot_preview1.witx`,
 * section "fd"). Every argument is validated; failures are thrown as {@link WasiErrno} and turned into errno values
 * by `WasiContext.wrap`.
 * @module
 */
import { Errno, FdFlags, Rights, Whence, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import { ensureCapacity, flush } from "./fd-table.ts";
import type { FdEntry, FileEntry } from "./fd-table.ts";
import { u32 } from "./memory.ts";

type Fn = (...args: never[]) => number | void;

/**
 * Refuse a descriptor without a right.
 * @param e the entry
 * @param right the right needed
 * @returns nothing
 * @throws WasiErrno `ENOTCAPABLE`
 * @example need(entry, Rights.FD_READ)
 */
export function need(e: FdEntry, right: bigint): void {
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
    src = e.file.data.subarray(0, e.file.size);
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
  const f = e.file;
  const append = (e.fdflags & FdFlags.APPEND) !== 0;
  let pos = at ?? (append ? f.size : e.pos);
  const total = bufs.reduce((s, b) => s + b.length, 0);
  ensureCapacity(f, pos + total);
  if (pos > f.size) f.data.fill(0, f.size, pos);
  for (const b of bufs) {
    f.data.set(b, pos);
    pos += b.length;
  }
  f.size = Math.max(f.size, pos);
  if (total > 0) f.dirty = true;
  if (at === null) e.pos = pos;
  return total;
}

/**
 * The `fd_*` host functions that move data (the descriptor bookkeeping is in `fd-meta-calls.ts`).
 * @param ctx the instance state
 * @returns name → implementation (wrapped by the caller)
 */
export function fdCalls(ctx: WasiContext): Record<string, Fn> {
  const m = ctx.mem;
  const get = (fd: number): FdEntry => ctx.fds.get(u32(fd));
  const sync = (fd: number): void => {
    const e = get(fd);
    if (e.kind === "file" && ctx.fs !== null) flush(ctx.fs, e.file);
  };
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
      const base = whence === Whence.SET ? 0 : whence === Whence.CUR ? f.pos : whence === Whence.END ? f.file.size : -1;
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
        if (e.kind === "file") ctx.files.release(ctx.fs, e.file);
      } finally {
        ctx.fds.remove(u32(fd));
      }
    },
    fd_sync: sync,
    fd_datasync: sync,
    fd_filestat_set_size: (fd: number, size: bigint) => {
      const f = asFile(get(fd));
      need(f, Rights.FD_FILESTAT_SET_SIZE);
      resize(f, offset(size), true);
    },
    fd_allocate: (fd: number, off: bigint, len: bigint) => {
      const f = asFile(get(fd));
      need(f, Rights.FD_ALLOCATE);
      const end = offset(off) + offset(len);
      if (end > f.file.size) resize(f, end, false);
    },
    fd_advise: (fd: number) => {
      asFile(get(fd));
    },
  };
}

/** Set an open file's size, zero-filling growth. */
function resize(e: FileEntry, n: number, always: boolean): void {
  const f = e.file;
  ensureCapacity(f, n);
  if (n > f.size) f.data.fill(0, f.size, n);
  if (always || n !== f.size) f.dirty = true;
  f.size = n;
}
