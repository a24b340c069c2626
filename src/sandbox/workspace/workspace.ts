/**
 * The virtual workspace: an in-memory file system seeded from a run's declared resources, with per-step staging
 * (issue 3 "Virtual workspace"; seed 003 §4.2 "Resource Boundaries" and "Permission Checks", §4.3 "No Partial
 * Effects").
 *
 * Model
 * - Entries are regular files (bytes), directories and symbolic-link records, keyed by normalised path
 *   (see `path.ts`); the root `""` is always a directory. Stored bytes are never shared with callers: `write`
 *   copies in, `read` copies out.
 * - Symbolic links exist only as records (e.g. copied in from a host directory or made by a WASI guest). They are
 *   never followed: any operation whose path passes through a link, or ends at one (except `remove`, which removes
 *   the link itself), is a `RESOURCE_ACCESS` violation. This refuses links to `/`, links that leave the workspace
 *   and link loops alike, without having to resolve them.
 * - A workspace made by {@link Workspace.fromResources} is confined to its declared roots, each with an access of
 *   `read`, `write` or `readwrite`, plus a `temp` root that is always `readwrite` (seed 002 `write_temp`). A path
 *   outside every root is `RESOURCE_ACCESS`; an operation the root's access does not grant is `PERMISSION_DENIED`.
 *   Reading covers `read`, `list`, `stat` and `exists`; writing covers `write`, `mkdir`, `remove` and `symlink`.
 *   When roots nest, the longest matching root decides. The directories above a root (the workspace root
 *   included) can be listed and stat'ed, never written; a root itself cannot be removed. `new Workspace()` makes an
 *   unconfined workspace (everything `readwrite`), used by `reach-wasm wasi --dir` and by tests.
 * - Ordinary file-system failures (missing entry, file where a directory is needed, …) are {@link WorkspaceError}s
 *   (`EXEC_RESOURCE_UNAVAILABLE` with a POSIX `errno`), so a WASI shim can map them to errno values.
 * - Limits: bytes per file, total bytes of all files, and number of entries; exceeding one is
 *   `EXEC_DISK_EXCEEDED`. Every operation validates completely before it changes anything, so a refused
 *   operation leaves no trace.
 *
 * Staging (seed 003 §4.3): {@link Workspace.beginStep} opens a {@link StepTransaction}, a view with the same API
 * whose writes are invisible to the base until `commit()`, which installs them in one assignment; `rollback()`
 * drops them. The transaction copies the entry tables on its first write (copy-on-write of the tables; file bytes
 * are shared, as they are immutable once stored). While a transaction is open the base can be read but not
 * written, and a second `beginStep()` is a `PROTO_SEQUENCE_ERROR`. A transaction that raised a `POLICY_VIOLATION`
 * cannot be committed: the step must halt and roll back (§4.3).
 *
 * Snapshot and digest: `snapshot()` lists regular files only — `{ path, size, sha256 }`, sorted by path in
 * UTF-16 code-unit order — because capsules hold regular files only (ARCHITECTURE "Capsule"); empty directories
 * and link records are not part of it. `digest()` is `sha256Hex(utf8(L))` where `L` is the concatenation, in
 * snapshot order, of `path + "\0" + sha256hex + "\n"` per file (paths cannot contain NUL or newline, so the
 * listing is unambiguous). The digest of an empty workspace is the SHA-256 of the empty string.
 * @module
 */
import { ReachError, policyViolation } from "../../protocol/errors.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { ancestorPaths, displayPath, isWithin, normalizeWorkspacePath, parentPath, pathViolation } from "./path.ts";

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
  /** Largest total of all file sizes, in bytes (default 256 MiB). */
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

/** One file of a snapshot. */
export type SnapshotEntry = { path: string; size: number; sha256: string };

/** Options of `remove`. */
export type RemoveOptions = {
  /** Remove a non-empty directory with everything below it. */
  recursive?: boolean;
};

