/**
 * Guest paths: a path a WASI call gives relative to a directory descriptor, resolved in the workspace beneath that
 * directory (WASI preview1 "path" arguments are relative to a `fd` with the `path_*` rights; cap-std semantics).
 * `..` may be used while it stays beneath the descriptor's directory; links are followed beneath it too, absolute
 * link targets read under the preopen's guest name (see `workspace/_resolve.ts`). Leaving the directory, an
 * absolute guest path, a backslash or a control character is a `RESOURCE_ACCESS` policy violation (the guest sees
 * `ENOTCAPABLE`); a NUL is `EINVAL`, as in POSIX, where no path can contain one.
 * @module
 */
import { pathViolation } from "../workspace/path.ts";
import type { ResolvedPath, WorkspaceView } from "../workspace/workspace.ts";
import { Errno, WasiErrno } from "./errno.ts";
import type { WasiContext } from "./context.ts";
import type { DirEntry } from "./fd-table.ts";
import { u32 } from "./memory.ts";

/**
 * The absolute guest name of a directory descriptor's folder, or null when its preopen has a relative guest name.
 * @param d the directory entry
 * @returns e.g. `"/data/sub"` for folder `data/sub` under the preopen `/data` → `data`
 * @example guestName(ctx.fds.get(3) as DirEntry) // "/data"
 */
export function guestName(d: DirEntry): string | null {
  const { guest, path } = d.base;
  if (!guest.startsWith("/")) return null;
  const inside = path === "" ? d.path : d.path === path ? "" : d.path.startsWith(path + "/") ? d.path.slice(path.length + 1) : null;
  if (inside === null) return null;
  const g = guest.replace(/\/+$/, "");
  return inside === "" ? (g === "" ? "/" : g) : `${g}/${inside}`;
}

/**
 * Resolve a guest path beneath a directory descriptor.
 * @param fs the workspace view
 * @param d the directory descriptor's entry (its folder is the jail)
 * @param guest the path as the guest gave it
 * @param op the operation, for errors and violations
 * @param follow follow a link at the end (a trailing `/` also follows, unless `slashFollows` is false)
 * @param slashFollows whether a trailing `/` makes the last link followed (true for lookups; false for the calls
 *   that act on a link itself: create, remove, rename)
 * @returns the resolved path, its kind, missing names, and whether the guest path ended with `/`
 * @throws WasiErrno `EINVAL` (NUL); ReachError `POLICY_VIOLATION`; WorkspaceError from the walk
 * @example resolveGuest(fs, dir, "sub/../a.txt", "fs.open", true).path // "data/a.txt"
 */
export function resolveGuest(fs: WorkspaceView, d: DirEntry, guest: string, op: string, follow: boolean, slashFollows = true): ResolvedPath {
  if (guest.includes("\0")) throw new WasiErrno(Errno.INVAL, "a path cannot contain NUL");
  if (guest.startsWith("/")) throw pathViolation(op, guest, "absolute paths are not allowed; WASI paths are relative to a directory descriptor");
  const slash = guest.endsWith("/") && guest.replace(/\/+$/, "") !== "";
  return fs.resolve(guest, { jail: d.path, absolute: guestName(d), follow: follow || (slash && slashFollows), operation: op });
}

/** What every `path_*` call needs from the instance: its directory descriptors, file system and path strings. */
export type PathArgs = {
  /** The directory entry of `fd`, which must hold `right`. @throws WasiErrno `EBADF`, `ENOTDIR`, `ENOTCAPABLE` */
  dirOf(fd: number, right: bigint): DirEntry;
  /** The workspace view. @throws WasiErrno `ENOTCAPABLE` when the instance has none */
  fsOf(): WorkspaceView;
  /** A path string from guest memory. @throws WasiErrno `EFAULT`, `EILSEQ`, `ENAMETOOLONG` */
  text(ptr: number, len: number): string;
};

/**
 * The {@link PathArgs} of an instance.
 * @param ctx the instance
 * @returns the helpers
 * @example const { dirOf, fsOf, text } = pathArgs(ctx)
 */
export function pathArgs(ctx: WasiContext): PathArgs {
  return {
    dirOf: (fd, right) => {
      const d = ctx.fds.get(u32(fd));
      if (d.kind !== "dir") throw new WasiErrno(Errno.NOTDIR, "not a directory descriptor");
      if ((d.rights & right) === 0n) throw new WasiErrno(Errno.NOTCAPABLE, "directory lacks the right");
      return d;
    },
    fsOf: () => {
      if (ctx.fs === null) throw new WasiErrno(Errno.NOTCAPABLE, "no file system");
      return ctx.fs;
    },
    text: (ptr, len) => ctx.mem.string(u32(ptr), u32(len)),
  };
}
