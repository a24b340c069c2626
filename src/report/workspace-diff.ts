/**
 * What changed between two workspace snapshots (before and after a run, or two runs' workspaces): paths added,
 * removed and changed, files and symbolic links alike (a link compares by its target text).
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import type { WorkspaceChanges, WorkspaceView } from "./_state-types.ts";

export type { WorkspaceChanges } from "./_state-types.ts";

function flatten(ws: WorkspaceView): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, bytes] of ws.files) out.set(path, `file:${sha256Hex(bytes)}`);
  for (const [path, target] of ws.links) out.set(path, `link:${target}`);
  return out;
}

/**
 * Compare two workspace snapshots.
 * @param a the first (before) snapshot; null counts as empty
 * @param b the second (after) snapshot
 * @returns the added, removed and changed paths, and how many are the same
 * @example workspaceChanges(view.workspace.before, view.workspace.after).added // ["out/index.json", …]
 */
export function workspaceChanges(a: WorkspaceView | null, b: WorkspaceView): WorkspaceChanges {
  const x = a === null ? new Map<string, string>() : flatten(a);
  const y = flatten(b);
  const out: WorkspaceChanges = { added: [], removed: [], changed: [], unchanged: 0 };
  for (const path of [...new Set([...x.keys(), ...y.keys()])].sort()) {
    const p = x.get(path);
    const q = y.get(path);
    if (p === undefined) out.added.push(path);
    else if (q === undefined) out.removed.push(path);
    else if (p !== q) out.changed.push(path);
    else out.unchanged++;
  }
  return out;
}
