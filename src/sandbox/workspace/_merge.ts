/**
 * A step's effect on the workspace as data, so that steps can run apart (another thread) and their effects be put
 * together in a fixed order (the engine's parallel steps, `src/engine/step-graph.ts`).
 *
 * - {@link workspaceDelta} is exact: the entry tables a step changed (file names, nodes, directories, links, the byte
 *   count and the next node number). {@link applyWorkspaceDelta} on the state the step started from gives exactly the
 *   state it ended with, node numbers included.
 * - {@link mergeWorkspaceChanges} puts a step's changes onto another state (one that does not hold the same commits
 *   as the state the step started from): path by path, the step's version wins — a removed entry goes (a directory
 *   with everything below it), a written file or link replaces whatever was at its path, directories it made are
 *   made, missing parent directories are made. Files it wrote get new nodes in the order of their paths; names that
 *   shared a node in the step share one here. Applied in plan order, a later step's write wins.
 * @module
 */
import { ancestorPaths } from "./path.ts";
import { byCodeUnits, cloneState, dropFile, dropLink, putFile, putLink } from "./_state.ts";
import type { FileNode, FsState } from "./_state.ts";

/** The entry tables a step changed (null: removed). */
export type WorkspaceDelta = {
  readonly files: readonly (readonly [string, number | null])[];
  readonly inodes: readonly (readonly [number, FileNode | null])[];
  readonly dirs: readonly (readonly [string, boolean])[];
  readonly links: readonly (readonly [string, string | null])[];
  readonly totalBytes: number;
  readonly nextIno: number;
};

function changedKeys<K, V>(before: ReadonlyMap<K, V>, after: ReadonlyMap<K, V>): [K, V | null][] {
  const out: [K, V | null][] = [];
  for (const [k, v] of after) if (before.get(k) !== v) out.push([k, v]);
  for (const k of before.keys()) if (!after.has(k)) out.push([k, null]);
  return out;
}

/**
 * The exact difference of two states (nodes compared by identity: a transaction shares unchanged nodes).
 * @param before the state a step started from
 * @param after the state it committed
 * @returns the delta
 */
export function workspaceDelta(before: FsState, after: FsState): WorkspaceDelta {
  const dirs: [string, boolean][] = [];
  for (const d of after.dirs) if (!before.dirs.has(d)) dirs.push([d, true]);
  for (const d of before.dirs) if (!after.dirs.has(d)) dirs.push([d, false]);
  return { files: changedKeys(before.files, after.files), inodes: changedKeys(before.inodes, after.inodes), dirs, links: changedKeys(before.links, after.links), totalBytes: after.totalBytes, nextIno: after.nextIno };
}

/**
 * The state a step ended with, from the state it started from and its delta.
 * @param before the state the step started from (not changed)
 * @param d its delta
 * @returns a new state
 */
export function applyWorkspaceDelta(before: FsState, d: WorkspaceDelta): FsState {
  const s = cloneState(before);
  for (const [k, v] of d.files) {
    if (v === null) s.files.delete(k);
    else s.files.set(k, v);
  }
  for (const [k, v] of d.inodes) {
    if (v === null) s.inodes.delete(k);
    else s.inodes.set(k, v);
  }
  for (const [k, v] of d.dirs) {
    if (v) s.dirs.add(k);
    else s.dirs.delete(k);
  }
  for (const [k, v] of d.links) {
    if (v === null) s.links.delete(k);
    else s.links.set(k, v);
  }
  s.totalBytes = d.totalBytes;
  s.nextIno = d.nextIno;
  return s;
}

/** Remove whatever is at `p` (a directory with everything below it). */
function removeAt(s: FsState, p: string): void {
  if (s.files.has(p)) dropFile(s, p);
  else if (s.links.has(p)) dropLink(s, p);
  else if (s.dirs.has(p)) {
    const below = `${p}/`;
    for (const f of [...s.files.keys()]) if (f.startsWith(below)) dropFile(s, f);
    for (const l of [...s.links.keys()]) if (l.startsWith(below)) dropLink(s, l);
    for (const d of [...s.dirs]) if (d === p || d.startsWith(below)) s.dirs.delete(d);
  }
}

/** Make `p` a directory, with its parents (anything else in the way is removed). */
function ensureDir(s: FsState, p: string): void {
  for (const d of [...ancestorPaths(p), p]) {
    if (s.dirs.has(d)) continue;
    removeAt(s, d);
    s.dirs.add(d);
  }
}

function ensureParents(s: FsState, p: string): void {
  const parents = ancestorPaths(p);
  if (parents.length > 0) ensureDir(s, parents[parents.length - 1]!);
}

/**
 * Put the changes a step made (from `before` to `after`) onto another state, path by path (see the module notes).
 * @param target the state to change (not changed: a new state is returned)
 * @param before the state the step started from
 * @param after the state it committed
 * @returns the merged state
 */
export function mergeWorkspaceChanges(target: FsState, before: FsState, after: FsState): FsState {
  const s = cloneState(target);
  const removed = [
    ...[...before.files.keys()].filter((p) => !after.files.has(p)),
    ...[...before.links.keys()].filter((p) => !after.links.has(p)),
    ...[...before.dirs].filter((p) => !after.dirs.has(p)),
  ].sort(byCodeUnits).reverse();
  for (const p of removed) removeAt(s, p);
  for (const p of [...after.dirs].filter((d) => !before.dirs.has(d)).sort(byCodeUnits)) ensureDir(s, p);
  const nodeOf = (st: FsState, p: string): FileNode | undefined => st.inodes.get(st.files.get(p) ?? -1);
  const files = [...after.files.keys()].filter((p) => before.files.get(p) !== after.files.get(p) || nodeOf(before, p) !== nodeOf(after, p));
  const links = [...after.links.keys()].filter((p) => before.links.get(p) !== after.links.get(p));
  const mine = new Map<number, string>(); // node number in `after` → the first path given it here
  for (const p of [...files, ...links].sort(byCodeUnits)) {
    removeAt(s, p);
    ensureParents(s, p);
    const target = after.links.get(p);
    if (target !== undefined) {
      putLink(s, p, target);
      continue;
    }
    const ino = after.files.get(p)!;
    const first = mine.get(ino);
    if (first !== undefined && s.files.has(first)) {
      const shared = s.files.get(first)!;
      const node = s.inodes.get(shared)!;
      s.inodes.set(shared, { bytes: node.bytes, nlink: node.nlink + 1 });
      s.files.set(p, shared);
    } else {
      putFile(s, p, after.inodes.get(ino)!.bytes);
      mine.set(ino, p);
    }
  }
  return s;
}
