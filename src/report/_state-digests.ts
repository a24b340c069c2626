/**
 * Digests and differences of the states a report steps through (`step-states.ts`, `_replayed-states.ts`): a file's
 * SHA-256 (once per byte array), the workspace digest of `conformance/HASHING.md` "The workspace", the memory digest
 * of `result.json` `session.memoryAfter`, and what changed from one workspace state to the next. Internal to
 * `src/report/`.
 * @module
 */
import { canonicalize, sha256Hex } from "../canonical/mod.ts";
import { snapshotDigest } from "../sandbox/mod.ts";
import type { WorkspaceChanges } from "./_state-types.ts";

/** A workspace state: regular files by path, and symbolic links (path → target). */
export type Snapshot = { files: ReadonlyMap<string, Uint8Array>; links: ReadonlyMap<string, string> };

/** Each file's SHA-256, once per byte array (a state shares the byte arrays of the state before it). */
const hashes = new WeakMap<Uint8Array, string>();

/**
 * A file's SHA-256, computed once per byte array.
 * @param bytes the content
 * @returns 64 hex digits
 * @example fileSha256(new Uint8Array()) // "e3b0c442…"
 */
export function fileSha256(bytes: Uint8Array): string {
  let h = hashes.get(bytes);
  if (h === undefined) hashes.set(bytes, (h = sha256Hex(bytes)));
  return h;
}

/**
 * Order strings by UTF-16 code units (as the engine orders paths and keys).
 * @param a one
 * @param b the other
 * @returns -1, 0 or 1
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * What changed from one snapshot to the next (files by content, links by target).
 * @param a the state before
 * @param b the state after
 * @returns the paths added, removed and changed, and how many stayed the same
 */
export function changesBetween(a: Snapshot, b: Snapshot): WorkspaceChanges {
  const out: WorkspaceChanges = { added: [], removed: [], changed: [], unchanged: 0 };
  const key = (s: Snapshot, p: string): string | undefined => {
    const f = s.files.get(p);
    return f !== undefined ? `file:${fileSha256(f)}` : s.links.has(p) ? `link:${s.links.get(p)!}` : undefined;
  };
  const paths = new Set([...a.files.keys(), ...a.links.keys(), ...b.files.keys(), ...b.links.keys()]);
  for (const path of [...paths].sort(byCodeUnits)) {
    const p = key(a, path);
    const q = key(b, path);
    if (p === undefined) out.added.push(path);
    else if (q === undefined) out.removed.push(path);
    else if (p !== q) out.changed.push(path);
    else out.unchanged++;
  }
  return out;
}

/**
 * The workspace digest of a snapshot (`conformance/HASHING.md` "The workspace").
 * @param w the files and links
 * @returns 64 hex digits
 * @example workspaceDigest({ files: new Map(), links: new Map() }) // SHA-256 of ""
 */
export function workspaceDigest(w: Snapshot): string {
  const entries = [
    ...[...w.files].map(([path, bytes]) => ({ path, size: bytes.length, sha256: fileSha256(bytes) })),
    ...[...w.links].map(([path, target]) => ({ path, size: 0, sha256: "", kind: "symlink" as const, target })),
  ];
  return snapshotDigest(entries.sort((a, b) => byCodeUnits(a.path, b.path)));
}

/**
 * The digest of a memory store as `result.json` `session.memoryAfter` records it.
 * @param m key → canonical value text
 * @returns 64 hex digits
 */
export function memoryDigestOf(m: ReadonlyMap<string, string>): string {
  return sha256Hex(canonicalize([...m].sort((a, b) => byCodeUnits(a[0], b[0]))));
}
