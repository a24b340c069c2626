/**
 * `WorkspaceView`: the file operations shared by a `Workspace` and a `StepTransaction` (see `workspace.ts` for the
 * model). The reading operations are in `_view-base.ts`; renames are in `_rename.ts`.
 * @module
 */
import { ancestorPaths, pathViolation, uncarriedPath } from "./path.ts";
import { WorkspaceError, addName, diskExceeded, dropFile, dropLink, encoder, entryCount, putFile, putLink } from "./_state.ts";
import type { FsState, RemoveOptions } from "./_state.ts";
import { authorize, protectRoots } from "./_policy.ts";
import { renameEntry } from "./_rename.ts";
import { WorkspaceReader } from "./_view-base.ts";

/** The names a walk found missing, as directories to create (all but the last, or all with `all`). */
function missingDirs(path: string, missing: number, all: boolean): string[] {
  const chain = [...ancestorPaths(path), path];
  return chain.slice(chain.length - missing, all ? chain.length : chain.length - 1);
}

/**
 * The operations shared by a {@link Workspace} and a {@link StepTransaction}. Not constructed directly.
 */
export abstract class WorkspaceView extends WorkspaceReader {
  /** Called before any validation of a writing operation; throws when writing is not allowed now. */
  protected abstract _beginWrite(): void;
  /** The tables to mutate (a transaction copies them on first use). */
  protected abstract _mutable(): FsState;

