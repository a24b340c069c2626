/**
 * WASI preview1 constants: errno values, file types, flags and rights (WASI `wasi_snapshot_preview1`
 * witx, `typenames.witx`), and the mapping from reach-wasm errors to errno values.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { WorkspaceError } from "../workspace/workspace.ts";

/** errno values (typenames.witx `errno`, u16). Only the ones this shim returns are named. */
export const Errno = {
  SUCCESS: 0,
  TOOBIG: 1,
  ACCES: 2,
  BADF: 8,
  BUSY: 10,
  EXIST: 20,
  FAULT: 21,
  FBIG: 22,
  ILSEQ: 25,
  INVAL: 28,
  IO: 29,
  ISDIR: 31,
  LOOP: 32,
  NAMETOOLONG: 37,
  NOENT: 44,
  NOMEM: 48,
  NOSPC: 51,
  NOSYS: 52,
  NOTDIR: 54,
  NOTEMPTY: 55,
  NOTSOCK: 57,
  NOTSUP: 58,
  OVERFLOW: 61,
  PERM: 63,
  SPIPE: 70,
  XDEV: 75,
  NOTCAPABLE: 76,
} as const;

/** File types (typenames.witx `filetype`, u8). */
export const FileType = { UNKNOWN: 0, CHARACTER_DEVICE: 2, DIRECTORY: 3, REGULAR_FILE: 4, SYMBOLIC_LINK: 7 } as const;

/** `fdflags` bits (u16). */
export const FdFlags = { APPEND: 1, DSYNC: 2, NONBLOCK: 4, RSYNC: 8, SYNC: 16 } as const;

/** `oflags` bits (u16). */
export const OFlags = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 } as const;

/** `lookupflags` bits (u32). */
export const LookupFlags = { SYMLINK_FOLLOW: 1 } as const;

/** `fstflags` bits (u16): which timestamps `*_filestat_set_times` sets, to a given time or to now. */
export const FstFlags = { ATIM: 1, ATIM_NOW: 2, MTIM: 4, MTIM_NOW: 8 } as const;

/** `whence` values (u8). */
export const Whence = { SET: 0, CUR: 1, END: 2 } as const;

/** `clockid` values (u32). */
export const ClockId = { REALTIME: 0, MONOTONIC: 1, PROCESS_CPUTIME: 2, THREAD_CPUTIME: 3 } as const;

/** `rights` bits (u64), as bigint. */
export const Rights = {
  FD_DATASYNC: 1n << 0n,
  FD_READ: 1n << 1n,
  FD_SEEK: 1n << 2n,
  FD_FDSTAT_SET_FLAGS: 1n << 3n,
  FD_SYNC: 1n << 4n,
  FD_TELL: 1n << 5n,
  FD_WRITE: 1n << 6n,
  FD_ADVISE: 1n << 7n,
  FD_ALLOCATE: 1n << 8n,
  PATH_CREATE_DIRECTORY: 1n << 9n,
  PATH_CREATE_FILE: 1n << 10n,
  PATH_LINK_SOURCE: 1n << 11n,
  PATH_LINK_TARGET: 1n << 12n,
  PATH_OPEN: 1n << 13n,
  FD_READDIR: 1n << 14n,
  PATH_READLINK: 1n << 15n,
  PATH_RENAME_SOURCE: 1n << 16n,
  PATH_RENAME_TARGET: 1n << 17n,
  PATH_FILESTAT_GET: 1n << 18n,
  PATH_FILESTAT_SET_SIZE: 1n << 19n,
  PATH_FILESTAT_SET_TIMES: 1n << 20n,
  FD_FILESTAT_GET: 1n << 21n,
  FD_FILESTAT_SET_SIZE: 1n << 22n,
  FD_FILESTAT_SET_TIMES: 1n << 23n,
  PATH_SYMLINK: 1n << 24n,
  PATH_REMOVE_DIRECTORY: 1n << 25n,
  PATH_UNLINK_FILE: 1n << 26n,
  POLL_FD_READWRITE: 1n << 27n,
} as const;