/** POSIX-style reasons for ordinary (non-policy) failures. */
export type WorkspaceErrno = "ENOENT" | "ENOTDIR" | "EISDIR" | "ENOTEMPTY" | "EEXIST";

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

/** The entry tables. Never mutated once a transaction may share them (see `StepTransaction`). */
type FsState = {
  files: Map<string, Uint8Array>;
  dirs: Set<string>;
  links: Map<string, string>;
  totalBytes: number;
};

type Mount = { root: string; access: WorkspaceAccess };
type Limits = { maxFileBytes: number; maxTotalBytes: number; maxEntries: number };
type Config = { limits: Limits; mounts: readonly Mount[] | null };
type Kind = "file" | "dir" | "symlink" | null;

const encoder = new TextEncoder();
const hashCache = new WeakMap<Uint8Array, string>();

function emptyState(): FsState {
  return { files: new Map(), dirs: new Set(), links: new Map(), totalBytes: 0 };
}

function cloneState(s: FsState): FsState {
  return { files: new Map(s.files), dirs: new Set(s.dirs), links: new Map(s.links), totalBytes: s.totalBytes };
}

function kindOf(s: FsState, path: string): Kind {
  if (path === "" || s.dirs.has(path)) return "dir";
  if (s.files.has(path)) return "file";
  if (s.links.has(path)) return "symlink";
  return null;
}

function entryCount(s: FsState): number {
  return s.files.size + s.dirs.size + s.links.size;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function fileHash(bytes: Uint8Array): string {
  let h = hashCache.get(bytes);
  if (h === undefined) {
    h = sha256Hex(bytes);
    hashCache.set(bytes, h);
  }
  return h;
}

function checkLimit(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`"${name}" expected a positive safe integer, got ${String(value)}`);
  }
  return value;
}

function diskExceeded(op: string, path: string, limit: "file" | "total" | "entries", max: number, attempted: number): ReachError {
  const what = limit === "file" ? "file size" : limit === "total" ? "total workspace size" : "number of entries";
  return new ReachError(
    "EXEC_DISK_EXCEEDED",
    `${op} ${JSON.stringify(displayPath(path))}: the ${what} would be ${attempted}, over the limit of ${max}; ` +
      `write less data or raise the workspace limit`,
    { details: { operation: op, path: displayPath(path), limit, max, attempted } },
  );
}

function linkViolation(op: string, path: string): ReachError {
  return pathViolation(op, path, "symbolic links are never followed inside the workspace");
}

/**
 * The operations shared by a {@link Workspace} and a {@link StepTransaction}. Not constructed directly.
 */
export abstract class WorkspaceView {
  /** The tables to read; throws when the view is closed. */
  protected abstract _state(): FsState;
  /** Called before any validation of a writing operation; throws when writing is not allowed now. */
  protected abstract _beginWrite(): void;
  /** The tables to mutate (a transaction copies them on first use). */
  protected abstract _mutable(): FsState;
  /** Limits and mounts. */
  protected abstract _config(): Config;
  /** Told about every error an operation throws (a transaction remembers policy violations). */
  protected _failed(_err: unknown): void {}

