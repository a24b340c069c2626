/**
 * `WorkspaceView`: the file operations shared by a `Workspace` and a `StepTransaction` (see `workspace.ts`).
 * @module
 */
import { policyViolation } from "../../protocol/errors.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { ancestorPaths, displayPath, isWithin, normalizeWorkspacePath, parentPath, pathViolation } from "./path.ts";
import { WorkspaceError, byCodeUnits, diskExceeded, encoder, entryCount, fileHash, kindOf, linkViolation } from "./_state.ts";
import type { Config, FsState, Kind, RemoveOptions, SnapshotEntry, WorkspaceEntry, WorkspaceEntryType, WorkspaceStat } from "./_state.ts";

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