const R = Rights;
/** Rights a regular file may have (before the open's own request narrows them). */
export const FILE_RIGHTS: bigint =
  R.FD_DATASYNC | R.FD_READ | R.FD_SEEK | R.FD_FDSTAT_SET_FLAGS | R.FD_SYNC | R.FD_TELL | R.FD_WRITE |
  R.FD_ADVISE | R.FD_ALLOCATE | R.FD_FILESTAT_GET | R.FD_FILESTAT_SET_SIZE | R.FD_FILESTAT_SET_TIMES |
  R.POLL_FD_READWRITE;
/** Rights a directory may have. */
export const DIR_RIGHTS: bigint =
  R.FD_FDSTAT_SET_FLAGS | R.FD_SYNC | R.FD_DATASYNC | R.PATH_CREATE_DIRECTORY | R.PATH_CREATE_FILE |
  R.PATH_LINK_SOURCE | R.PATH_LINK_TARGET | R.PATH_OPEN | R.FD_READDIR | R.PATH_READLINK |
  R.PATH_RENAME_SOURCE | R.PATH_RENAME_TARGET | R.PATH_FILESTAT_GET | R.PATH_FILESTAT_SET_SIZE |
  R.PATH_FILESTAT_SET_TIMES | R.FD_FILESTAT_GET | R.FD_FILESTAT_SET_TIMES | R.PATH_SYMLINK |
  R.PATH_REMOVE_DIRECTORY | R.PATH_UNLINK_FILE;
/** Rights of the standard streams. */
export const STDIO_RIGHTS: bigint = R.FD_READ | R.FD_WRITE | R.FD_FILESTAT_GET | R.POLL_FD_READWRITE | R.FD_FDSTAT_SET_FLAGS;

/** A WASI call's failure, thrown inside the shim and turned into its errno by the call wrapper. */
export class WasiErrno extends Error {
  /** The errno value returned to the guest. */
  readonly errno: number;
  /**
   * @param errno the errno value
   * @param message what went wrong (for debugging; the guest sees only the number)
   */
  constructor(errno: number, message = `errno ${errno}`) {
    super(message);
    this.name = "WasiErrno";
    this.errno = errno;
  }
}

/**
 * Map an error thrown by the workspace to the errno the guest sees.
 * @param err what was thrown
 * @returns `{ errno, violation }`; `violation` is the ReachError to remember when it is a `POLICY_VIOLATION` or a
 *   resource limit (`EXEC_DISK_EXCEEDED`), so the runner can report it after the guest has seen only the errno
 * @example errnoOf(new WasiErrno(Errno.BADF)).errno // 8
 */
export function errnoOf(err: unknown): { errno: number; violation: ReachError | null } {
  if (err instanceof WasiErrno) return { errno: err.errno, violation: null };
  if (err instanceof WorkspaceError) {
    const map: Record<string, number> = {
      ENOENT: Errno.NOENT,
      ENOTDIR: Errno.NOTDIR,
      EISDIR: Errno.ISDIR,
      ENOTEMPTY: Errno.NOTEMPTY,
      EEXIST: Errno.EXIST,
      ELOOP: Errno.LOOP,
      EINVAL: Errno.INVAL,
      EPERM: Errno.PERM,
      EILSEQ: Errno.ILSEQ,
      ENAMETOOLONG: Errno.NAMETOOLONG,
    };
    return { errno: map[err.errno] ?? Errno.IO, violation: null };
  }
  if (err instanceof ReachError) {
    if (err.code === "POLICY_VIOLATION") {
      // seed 003 §4.3: RESOURCE_ACCESS (escape, links) → ENOTCAPABLE; PERMISSION_DENIED (read-only root) → EACCES.
      const errno = err.details["violationType"] === "PERMISSION_DENIED" ? Errno.ACCES : Errno.NOTCAPABLE;
      return { errno, violation: err };
    }
    if (err.code === "EXEC_DISK_EXCEEDED") return { errno: Errno.NOSPC, violation: err };
    if (err.code === "PROTO_SEQUENCE_ERROR") return { errno: Errno.IO, violation: err };
  }
  if (err instanceof RangeError) return { errno: Errno.INVAL, violation: null };
  return { errno: Errno.IO, violation: null };
}