  #checkEntries(op: string, path: string, added: number): void {
    const max = this._config().limits.maxEntries;
    const n = entryCount(this._state()) + added;
    if (added > 0 && n > max) throw diskExceeded(op, path, "entries", max, n);
  }

  /** A new name must be one a capsule can record (see {@link uncarriedPath}). */
  #checkCarried(op: string, path: string): void {
    const refused = uncarriedPath(path);
    if (refused !== null) throw new WorkspaceError(refused[0], op, path, refused[1]);
  }

  #checkBytes(op: string, path: string, old: number, size: number): void {
    const { maxFileBytes, maxTotalBytes } = this._config().limits;
    if (size > maxFileBytes) throw diskExceeded(op, path, "file", maxFileBytes, size);
    const total = this._state().totalBytes - old + size;
    if (total > maxTotalBytes) throw diskExceeded(op, path, "total", maxTotalBytes, total);
  }

  /**
   * Create or replace a file, creating missing parent directories. Links are followed (a link to a missing file
   * creates that file); a file's other hard-linked names see the new content.
   * @param path a workspace path naming a file (no trailing `/`)
   * @param bytes the new content (copied)
   * @throws TypeError when `bytes` is not a Uint8Array
   * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS` / `PERMISSION_DENIED`); `EXEC_DISK_EXCEEDED` over a
   *   limit; `PROTO_SEQUENCE_ERROR` on a base with an open step or a closed transaction; WorkspaceError `ENOTDIR`,
   *   `EISDIR` or `ELOOP`
   * @example ws.write("temp/out.json", new TextEncoder().encode("{}"))
   */
  write(path: string, bytes: Uint8Array): void {
    this._guard(() => {
      const op = "fs.write";
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`"bytes" expected a Uint8Array, got ${typeof bytes}`);
      this._beginWrite();
      const { r } = this._locate(op, path, false, true);
      if (r.path === "") throw new WorkspaceError("EISDIR", op, r.path, "the workspace root is a directory");
      authorize(this._config(), op, r.path, "write");
      if (r.kind === "dir") throw new WorkspaceError("EISDIR", op, r.path, "is a directory; choose a file name inside it");
      const s = this._state();
      this.#checkBytes(op, r.path, r.kind === "file" ? s.inodes.get(s.files.get(r.path)!)!.bytes.length : 0, bytes.length);
      if (r.kind === null) this.#checkCarried(op, r.path);
      const newDirs = missingDirs(r.path, r.missing, false);
      this.#checkEntries(op, r.path, r.missing);
      const m = this._mutable();
      for (const d of newDirs) m.dirs.add(d);
      putFile(m, r.path, bytes.slice());
    });
  }

  /**
   * Replace the content of the file node `ino` (a WASI descriptor writes back to the file it opened, whatever was
   * renamed or relinked since). The name written through, for access checks, is `hint` when it still names the
   * node, else the first of its names in code-unit order.
   * @param ino the node, from `lstat`
   * @param bytes the new content (copied)
   * @param hint the name the node is expected under
   * @returns false when the node has no name left (it was unlinked: the bytes are dropped, as POSIX drops them)
   * @throws ReachError as for `write`
   * @example ws.writeNode(ws.lstat("temp/a").ino!, bytes, "temp/a")
   */
  writeNode(ino: number, bytes: Uint8Array, hint: string): boolean {
    return this._guard(() => {
      const op = "fs.write";
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`"bytes" expected a Uint8Array, got ${typeof bytes}`);
      this._beginWrite();
      const s = this._state();
      const node = s.inodes.get(ino);
      if (node === undefined) return false;
      let name = s.files.get(hint) === ino ? hint : null;
      if (name === null) for (const [p, i] of s.files) if (i === ino && (name === null || p < name)) name = p;
      authorize(this._config(), op, name!, "write");
      this.#checkBytes(op, name!, node.bytes.length, bytes.length);
      putFile(this._mutable(), name!, bytes.slice());
      return true;
    });
  }

  /**
   * Create a directory and any missing parents (`mkdir -p`), links followed; an existing directory is left as it is.
   * @param path a workspace path (a trailing `/` is allowed)
   * @throws ReachError `POLICY_VIOLATION`; `EXEC_DISK_EXCEEDED`; `PROTO_SEQUENCE_ERROR`; WorkspaceError `ENOTDIR`,
   *   `EEXIST` (a file is in the way) or `ELOOP`
   * @example ws.mkdir("temp/a/b")
   */
  mkdir(path: string): void {
    this._guard(() => {
      const op = "fs.mkdir";
      this._beginWrite();
      const { r } = this._locate(op, path, true, true);
      authorize(this._config(), op, r.path, "write");
      if (r.kind === "file") throw new WorkspaceError("EEXIST", op, r.path, "a file with this name exists");
      if (r.kind === "dir") return;
      this.#checkCarried(op, r.path);
      const newDirs = missingDirs(r.path, r.missing, true);
      this.#checkEntries(op, r.path, newDirs.length);
      const m = this._mutable();
      for (const d of newDirs) m.dirs.add(d);
    });
  }

  /**
   * Remove a file name, a link (the link itself, never its target), or a directory (empty, or any with `recursive`).
   * Links before the last segment are followed. The workspace root and declared resource roots (or directories
   * holding one) cannot be removed.
   * @param path a workspace path
   * @param options `recursive: true` to remove a non-empty directory
   * @throws ReachError `POLICY_VIOLATION` (removing a root is `PERMISSION_DENIED`); `PROTO_SEQUENCE_ERROR`;
   *   WorkspaceError `ENOENT`, `ENOTDIR`, `ENOTEMPTY` or `ELOOP`
   * @example ws.remove("temp/scratch", { recursive: true })
   */
  remove(path: string, options: RemoveOptions = {}): void {
    this._guard(() => {
      const op = "fs.remove";
      this._beginWrite();
      const { r, slash } = this._locate(op, path, true, false);
      protectRoots(this._config(), op, r.path);
      authorize(this._config(), op, r.path, "write");
      const p = r.path;
      if (r.kind === null) throw new WorkspaceError("ENOENT", op, p, "no such file or directory");
      if (r.kind !== "dir" && slash) throw pathViolation(op, path, "a trailing '/' names a directory, but this is not one");
      if (r.kind === "file") return dropFile(this._mutable(), p);
      if (r.kind === "symlink") return dropLink(this._mutable(), p);
      const s = this._state();
      const inside = (q: string): boolean => q.startsWith(p + "/");
      const nonEmpty = [...s.files.keys(), ...s.dirs, ...s.links.keys()].some(inside);
      if (nonEmpty && options.recursive !== true) {
        throw new WorkspaceError("ENOTEMPTY", op, p, "the directory is not empty; pass { recursive: true }");
      }
      const m = this._mutable();
      for (const q of [...m.files.keys()]) if (inside(q)) dropFile(m, q);
      for (const q of m.dirs) if (inside(q)) m.dirs.delete(q);
      for (const q of [...m.links.keys()]) if (inside(q)) dropLink(m, q);
      m.dirs.delete(p);
    });
  }

  /**
   * Make a symbolic link. The target is stored as given and resolved only when the link is used, within the
   * workspace (or the directory a WASI descriptor confines the walk to); see `_resolve.ts`.
   * @param path a workspace path for the link (links before its last segment are followed); its parent must exist
   * @param target the link text, stored as given (at most 4096 UTF-8 bytes, no control characters)
   * @throws TypeError when `target` is not a string
   * @throws ReachError `POLICY_VIOLATION`; `EXEC_DISK_EXCEEDED`; `PROTO_SEQUENCE_ERROR`; WorkspaceError `ENOENT`,
   *   `ENOTDIR`, `EEXIST` or `ELOOP`
   * @example ws.symlink("temp/in", "../data/in.txt") // ws.read("temp/in") reads data/in.txt, if readable
   */
  symlink(path: string, target: string): void {
    this._guard(() => {
      const op = "fs.symlink";
      if (typeof target !== "string") throw new TypeError(`"target" expected a string, got ${typeof target}`);
      this._beginWrite();
      // eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
      if (target === "" || encoder.encode(target).length > 4096 || /[\u0000-\u001f\u007f]|\p{Surrogate}/u.test(target)) {
        throw pathViolation(op, target, "a link target must be 1 to 4096 bytes of printable text");
      }
      const { r } = this._locate(op, path, false, false);
      if (r.path === "") throw new WorkspaceError("EEXIST", op, r.path, "the workspace root exists");
      authorize(this._config(), op, r.path, "write");
      if (r.kind !== null) throw new WorkspaceError("EEXIST", op, r.path, "an entry with this name exists");
      if (r.missing > 1) throw new WorkspaceError("ENOENT", op, r.path, "the parent directory does not exist");
      this.#checkCarried(op, r.path);
      this.#checkEntries(op, r.path, 1);
      this.#checkBytes(op, r.path, 0, encoder.encode(target).length);
      putLink(this._mutable(), r.path, target);
    });
  }

  /**
   * Make a hard link: a second name for a file (both names share one content: a write through either is seen
   * through both) or a copy of a link record. Neither final segment is followed. Because the new name can change
   * the file, both names need write access (a link can never make a read-only file writable).
   * @param existing the file or link to name again
   * @param path the new name; its parent must exist
   * @throws ReachError `POLICY_VIOLATION`; `EXEC_DISK_EXCEEDED`; `PROTO_SEQUENCE_ERROR`; WorkspaceError `ENOENT`,
   *   `EEXIST`, `EPERM` (a directory), `ENOTDIR` or `ELOOP`
   * @example ws.link("temp/a.txt", "temp/b.txt")
   */
  link(existing: string, path: string): void {
    this._guard(() => {
      const op = "fs.link";
      this._beginWrite();
      const from = this._locate(op, existing, false, false).r;
      const to = this._locate(op, path, false, false).r;
      authorize(this._config(), op, from.path, "write");
      authorize(this._config(), op, to.path, "write");
      if (from.kind === null) throw new WorkspaceError("ENOENT", op, from.path, "no such file");
      if (from.kind === "dir") throw new WorkspaceError("EPERM", op, from.path, "a directory cannot be hard-linked");
      if (to.kind !== null) throw new WorkspaceError("EEXIST", op, to.path, "an entry with this name exists");
      if (to.missing > 1) throw new WorkspaceError("ENOENT", op, to.path, "the parent directory does not exist");
      this.#checkCarried(op, to.path);
      this.#checkEntries(op, to.path, 1);
      const target = this._state().links.get(from.path);
      if (target !== undefined) this.#checkBytes(op, to.path, 0, encoder.encode(target).length);
      const m = this._mutable();
      if (target === undefined) addName(m, from.path, to.path);
      else putLink(m, to.path, target);
    });
  }

  /**
   * Rename a file, link or directory (with everything below it), POSIX `rename` semantics: an existing file or
   * link at `to` is replaced, an existing empty directory is replaced by a directory. Neither final segment is
   * followed. Both places need write access; roots cannot be moved or replaced.
   * @param from the entry to move (a trailing `/` requires a directory)
   * @param to its new path (a trailing `/` requires `from` to be a directory)
   * @throws ReachError `POLICY_VIOLATION`; `PROTO_SEQUENCE_ERROR`; WorkspaceError `ENOENT`, `ENOTDIR`, `EISDIR`,
   *   `ENOTEMPTY`, `EINVAL` (a directory into itself) or `ELOOP`
   * @example ws.rename("temp/a", "temp/b")
   */
  rename(from: string, to: string): void {
    this._guard(() => {
      const op = "fs.rename";
      this._beginWrite();
      const a = this._locate(op, from, true, false);
      const b = this._locate(op, to, true, false);
      protectRoots(this._config(), op, a.r.path);
      authorize(this._config(), op, a.r.path, "write");
      authorize(this._config(), op, b.r.path, "write");
      renameEntry(this._state(), () => this._mutable(), this._config(), op, a, b);
    });
  }
}
