/**
 * Internal state, limits, errors and helpers of the virtual workspace (see `workspace.ts` for the model).
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { sha256Hex } from "../../canonical/mod.ts";
import { displayPath } from "./path.ts";

/** Access granted on a workspace root (the pack's `capabilities.permissions` applied to one resource). */
export type WorkspaceAccess = "read" | "write" | "readwrite";

/** One declared resource: a root folder of the workspace, its access, and the files it starts with. */
export type WorkspaceResource = {
  /** Folder inside the workspace, e.g. `"data"` or `"inputs/csv"`; not the root, not `"temp"`. */
  root: string;
  /** What tools may do under `root`. */
  access: WorkspaceAccess;
  /** Initial files, keyed by path relative to `root`. The bytes are copied. */
  files?: Record<string, Uint8Array>;
};

/** Limits of a workspace; each is a positive safe integer. */
export type WorkspaceOptions = {
  /** Largest file, in bytes (default 64 MiB). */
  maxFileBytes?: number;
  /** Largest total of all file sizes (and link targets), in bytes (default 256 MiB). */
  maxTotalBytes?: number;
  /** Most entries (files, directories and links, root excluded) (default 100 000). */
  maxEntries?: number;
};

/** Kind of a directory entry. */
export type WorkspaceEntryType = "file" | "dir" | "symlink";

/** One entry of a directory listing. `size` is the file's byte length, 0 for a directory, the target's UTF-8 length for a link. */
export type WorkspaceEntry = { name: string; type: WorkspaceEntryType; size: number };

/** What `stat` reports. */
export type WorkspaceStat = { type: "file" | "dir"; size: number };

/**
 * What `lstat` reports: the entry itself, a link not followed. `size` is the target's UTF-8 length for a link;
 * `ino` identifies a file's content across its hard links (null for directories and links); `nlink` is the number
 * of names of a file (1 for directories and links).
 */
export type WorkspaceLstat = { type: WorkspaceEntryType; size: number; ino: number | null; nlink: number };

/**
 * One entry of a snapshot: a regular file (`size` and `sha256` of its bytes), or, only when links are asked for, a
 * symbolic link (`kind: "symlink"`, its `target`, and `size` and `sha256` of the target's UTF-8 bytes). File entries
 * carry no `kind`, so snapshots of workspaces without links are exactly what they were before links existed.
 */
export type SnapshotEntry = { path: string; size: number; sha256: string; kind?: "symlink"; target?: string };

/** Options of `remove`. */
export type RemoveOptions = {
  /** Remove a non-empty directory with everything below it. */
  recursive?: boolean;
};

/** POSIX-style reasons for ordinary (non-policy) failures. */
export type WorkspaceErrno = "ENOENT" | "ENOTDIR" | "EISDIR" | "ENOTEMPTY" | "EEXIST" | "ELOOP" | "EINVAL" | "EPERM" | "EILSEQ" | "ENAMETOOLONG";

/** Name of the always-`readwrite` root of a confined workspace (seed 002 `write_temp`). */
export const TEMP_ROOT = "temp";
/** Default `maxFileBytes`: 64 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Default `maxTotalBytes`: 256 MiB. */
export const DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024;
/** Default `maxEntries`. */
export const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * An ordinary file-system failure (missing entry, wrong kind of entry, non-empty directory, existing entry).
 * Code `EXEC_RESOURCE_UNAVAILABLE`; `errno` lets a WASI shim answer with the matching errno.
 * @example
 * try { ws.read("missing.txt") } catch (e) { if (e instanceof WorkspaceError && e.errno === "ENOENT") … }
 */
export class WorkspaceError extends ReachError {
  /** The POSIX reason. */
  readonly errno: WorkspaceErrno;

  /**
   * @param errno the POSIX reason
   * @param operation the host operation, e.g. `"fs.read"`
   * @param path the normalised path
   * @param message what went wrong and how to fix it
   */
  constructor(errno: WorkspaceErrno, operation: string, path: string, message: string) {
    super("EXEC_RESOURCE_UNAVAILABLE", `${operation} ${JSON.stringify(displayPath(path))}: ${message}`, {
      details: { errno, operation, path: displayPath(path) },
    });
    this.name = "WorkspaceError";
    this.errno = errno;
  }
}

/**
 * The content of a regular file and how many names it has (hard links share one node). Immutable: a change makes a
 * new node, so that a transaction can share nodes with the state it was copied from.
 */
export type FileNode = { readonly bytes: Uint8Array; readonly nlink: number };