  #guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this._failed(err);
      throw err;
    }
  }

  /** Check the root's access for `path` (seed 003 §4.2 "Resource Boundaries", "Permission Checks"). */
  #authorize(op: string, path: string, want: "read" | "write"): void {
    const mounts = this._config().mounts;
    if (mounts === null) return;
    const mount = mounts.find((m) => isWithin(path, m.root)); // mounts are sorted longest root first
    if (mount === undefined) {
      if (want === "read" && mounts.some((m) => isWithin(m.root, path))) return; // a directory above a root
      throw pathViolation(op, path, "the path is outside every declared resource root");
    }
    const granted = mount.access === "readwrite" || mount.access === want;
    if (!granted) {
      const shown = displayPath(path);
      throw policyViolation(
        "PERMISSION_DENIED",
        `${op}:${shown}`,
        `${op} refused path ${JSON.stringify(shown)}: the resource root "${mount.root}" is "${mount.access}" only; ` +
          `declare it with "${want === "write" ? "write" : "read"}" permission in reach.json if the tool needs it`,
        { path: shown, root: mount.root, access: mount.access, reason: `${want} access not granted` },
      );
    }
  }

  /**
   * Check the ancestors of `path`: a link is a violation, a file is ENOTDIR, a missing one is reported.
   * @returns the index of the first missing ancestor in `ancestorPaths(path)`, or -1 when all exist
   */
  #walk(s: FsState, op: string, path: string): number {
    const ancestors = ancestorPaths(path);
    for (let i = 0; i < ancestors.length; i++) {
      const a = ancestors[i]!;
      const k = kindOf(s, a);
      if (k === "symlink") throw linkViolation(op, path);
      if (k === "file") throw new WorkspaceError("ENOTDIR", op, path, `"${displayPath(a)}" is a file, not a directory`);
      if (k === null) return i;
    }
    return -1;
  }

  /** Kind of an existing entry reached without following links; missing ancestors give null. */
  #lookup(s: FsState, op: string, path: string, followFinal: boolean): Kind {
    if (this.#walk(s, op, path) >= 0) return null;
    const k = kindOf(s, path);
    if (k === "symlink" && followFinal) throw linkViolation(op, path);
    return k;
  }

  /** Normalise, accepting a trailing `/`; return the path and whether it had one. */
  #dirPath(op: string, path: string): [string, boolean] {
    const p = normalizeWorkspacePath(path, { directory: true, operation: op });
    return [p, p !== "" && path.endsWith("/")];
  }

  #checkEntries(s: FsState, op: string, path: string, added: number): void {
    const max = this._config().limits.maxEntries;
    const n = entryCount(s) + added;
    if (added > 0 && n > max) throw diskExceeded(op, path, "entries", max, n);
  }

  /**
   * Read a whole file.
   * @param path a workspace path (relative, `/`-separated)
   * @returns a copy of the file's bytes
   * @throws ReachError `POLICY_VIOLATION` for a refused path (`RESOURCE_ACCESS`) or a root without read access
   *   (`PERMISSION_DENIED`); WorkspaceError `ENOENT`, `ENOTDIR` or `EISDIR`
   * @example new TextDecoder().decode(ws.read("data/in.txt"))
   */
  read(path: string): Uint8Array {
    return this.#guard(() => {
      const op = "fs.read";
      const p = normalizeWorkspacePath(path, { operation: op });
      this.#authorize(op, p, "read");
      const s = this._state();
      const k = this.#lookup(s, op, p, true);
      if (k === null) throw new WorkspaceError("ENOENT", op, p, "no such file");
      if (k === "dir") throw new WorkspaceError("EISDIR", op, p, "is a directory, not a file");
      return s.files.get(p)!.slice();
    });
  }

  /**
   * Create or replace a file, creating missing parent directories.
   * @param path a workspace path naming a file (no trailing `/`)
   * @param bytes the new content (copied)
   * @throws TypeError when `bytes` is not a Uint8Array
   * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS` / `PERMISSION_DENIED`); `EXEC_DISK_EXCEEDED` over a
   *   limit; `PROTO_SEQUENCE_ERROR` on a base with an open step or a closed transaction; WorkspaceError `ENOTDIR`
   *   or `EISDIR`
   * @example ws.write("temp/out.json", new TextEncoder().encode("{}"))
   */
  write(path: string, bytes: Uint8Array): void {
    this.#guard(() => {
      const op = "fs.write";
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`"bytes" expected a Uint8Array, got ${typeof bytes}`);
      this._beginWrite();
      const p = normalizeWorkspacePath(path, { operation: op });
      if (p === "") throw new WorkspaceError("EISDIR", op, p, "the workspace root is a directory");
      this.#authorize(op, p, "write");
      const s = this._state();
      const firstMissing = this.#walk(s, op, p);
      const k = firstMissing >= 0 ? null : kindOf(s, p);
      if (k === "symlink") throw linkViolation(op, p);
      if (k === "dir") throw new WorkspaceError("EISDIR", op, p, "is a directory; choose a file name inside it");
      const { maxFileBytes, maxTotalBytes } = this._config().limits;
      if (bytes.length > maxFileBytes) throw diskExceeded(op, p, "file", maxFileBytes, bytes.length);
      const old = k === "file" ? s.files.get(p)!.length : 0;
      const total = s.totalBytes - old + bytes.length;
      if (total > maxTotalBytes) throw diskExceeded(op, p, "total", maxTotalBytes, total);
      const newDirs = firstMissing >= 0 ? ancestorPaths(p).slice(firstMissing) : [];
      this.#checkEntries(s, op, p, newDirs.length + (k === null ? 1 : 0));
      const m = this._mutable();
      for (const d of newDirs) m.dirs.add(d);
      m.files.set(p, bytes.slice());
      m.totalBytes = total;
    });
  }

  /**
   * List a directory, sorted by name in UTF-16 code-unit order (deterministic on every runtime).
   * @param dir a workspace path naming a directory (`""` or `"."` for the root; a trailing `/` is allowed)
   * @returns the entries directly inside `dir`
   * @throws ReachError `POLICY_VIOLATION`; WorkspaceError `ENOENT` or `ENOTDIR`
   * @example ws.list("data").map((e) => e.name) // ["a.txt", "b.txt"]
   */
  list(dir: string): WorkspaceEntry[] {
    return this.#guard(() => {
      const op = "fs.list";
      const [p] = this.#dirPath(op, dir);
      this.#authorize(op, p, "read");
      const s = this._state();
      const k = this.#lookup(s, op, p, true);
      if (k === null) throw new WorkspaceError("ENOENT", op, p, "no such directory");
      if (k === "file") throw new WorkspaceError("ENOTDIR", op, p, "is a file, not a directory");
      const prefix = p === "" ? "" : p + "/";
      const out: WorkspaceEntry[] = [];
      const take = (path: string, type: WorkspaceEntryType, size: number): void => {
        if (path !== "" && parentPath(path) === p) out.push({ name: path.slice(prefix.length), type, size });
      };
      for (const [path, bytes] of s.files) take(path, "file", bytes.length);
      for (const path of s.dirs) take(path, "dir", 0);
      for (const [path, target] of s.links) take(path, "symlink", encoder.encode(target).length);
      return out.sort((a, b) => byCodeUnits(a.name, b.name));
    });
  }

  /**
   * Type and size of a file or directory. A trailing `/` on a file is a violation.
   * @param path a workspace path
   * @returns `{ type, size }` (size 0 for a directory)
   * @throws ReachError `POLICY_VIOLATION` (a link on the way or at the end is `RESOURCE_ACCESS`); WorkspaceError
   *   `ENOENT` or `ENOTDIR`
   * @example ws.stat("data/in.txt") // { type: "file", size: 12 }
   */
  stat(path: string): WorkspaceStat {
    return this.#guard(() => {
      const op = "fs.stat";
      const [p, slash] = this.#dirPath(op, path);
      this.#authorize(op, p, "read");
      const s = this._state();
      const k = this.#lookup(s, op, p, true);
      if (k === null) throw new WorkspaceError("ENOENT", op, p, "no such file or directory");
      if (k === "dir") return { type: "dir", size: 0 };
      if (slash) throw pathViolation(op, path, "a trailing '/' names a directory, but this is a file");
      return { type: "file", size: s.files.get(p)!.length };
    });
  }

  /**
   * Whether a file or directory exists. Refused paths still throw: probing is access.
   * @param path a workspace path
   * @returns true when `stat` would succeed
   * @throws ReachError `POLICY_VIOLATION` as for `stat`
   * @example ws.exists("temp") // true
   */
  exists(path: string): boolean {
    try {
      this.stat(path);
      return true;
    } catch (err) {
      if (err instanceof WorkspaceError) return false;
      throw err;
    }
  }

  /**
   * Create a directory and any missing parents (`mkdir -p`); an existing directory is left as it is.
   * @param path a workspace path (a trailing `/` is allowed)
   * @throws ReachError `POLICY_VIOLATION`; `EXEC_DISK_EXCEEDED`; `PROTO_SEQUENCE_ERROR`; WorkspaceError `ENOTDIR` or
   *   `EEXIST` (a file is in the way)
   * @example ws.mkdir("temp/a/b")
   */
  mkdir(path: string): void {
    this.#guard(() => {
      const op = "fs.mkdir";
      this._beginWrite();
      const [p] = this.#dirPath(op, path);
      this.#authorize(op, p, "write");
      const s = this._state();
      const firstMissing = this.#walk(s, op, p);
      const k = firstMissing >= 0 ? null : kindOf(s, p);
      if (k === "symlink") throw linkViolation(op, p);
      if (k === "file") throw new WorkspaceError("EEXIST", op, p, "a file with this name exists");
      if (k === "dir") return;
      const newDirs = [...(firstMissing >= 0 ? ancestorPaths(p).slice(firstMissing) : []), p];
      this.#checkEntries(s, op, p, newDirs.length);
      const m = this._mutable();
      for (const d of newDirs) m.dirs.add(d);
    });
  }

  /**
   * Remove a file, a link record (the link itself, never its target), or a directory (empty, or any with
   * `recursive`). The workspace root and declared resource roots (or directories holding one) cannot be removed.
   * @param path a workspace path
   * @param options `recursive: true` to remove a non-empty directory
   * @throws ReachError `POLICY_VIOLATION` (removing a root is `PERMISSION_DENIED`); `PROTO_SEQUENCE_ERROR`;
   *   WorkspaceError `ENOENT`, `ENOTDIR` or `ENOTEMPTY`
   * @example ws.remove("temp/scratch", { recursive: true })
   */
  remove(path: string, options: RemoveOptions = {}): void {
    this.#guard(() => {
      const op = "fs.remove";
      this._beginWrite();
      const [p, slash] = this.#dirPath(op, path);
      const mounts = this._config().mounts;
      if (p === "" || (mounts !== null && mounts.some((m) => isWithin(m.root, p)))) {
        const shown = displayPath(p);
        throw policyViolation(
          "PERMISSION_DENIED",
          `${op}:${shown}`,
          `${op} refused path ${JSON.stringify(shown)}: the workspace root and declared resource roots cannot be ` +
            `removed; remove the entries inside instead`,
          { path: shown, reason: "root" },
        );
      }
      this.#authorize(op, p, "write");
      const s = this._state();
      const k = this.#lookup(s, op, p, false);
      if (k === null) throw new WorkspaceError("ENOENT", op, p, "no such file or directory");
      if (k !== "dir" && slash) throw pathViolation(op, path, "a trailing '/' names a directory, but this is not one");
      if (k === "file") {
        const m = this._mutable();
        m.totalBytes -= m.files.get(p)!.length;
        m.files.delete(p);
        return;
      }
      if (k === "symlink") {
        this._mutable().links.delete(p);
        return;
      }
      const inside = (q: string): boolean => q.startsWith(p + "/");
      const nonEmpty = [...s.files.keys(), ...s.dirs, ...s.links.keys()].some(inside);
      if (nonEmpty && options.recursive !== true) {
        throw new WorkspaceError("ENOTEMPTY", op, p, "the directory is not empty; pass { recursive: true }");
      }
      const m = this._mutable();
      for (const [q, bytes] of m.files) {
        if (inside(q)) {
          m.totalBytes -= bytes.length;
          m.files.delete(q);
        }
      }
      for (const q of m.dirs) if (inside(q)) m.dirs.delete(q);
      for (const q of m.links.keys()) if (inside(q)) m.links.delete(q);
      m.dirs.delete(p);
    });
  }

  /**
   * Record a symbolic link. The record is kept (and listed) but never followed (see the module notes).
   * @param path a workspace path for the link; its parent directory must exist
   * @param target the link text, stored as given (at most 4096 UTF-8 bytes, no control characters)
   * @throws TypeError when `target` is not a string
   * @throws ReachError `POLICY_VIOLATION`; `EXEC_DISK_EXCEEDED`; `PROTO_SEQUENCE_ERROR`; WorkspaceError `ENOENT`,
   *   `ENOTDIR` or `EEXIST`
   * @example ws.symlink("temp/up", "..") // any later ws.read("temp/up/x") is refused
   */
  symlink(path: string, target: string): void {
    this.#guard(() => {
      const op = "fs.symlink";
      if (typeof target !== "string") throw new TypeError(`"target" expected a string, got ${typeof target}`);
      this._beginWrite();
      const p = normalizeWorkspacePath(path, { operation: op });
      if (p === "") throw new WorkspaceError("EEXIST", op, p, "the workspace root exists");
      // eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
      if (encoder.encode(target).length > 4096 || /[\u0000-\u001f\u007f]|\p{Surrogate}/u.test(target)) {
        throw pathViolation(op, target, "a link target must be at most 4096 bytes of printable text");
      }
      this.#authorize(op, p, "write");
      const s = this._state();
      if (this.#walk(s, op, p) >= 0) throw new WorkspaceError("ENOENT", op, p, "the parent directory does not exist");
      if (kindOf(s, p) !== null) throw new WorkspaceError("EEXIST", op, p, "an entry with this name exists");
      this.#checkEntries(s, op, p, 1);
      this._mutable().links.set(p, target);
    });
  }

  /**
   * The regular files, sorted by path in UTF-16 code-unit order, with size and SHA-256.
   * @returns one entry per file
   * @throws ReachError `PROTO_SEQUENCE_ERROR` on a closed transaction
   * @example ws.snapshot() // [{ path: "data/a.txt", size: 2, sha256: "…" }]
   */
  snapshot(): SnapshotEntry[] {
    return this.#guard(() => {
      const s = this._state();
      return [...s.files.keys()]
        .sort(byCodeUnits)
        .map((path) => {
          const bytes = s.files.get(path)!;
          return { path, size: bytes.length, sha256: fileHash(bytes) };
        });
    });
  }

  /**
   * SHA-256 of the canonical listing `path \0 sha256hex \n` over `snapshot()` (see the module notes).
   * @returns 64 lowercase hex digits
   * @throws ReachError `PROTO_SEQUENCE_ERROR` on a closed transaction
   * @example ws.digest() === before // nothing changed
   */
  digest(): string {
    return sha256Hex(this.snapshot().map((e) => `${e.path}\0${e.sha256}\n`).join(""));
  }

  /**
   * Total bytes of all files.
   * @returns the byte count
   * @example ws.bytesUsed() // 0 for an empty workspace
   */
  bytesUsed(): number {
    return this._state().totalBytes;
  }
}

