/**
 * Symbolic-link resolution inside a confined directory (the "jail"): the walk every workspace operation makes from
 * a path to the entry it names (POSIX.1-2017 §4.13 "Pathname Resolution", confined as WASI preview1 confines a path
 * to the directory descriptor it is relative to).
 *
 * - The walk starts at the jail, which must be an existing directory reached without links, and never leaves it:
 *   a `..` at the jail, or a link whose target leads out of it, is a `RESOURCE_ACCESS` policy violation. There is
 *   no clamping: a path that tries to go up from the jail is refused, never quietly kept at the jail.
 * - A relative link target is read from the link's own directory. An absolute target is read in the namespace the
 *   jail is seen in (`absolute`, e.g. `"/"` for the workspace root or `"/data"` for a preopened folder): it must
 *   name the jail or something below it, otherwise it is refused; with `absolute: null` every absolute target is.
 * - Every link on the way is followed; a link at the end is followed when `follow` is true. More than
 *   {@link MAX_LINK_EXPANSIONS} expansions in one walk is `ELOOP` (loops included).
 * - A missing entry ends the walk: the rest must be plain names; the result then reports how many trailing names
 *   are missing, so that creating operations can decide. A `..` after a missing name is `ENOENT`, unless the rest of
 *   the path would climb out of the jail on its own text (`missing/../../x`): that is refused as an escape, so an
 *   escape attempt is reported as one whether or not the names on its way exist.
 * The walk only reads; which operation may touch the result is decided afterwards, on the resolved path, by the
 * workspace's access checks, so a link can never widen what a tool may do.
 * @module
 */
import { MAX_PATH_BYTES, MAX_PATH_DEPTH, ancestorPaths, displayPath, pathViolation } from "./path.ts";
import { WorkspaceError, encoder, kindOf, loopError } from "./_state.ts";
import type { FsState, Kind } from "./_state.ts";

/** Most links one resolution follows (Linux `MAXSYMLINKS`). */
export const MAX_LINK_EXPANSIONS = 40;

/** Where a walk is confined: `root`, a normalised directory path, and the absolute name it is seen under. */
export type Jail = { root: string; absolute: string | null };

/** The result of a walk. `path` has no link before its last segment; `kind` is null when `missing > 0`. */
export type Resolved = { path: string; kind: Kind; missing: number };

