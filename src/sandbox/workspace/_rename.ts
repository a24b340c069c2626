/**
 * `rename` of the workspace (POSIX.1-2017 `rename()`): validation first, then one pass that moves names. File nodes
 * keep their numbers, so a WASI descriptor open on a moved file still writes to it.
 * @module
 */
import { MAX_PATH_BYTES, MAX_PATH_DEPTH, isWithin, pathViolation, uncarriedPath } from "./path.ts";
import { WorkspaceError, dropFile, dropLink, encoder } from "./_state.ts";
import type { Config, FsState } from "./_state.ts";
import { protectRoots } from "./_policy.ts";
import type { Located } from "./_view-base.ts";

function hasEntriesBelow(s: FsState, dir: string): boolean {
  const inside = (q: string): boolean => q.startsWith(dir + "/");
  return [...s.files.keys(), ...s.dirs, ...s.links.keys()].some(inside);
}

/** The checks `rename` makes before changing anything; throws the POSIX error of the first that fails. */
function validate(s: FsState, config: Config, op: string, a: Located, b: Located): void {
  const src = a.r;
  const dst = b.r;
  if (src.kind === null) throw new WorkspaceError("ENOENT", op, src.path, "no such file or directory");
  if ((a.slash || b.slash) && src.kind !== "dir") throw new WorkspaceError("ENOTDIR", op, src.path, "a trailing '/' needs a directory");
  if (dst.missing > 1) throw new WorkspaceError("ENOENT", op, dst.path, "the parent directory does not exist");
  if (src.kind === "dir") {
    if (isWithin(dst.path, src.path) && dst.path !== src.path) {
      throw new WorkspaceError("EINVAL", op, dst.path, "a directory cannot be moved inside itself");
    }
    if (dst.kind === "file" || dst.kind === "symlink") throw new WorkspaceError("ENOTDIR", op, dst.path, "is not a directory");
    if (dst.kind === "dir" && dst.path !== src.path) {
      protectRoots(config, op, dst.path);
      if (hasEntriesBelow(s, dst.path)) throw new WorkspaceError("ENOTEMPTY", op, dst.path, "the directory is not empty");
    }
  } else if (dst.kind === "dir") {
    throw new WorkspaceError("EISDIR", op, dst.path, "is a directory");
  }
}

/**
 * Move `a` to `b` (both located without following their last segment, access already checked).
 * @param s the tables to read
 * @param mutable the tables to change (called only once everything is checked)
 * @param config mounts and limits
 * @param op the operation, for errors
 * @param a the source
 * @param b the destination
 * @returns nothing
 * @throws ReachError `POLICY_VIOLATION` (a root replaced, a moved path too deep); WorkspaceError (see `rename`)
 * @example renameEntry(state, () => mutable, config, "fs.rename", from, to)
 */
export function renameEntry(s: FsState, mutable: () => FsState, config: Config, op: string, a: Located, b: Located): void {
  validate(s, config, op, a, b);
  const src = a.r.path;
  const dst = b.r.path;
  if (src === dst) return;
  if (a.r.kind === "file" && b.r.kind === "file" && s.files.get(src) === s.files.get(dst)) return; // two names of one file
  const moved = (q: string): string => dst + q.slice(src.length);
  const under = (q: string): boolean => q === src || q.startsWith(src + "/");
  const files = [...s.files.keys()].filter(under);
  const dirs = [...s.dirs].filter(under);
  const links = [...s.links.keys()].filter(under);
  for (const q of [...files, ...dirs, ...links]) {
    const p = moved(q);
    if (p.split("/").length > MAX_PATH_DEPTH || encoder.encode(p).length > MAX_PATH_BYTES) {
      throw pathViolation(op, p, `the moved path would be deeper than ${MAX_PATH_DEPTH} segments or longer than ${MAX_PATH_BYTES} bytes`);
    }
    const uncarried = uncarriedPath(p);
    if (uncarried !== null) throw new WorkspaceError(uncarried[0], op, p, uncarried[1]);
  }
  const m = mutable();
  if (b.r.kind === "file") dropFile(m, dst);
  else if (b.r.kind === "symlink") dropLink(m, dst);
  else if (b.r.kind === "dir") m.dirs.delete(dst);
  for (const q of files) {
    const ino = m.files.get(q)!;
    m.files.delete(q);
    m.files.set(moved(q), ino);
  }
  for (const q of dirs) {
    m.dirs.delete(q);
    m.dirs.add(moved(q));
  }
  for (const q of links) {
    const target = m.links.get(q)!;
    m.links.delete(q);
    m.links.set(moved(q), target);
  }
}