const INSTALL = Symbol("install");
const RELEASE = Symbol("release");

/**
 * The run's workspace (the committed state). See the module notes for the model.
 * @example
 * const ws = Workspace.fromResources([{ root: "data", access: "read", files: { "in.txt": bytes } }]);
 * const step = ws.beginStep();
 * step.write("temp/out.txt", bytes);
 * step.commit();
 */
export class Workspace extends WorkspaceView {
  #state: FsState = emptyState();
  #config: Config;
  #open: StepTransaction | null = null;

  /**
   * An empty, unconfined workspace (every path `readwrite`); use {@link Workspace.fromResources} for a run.
   * @param options limits (bytes per file, total bytes, entries)
   * @throws RangeError when a limit is not a positive safe integer
   */
  constructor(options: WorkspaceOptions = {}) {
    super();
    this.#config = {
      mounts: null,
      limits: {
        maxFileBytes: checkLimit(options.maxFileBytes, "maxFileBytes", DEFAULT_MAX_FILE_BYTES),
        maxTotalBytes: checkLimit(options.maxTotalBytes, "maxTotalBytes", DEFAULT_MAX_TOTAL_BYTES),
        maxEntries: checkLimit(options.maxEntries, "maxEntries", DEFAULT_MAX_ENTRIES),
      },
    };
  }

  /**
   * A workspace confined to the declared resources plus the `temp` root (seed 003 §4.1 "capabilities.resources").
   * Initial files are placed without access checks (a read-only root can hold files) but within the limits.
   * @param resources the declared roots, their access and initial files
   * @param options limits
   * @returns the workspace
   * @throws TypeError when `resources` is malformed: a root that is the workspace root or `temp`, a duplicate
   *   root, an unknown access, `files` that is not a record of Uint8Array
   * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS`) for a refused root or file path;
   *   `EXEC_DISK_EXCEEDED`; WorkspaceError when files collide (`ENOTDIR`, `EISDIR`)
   * @example Workspace.fromResources([{ root: "data", access: "read", files: { "a.txt": new Uint8Array([1]) } }])
   */
  static fromResources(resources: readonly WorkspaceResource[], options: WorkspaceOptions = {}): Workspace {
    if (!Array.isArray(resources)) throw new TypeError(`"resources" expected an array`);
    const ws = new Workspace(options);
    const mounts: Mount[] = [{ root: TEMP_ROOT, access: "readwrite" }];
    for (const [i, r] of resources.entries()) {
      const where = `"resources[${i}]"`;
      if (typeof r !== "object" || r === null) throw new TypeError(`${where} expected an object`);
      if (r.access !== "read" && r.access !== "write" && r.access !== "readwrite") {
        throw new TypeError(`${where}.access expected "read", "write" or "readwrite", got ${String(r.access)}`);
      }
      const root = normalizeWorkspacePath(r.root, { directory: true, operation: "workspace.mount" });
      if (root === "") throw new TypeError(`${where}.root must name a folder, not the workspace root`);
      if (root === TEMP_ROOT) throw new TypeError(`${where}.root "temp" is reserved for the always-writable temp root`);
      if (mounts.some((m) => m.root === root)) throw new TypeError(`${where}.root "${root}" is declared twice`);
      mounts.push({ root, access: r.access });
    }
    mounts.sort((a, b) => b.root.length - a.root.length || byCodeUnits(a.root, b.root));
    for (const m of mounts) {
      for (const d of [...ancestorPaths(m.root), m.root]) {
        if (!ws.#state.dirs.has(d)) {
          ws.#state.dirs.add(d);
        }
      }
    }
    for (const [i, r] of resources.entries()) {
      const files: Record<string, Uint8Array> = r.files ?? {};
      if (typeof files !== "object" || files === null) throw new TypeError(`"resources[${i}].files" expected a record`);
      const root = normalizeWorkspacePath(r.root, { directory: true });
      for (const [rel, bytes] of Object.entries(files)) {
        const p = normalizeWorkspacePath(rel, { operation: "workspace.seed" });
        if (p === "") throw new TypeError(`"resources[${i}].files" has an empty file name`);
        ws.write(`${root}/${p}`, bytes); // still unconfined here: no access checks, same structure and limits
      }
    }
    ws.#config = { ...ws.#config, mounts };
    return ws;
  }

  /**
   * Open the staging transaction of one step (seed 003 §4.3 "No Partial Effects").
   * @returns the transaction; its writes reach this workspace only on `commit()`
   * @throws ReachError `PROTO_SEQUENCE_ERROR` when a transaction is already open
   * @example const step = ws.beginStep(); try { run(step); step.commit(); } catch (e) { step.rollback(); throw e; }
   */
  beginStep(): StepTransaction {
    if (this.#open !== null) {
      throw new ReachError("PROTO_SEQUENCE_ERROR", "a step transaction is already open; commit or roll it back first");
    }
    const tx = new StepTransaction(this, this.#state, this.#config);
    this.#open = tx;
    return tx;
  }

  /**
   * Whether a step transaction is open.
   * @returns true between `beginStep()` and its `commit()` / `rollback()`
   * @example ws.inStep() // false
   */
  inStep(): boolean {
    return this.#open !== null;
  }

  /** Used by StepTransaction.commit: install the staged tables (one assignment, so all or nothing). */
  [INSTALL](tx: StepTransaction, state: FsState): void {
    if (this.#open !== tx) throw new ReachError("PROTO_SEQUENCE_ERROR", "this transaction is not the open one");
    this.#state = state;
    this.#open = null;
  }

  /** Used by StepTransaction.rollback. */
  [RELEASE](tx: StepTransaction): void {
    if (this.#open === tx) this.#open = null;
  }

  protected _state(): FsState {
    return this.#state;
  }

  protected _beginWrite(): void {
    if (this.#open !== null) {
      throw new ReachError(
        "PROTO_SEQUENCE_ERROR",
        "the workspace has an open step transaction; write through the transaction, or commit or roll it back first",
      );
    }
  }

  protected _mutable(): FsState {
    return this.#state;
  }

  protected _config(): Config {
    return this.#config;
  }
}

/**
 * The staged view of one step: same API as the workspace; reads see the step's own writes.
 * @example
 * const step = ws.beginStep();
 * step.write("temp/x", bytes);
 * step.rollback(); // ws is exactly as before
 */
export class StepTransaction extends WorkspaceView {
  #base: Workspace;
  #baseState: FsState;
  #config: Config;
  #staged: FsState | null = null;
  #open = true;
  #violation: ReachError | null = null;

  /** Made by {@link Workspace.beginStep} only. */
  constructor(base: Workspace, baseState: FsState, config: Config) {
    super();
    this.#base = base;
    this.#baseState = baseState;
    this.#config = config;
  }

  /**
   * Whether the transaction can still be used.
   * @returns false after `commit()` or `rollback()`
   * @example step.isOpen() // true
   */
  isOpen(): boolean {
    return this.#open;
  }

  /**
   * The first `POLICY_VIOLATION` an operation of this step raised, if any (it forbids `commit()`).
   * @returns the violation or null
   * @example step.violation()?.details.violationType // "RESOURCE_ACCESS"
   */
  violation(): ReachError | null {
    return this.#violation;
  }

  /**
   * Apply the staged writes to the workspace, all at once.
   * @throws ReachError `PROTO_SEQUENCE_ERROR` when the transaction is closed, or when one of its operations raised a
   *   `POLICY_VIOLATION` (the transaction is then rolled back: seed 003 §4.3 requires halting the step)
   * @example step.commit()
   */
  commit(): void {
    this.#assertOpen();
    if (this.#violation !== null) {
      this.rollback();
      throw new ReachError(
        "PROTO_SEQUENCE_ERROR",
        "this step raised a POLICY_VIOLATION, so its writes were rolled back instead of committed (seed 003 §4.3)",
        { cause: this.#violation },
      );
    }
    this.#base[INSTALL](this, this.#staged ?? this.#baseState);
    this.#open = false;
    this.#staged = null;
  }

  /**
   * Discard the staged writes; the workspace stays exactly as it was at `beginStep()`. Idempotent.
   * @example step.rollback()
   */
  rollback(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#staged = null;
    this.#base[RELEASE](this);
  }

  #assertOpen(): void {
    if (!this.#open) {
      throw new ReachError("PROTO_SEQUENCE_ERROR", "this step transaction is closed; begin a new step");
    }
  }

  protected _state(): FsState {
    this.#assertOpen();
    return this.#staged ?? this.#baseState;
  }

  protected _beginWrite(): void {
    this.#assertOpen();
  }

  protected _mutable(): FsState {
    this.#assertOpen();
    if (this.#staged === null) this.#staged = cloneState(this.#baseState);
    return this.#staged;
  }

  protected _config(): Config {
    return this.#config;
  }

  protected override _failed(err: unknown): void {
    if (this.#violation === null && err instanceof ReachError && err.code === "POLICY_VIOLATION") {
      this.#violation = err;
    }
  }
}