function join(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

function parent(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** Segments of a link target, in walk order; a trailing `/` becomes a final `.` (the target must be a directory). */
function targetSegments(target: string): string[] {
  const parts = target.split("/").filter((x) => x !== "");
  if (target.endsWith("/") && parts.length > 0) parts.push(".");
  return parts;
}

/** How deep below the jail's root a resolved path lies. */
function depthIn(path: string, jail: Jail): number {
  const inner = jail.root === "" ? path : path.slice(jail.root.length + 1);
  return inner === "" ? 0 : inner.split("/").length;
}

/** Whether `segments`, walked from `depth` levels below the jail's root, climb above it by their text alone. */
function climbsOut(depth: number, segments: readonly string[]): boolean {
  for (const seg of segments) {
    if (seg === "..") depth--;
    else if (seg !== ".") depth++;
    if (depth < 0) return true;
  }
  return false;
}

/** The jail must still be a directory reached without links (a descriptor's folder may have been moved away). */
function checkJail(s: FsState, op: string, jail: Jail): void {
  for (const p of [...ancestorPaths(jail.root), jail.root]) {
    if (kindOf(s, p) !== "dir") {
      throw new WorkspaceError("ENOENT", op, jail.root, "the directory was removed or replaced; open it again");
    }
  }
}

/** Segments an absolute target leaves to walk from the jail, or null when it does not lie inside the jail. */
function insideJail(target: string, jail: Jail): string[] | null {
  if (jail.absolute === null) return null;
  const rest = targetSegments(target).filter((x) => x !== ".");
  const prefix = jail.absolute.split("/").filter((x) => x !== "" && x !== ".");
  for (let i = 0; i < prefix.length; i++) if (rest[i] !== prefix[i]) return null;
  const tail = rest.slice(prefix.length);
  if (target.endsWith("/")) tail.push(".");
  return tail;
}

/**
 * Walk `segments` from the jail (see the module notes).
 * @param s the tables
 * @param op the operation, for errors
 * @param shown the path as the caller gave it, for errors
 * @param segments the path's segments (`..` allowed; no empty segments)
 * @param jail the confinement
 * @param follow follow a link at the end
 * @returns the resolved path, the kind of its entry, and how many trailing names do not exist
 * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS`) when the walk would leave the jail or the result is too
 *   long; WorkspaceError `ELOOP`, `ENOTDIR` (a file on the way) or `ENOENT` (a stale jail, or `..` after a missing name)
 * @example resolvePath(state, "fs.read", "a/l", ["a", "l"], { root: "", absolute: "/" }, true).path // "a/target"
 */
export function resolvePath(s: FsState, op: string, shown: string, segments: readonly string[], jail: Jail, follow: boolean): Resolved {
  checkJail(s, op, jail);
  const queue = [...segments].reverse(); // a stack: the next segment is at the end
  let cur = jail.root;
  const jailDepth = jail.root === "" ? 0 : jail.root.split("/").length;
  let depth = jailDepth; // segments in cur
  let via: string | null = null; // the last link followed, for messages
  let expansions = 0;
  const missing: string[] = [];
  const escape = (why: string): never => {
    throw pathViolation(op, shown, via === null ? why : `the link "${displayPath(via)}" leads out of its directory (${why})`);
  };
  while (queue.length > 0) {
    const seg = queue.pop()!;
    if (seg === ".") continue;
    // No entry lies deeper than MAX_PATH_DEPTH, so a walk that goes deeper can only fail: stop it before the
    // strings it builds grow (a chain of long link targets could otherwise make one call slow).
    if (depth + missing.length >= MAX_PATH_DEPTH && seg !== "..") {
      throw pathViolation(op, shown, `the path it names is deeper than ${MAX_PATH_DEPTH} segments`);
    }
    if (missing.length > 0) {
      if (seg === "..") {
        if (climbsOut(depthIn(cur, jail) + missing.length - 1, [...queue].reverse())) escape("'..' would go above the directory the path is relative to");
        throw new WorkspaceError("ENOENT", op, join(cur, missing.join("/")), "no such directory");
      }
      missing.push(seg);
      continue;
    }
    if (seg === "..") {
      if (cur === jail.root) escape("'..' would go above the directory the path is relative to");
      cur = parent(cur);
      depth--;
      continue;
    }
    const next = join(cur, seg);
    const kind = kindOf(s, next);
    const last = queue.length === 0;
    if (kind === "symlink" && (!last || follow)) {
      if (++expansions > MAX_LINK_EXPANSIONS) throw loopError(op, next, MAX_LINK_EXPANSIONS);
      const target = s.links.get(next)!;
      via = next;
      if (target.startsWith("/")) {
        const tail = insideJail(target, jail);
        if (tail === null) escape(`its absolute target ${JSON.stringify(displayPath(target))} is not inside it`);
        cur = jail.root;
        depth = jailDepth;
        queue.push(...tail!.reverse());
      } else {
        queue.push(...targetSegments(target).reverse());
      }
      continue;
    }
    if (kind === null) {
      missing.push(seg);
      continue;
    }
    if (kind === "file" && !last) {
      throw new WorkspaceError("ENOTDIR", op, next, `"${displayPath(next)}" is a file, not a directory`);
    }
    cur = next;
    depth++;
  }
  const path = missing.length === 0 ? cur : join(cur, missing.join("/"));
  if (encoder.encode(path).length > MAX_PATH_BYTES) {
    throw pathViolation(op, shown, `the path it names is longer than ${MAX_PATH_BYTES} bytes`);
  }
  return { path, kind: missing.length === 0 ? kindOf(s, path) : null, missing: missing.length };
}