/**
 * The entry tables. Never mutated once a transaction may share them (see `StepTransaction`). `files` maps each file
 * name to its node number in `inodes`; node numbers come from `nextIno`, in creation order, so they are the same on
 * every run that makes the same calls. `totalBytes` counts each node once, and the UTF-8 bytes of each link target.
 */
export type FsState = {
  files: Map<string, number>;
  inodes: Map<number, FileNode>;
  dirs: Set<string>;
  links: Map<string, string>;
  totalBytes: number;
  nextIno: number;
};

export type Mount = { root: string; access: WorkspaceAccess };
export type Limits = { maxFileBytes: number; maxTotalBytes: number; maxEntries: number };
export type Config = { limits: Limits; mounts: readonly Mount[] | null };
export type Kind = "file" | "dir" | "symlink" | null;

export const encoder = new TextEncoder();
export const hashCache = new WeakMap<Uint8Array, string>();

export function emptyState(): FsState {
  return { files: new Map(), inodes: new Map(), dirs: new Set(), links: new Map(), totalBytes: 0, nextIno: 1 };
}

export function cloneState(s: FsState): FsState {
  return {
    files: new Map(s.files),
    inodes: new Map(s.inodes),
    dirs: new Set(s.dirs),
    links: new Map(s.links),
    totalBytes: s.totalBytes,
    nextIno: s.nextIno,
  };
}

export function kindOf(s: FsState, path: string): Kind {
  if (path === "" || s.dirs.has(path)) return "dir";
  if (s.files.has(path)) return "file";
  if (s.links.has(path)) return "symlink";
  return null;
}

/** The bytes of the file named `path` (which must be a file). */
export function fileBytes(s: FsState, path: string): Uint8Array {
  return s.inodes.get(s.files.get(path)!)!.bytes;
}

/** Set the content of file `path`, keeping its node (and so its other names) when it exists. */
export function putFile(m: FsState, path: string, bytes: Uint8Array): void {
  const ino = m.files.get(path);
  if (ino === undefined) {
    m.files.set(path, m.nextIno);
    m.inodes.set(m.nextIno++, { bytes, nlink: 1 });
    m.totalBytes += bytes.length;
    return;
  }
  const node = m.inodes.get(ino)!;
  m.totalBytes += bytes.length - node.bytes.length;
  m.inodes.set(ino, { bytes, nlink: node.nlink });
}

/** Remove the name `path` of a file; the node goes when its last name does. */
export function dropFile(m: FsState, path: string): void {
  const ino = m.files.get(path)!;
  m.files.delete(path);
  const node = m.inodes.get(ino)!;
  if (node.nlink > 1) {
    m.inodes.set(ino, { bytes: node.bytes, nlink: node.nlink - 1 });
  } else {
    m.inodes.delete(ino);
    m.totalBytes -= node.bytes.length;
  }
}

/** Make the link `path` (its target's UTF-8 bytes count towards `totalBytes`). */
export function putLink(m: FsState, path: string, target: string): void {
  m.links.set(path, target);
  m.totalBytes += encoder.encode(target).length;
}

/** Remove the link `path`. */
export function dropLink(m: FsState, path: string): void {
  m.totalBytes -= encoder.encode(m.links.get(path)!).length;
  m.links.delete(path);
}

/** Give the file `existing` another name. */
export function addName(m: FsState, existing: string, path: string): void {
  const ino = m.files.get(existing)!;
  const node = m.inodes.get(ino)!;
  m.inodes.set(ino, { bytes: node.bytes, nlink: node.nlink + 1 });
  m.files.set(path, ino);
}

export function entryCount(s: FsState): number {
  return s.files.size + s.dirs.size + s.links.size;
}

export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function fileHash(bytes: Uint8Array): string {
  let h = hashCache.get(bytes);
  if (h === undefined) {
    h = sha256Hex(bytes);
    hashCache.set(bytes, h);
  }
  return h;
}

export function checkLimit(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`"${name}" expected a positive safe integer, got ${String(value)}`);
  }
  return value;
}

export function diskExceeded(op: string, path: string, limit: "file" | "total" | "entries", max: number, attempted: number): ReachError {
  const what = limit === "file" ? "file size" : limit === "total" ? "total workspace size" : "number of entries";
  return new ReachError(
    "EXEC_DISK_EXCEEDED",
    `${op} ${JSON.stringify(displayPath(path))}: the ${what} would be ${attempted}, over the limit of ${max}; ` +
      `write less data or raise the workspace limit`,
    { details: { operation: op, path: displayPath(path), limit, max, attempted } },
  );
}

export function loopError(op: string, path: string, max: number): WorkspaceError {
  return new WorkspaceError("ELOOP", op, path, `more than ${max} symbolic links on the way; a link points back at itself`);
}
