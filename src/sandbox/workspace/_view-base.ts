/**
 * The reading half of {@link WorkspaceView} (see `workspace.ts` for the model): path location through links, the
 * reading operations, snapshots and the digest. The writing operations are in `view.ts`.
 * @module
 */
import { sha256Hex } from "../../canonical/mod.ts";
import { normalizeWorkspacePath, parentPath, pathViolation, splitWorkspacePath } from "./path.ts";
import { WorkspaceError, byCodeUnits, encoder, fileBytes, fileHash } from "./_state.ts";
import type { Config, FsState, SnapshotEntry, WorkspaceEntry, WorkspaceEntryType, WorkspaceLstat, WorkspaceStat } from "./_state.ts";
import { authorize } from "./_policy.ts";
import { resolvePath } from "./_resolve.ts";
import type { Jail, Resolved } from "./_resolve.ts";

/** The jail of the workspace's own operations: the whole workspace, whose absolute name is `/`. */
const WHOLE: Jail = { root: "", absolute: "/" };

/** Options of {@link WorkspaceReader.resolve}. */
export type ResolveOptions = {
  /** The directory the path is relative to and may not leave (a normalised path). Default `""`, the root. */
  jail?: string;
  /**
   * The absolute name under which `jail` is seen, used for absolute link targets (e.g. `"/data"` for a folder
   * preopened as `/data`); null refuses every absolute target. Default `"/"`.
   */
  absolute?: string | null;
  /** Follow a link at the end (default true). */
  follow?: boolean;
  /** The host operation, for errors (default `"fs.resolve"`). */
  operation?: string;
};

/** What {@link WorkspaceReader.resolve} returns: the walk's result and whether the path ended with `/`. */
export type ResolvedPath = Resolved & { slash: boolean };

/** A located path: the walk's result and whether the path as given ended with `/`. */
export type Located = { r: Resolved; slash: boolean };

/** The reading operations, shared by a Workspace and a StepTransaction. Not constructed directly. */
export abstract class WorkspaceReader {
  /** The tables to read; throws when the view is closed. */
  protected abstract _state(): FsState;
  /** Limits and mounts. */
  protected abstract _config(): Config;
  /** Told about every error an operation throws (a transaction remembers policy violations). */
  protected _failed(_err: unknown): void {}

  protected _guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this._failed(err);
      throw err;
    }
  }

  /**
   * Check a workspace path and walk it through links within the whole workspace. A trailing `/` is allowed only
   * with `directory`; it does not change the walk (each operation decides what it means).
   */
  protected _locate(op: string, path: string, directory: boolean, follow: boolean): Located {
    const { segments, slash } = splitWorkspacePath(path, { operation: op });
    if (slash && !directory) throw pathViolation(op, path, "a trailing '/' names a directory, but a file was expected");
    return { r: resolvePath(this._state(), op, path, segments, WHOLE, follow), slash };
  }

  /**
   * Walk a path that may contain `..` within a directory it may not leave (for WASI, whose paths are relative to
   * a directory descriptor). The result must lie inside a declared root (or be a directory above one); what may be
   * done with it is checked by the operation made next on it.
   * @param path a relative path (`..` allowed; no absolute path, NUL, control character or backslash)
   * @param options the jail, its absolute name, whether to follow a final link
   * @returns the resolved path (no link before its last segment), its kind, how many trailing names are missing,
   *   and whether `path` ended with `/`
   * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS`) for a refused path or a walk leaving the jail;
   *   WorkspaceError `ELOOP`, `ENOTDIR` or `ENOENT`
   * @example ws.resolve("sub/../link", { jail: "data", absolute: "/data" }) // { path: "data/target", kind: "file", … }
   */
  resolve(path: string, options: ResolveOptions = {}): ResolvedPath {
    return this._guard(() => {
      const op = options.operation ?? "fs.resolve";
      const { segments, slash } = splitWorkspacePath(path, { operation: op, dotdot: true });
      const root = normalizeWorkspacePath(options.jail ?? "", { directory: true, operation: op });
      const jail = { root, absolute: options.absolute === undefined ? "/" : options.absolute };
      const r = resolvePath(this._state(), op, path, segments, jail, options.follow ?? true);
      authorize(this._config(), op, r.path, "lookup"); // even a missing name outside every root is refused
      return { ...r, slash };
    });
  }

  /**
   * Check that an operation needing `want` access could be made on a path, without making it.
   * @param path a workspace path
   * @param want "read" or "write"
   * @param options `follow: false` checks a link at the end itself (default: it is followed)
   * @throws ReachError `POLICY_VIOLATION` as the operation itself would; WorkspaceError from the walk
   * @example ws.checkAccess("data/in.txt", "write") // throws PERMISSION_DENIED on a read-only root
   */
  checkAccess(path: string, want: "read" | "write", options: { follow?: boolean } = {}): void {
    this._guard(() => {
      const op = want === "write" ? "fs.write" : "fs.read";
      authorize(this._config(), op, this._locate(op, path, true, options.follow ?? true).r.path, want);
    });
  }

  /**
   * Read a whole file; links are followed.
   * @param path a workspace path (relative, `/`-separated)
   * @returns a copy of the file's bytes
   * @throws ReachError `POLICY_VIOLATION` for a refused path (`RESOURCE_ACCESS`) or a root without read access
   *   (`PERMISSION_DENIED`); WorkspaceError `ENOENT`, `ENOTDIR`, `EISDIR` or `ELOOP`
   * @example new TextDecoder().decode(ws.read("data/in.txt"))
   */
  read(path: string): Uint8Array {
    return this._guard(() => {
      const op = "fs.read";
      const { r } = this._locate(op, path, false, true);
      authorize(this._config(), op, r.path, "read");
      if (r.kind === null) throw new WorkspaceError("ENOENT", op, r.path, "no such file");
      if (r.kind === "dir") throw new WorkspaceError("EISDIR", op, r.path, "is a directory, not a file");
      return fileBytes(this._state(), r.path).slice();
    });
  }

  /**
   * List a directory (links followed), sorted by name in UTF-16 code-unit order (deterministic on every runtime).
   * @param dir a workspace path naming a directory (`""` or `"."` for the root; a trailing `/` is allowed)
   * @returns the entries directly inside `dir`; links are listed as links
   * @throws ReachError `POLICY_VIOLATION`; WorkspaceError `ENOENT`, `ENOTDIR` or `ELOOP`
   * @example ws.list("data").map((e) => e.name) // ["a.txt", "b.txt"]
   */
  list(dir: string): WorkspaceEntry[] {
    return this._guard(() => {
      const op = "fs.list";
      const { r } = this._locate(op, dir, true, true);
      authorize(this._config(), op, r.path, "read");
      if (r.kind === null) throw new WorkspaceError("ENOENT", op, r.path, "no such directory");
      if (r.kind === "file") throw new WorkspaceError("ENOTDIR", op, r.path, "is a file, not a directory");
      const s = this._state();
      const p = r.path;
      const prefix = p === "" ? "" : p + "/";
      const out: WorkspaceEntry[] = [];
      const take = (path: string, type: WorkspaceEntryType, size: number): void => {
        if (path !== "" && parentPath(path) === p) out.push({ name: path.slice(prefix.length), type, size });
      };
      for (const [path, ino] of s.files) take(path, "file", s.inodes.get(ino)!.bytes.length);
      for (const path of s.dirs) take(path, "dir", 0);
      for (const [path, target] of s.links) take(path, "symlink", encoder.encode(target).length);
      return out.sort((a, b) => byCodeUnits(a.name, b.name));
    });
  }

  /**
   * Type and size of a file or directory, links followed. A trailing `/` on a file is a violation.
   * @param path a workspace path
   * @returns `{ type, size }` (size 0 for a directory)
   * @throws ReachError `POLICY_VIOLATION` (a link leaving the workspace or an undeclared root is `RESOURCE_ACCESS`);
   *   WorkspaceError `ENOENT`, `ENOTDIR` or `ELOOP`
   * @example ws.stat("data/in.txt") // { type: "file", size: 12 }
   */
  stat(path: string): WorkspaceStat {
    return this._guard(() => {
      const op = "fs.stat";
      const { r, slash } = this._locate(op, path, true, true);
      authorize(this._config(), op, r.path, "read");
      if (r.kind === null) throw new WorkspaceError("ENOENT", op, r.path, "no such file or directory");
      if (r.kind === "dir") return { type: "dir", size: 0 };
      if (slash) throw pathViolation(op, path, "a trailing '/' names a directory, but this is a file");
      return { type: "file", size: fileBytes(this._state(), r.path).length };
    });
  }

  /**
   * The entry a path names, a link at the end not followed (links on the way are), with its file node and link
   * count. A trailing `/` follows a final link, as in POSIX.
   * @param path a workspace path
   * @returns `{ type, size, ino, nlink }`
   * @throws ReachError `POLICY_VIOLATION`; WorkspaceError `ENOENT`, `ENOTDIR` or `ELOOP`
   * @example ws.lstat("temp/link") // { type: "symlink", size: 6, ino: null, nlink: 1 }
   */
  lstat(path: string): WorkspaceLstat {
    return this._guard(() => {
      const op = "fs.stat";
      const { segments, slash } = splitWorkspacePath(path, { operation: op });
      const r = resolvePath(this._state(), op, path, slash ? [...segments, "."] : segments, WHOLE, false);
      authorize(this._config(), op, r.path, "read");
      const s = this._state();
      if (r.kind === null) throw new WorkspaceError("ENOENT", op, r.path, "no such file or directory");
      if (r.kind === "dir") return { type: "dir", size: 0, ino: null, nlink: 1 };
      if (r.kind === "symlink") return { type: "symlink", size: encoder.encode(s.links.get(r.path)!).length, ino: null, nlink: 1 };
      const ino = s.files.get(r.path)!;
      const node = s.inodes.get(ino)!;
      return { type: "file", size: node.bytes.length, ino, nlink: node.nlink };
    });
  }

  /**
   * The file node a path names (links followed), without an access check: for a WASI shim that has just
   * resolved and authorised the path and needs the node its descriptor will write back to.
   * @param path a workspace path
   * @returns the node, or null when the path does not name a file
   * @throws ReachError `POLICY_VIOLATION` for a refused path; WorkspaceError from the walk
   * @example ws.nodeOf("temp/a") // 7
   */
  nodeOf(path: string): number | null {
    return this._guard(() => {
      const { r } = this._locate("fs.stat", path, false, true);
      return r.kind === "file" ? this._state().files.get(r.path)! : null;
    });
  }

  /**
   * How many names a file node has (a WASI descriptor asks for its open file; no path is looked up, nothing is
   * authorised: the descriptor already is the capability).
   * @param ino the node, from `lstat`
   * @returns its link count, 0 when it has no name left
   * @example ws.nodeLinks(ws.lstat("temp/a").ino!) // 1
   */
  nodeLinks(ino: number): number {
    return this._state().inodes.get(ino)?.nlink ?? 0;
  }

  /**
   * The target of a symbolic link, as stored (links on the way are followed, the last one is read).
   * @param path a workspace path naming a link
   * @returns the link text
   * @throws ReachError `POLICY_VIOLATION`; WorkspaceError `ENOENT`, `EINVAL` (not a link), `ENOTDIR` or `ELOOP`
   * @example ws.readlink("temp/link") // "../data/in.txt"
   */
  readlink(path: string): string {
    return this._guard(() => {
      const op = "fs.readlink";
      const { r } = this._locate(op, path, false, false);
      authorize(this._config(), op, r.path, "read");
      if (r.kind === null) throw new WorkspaceError("ENOENT", op, r.path, "no such link");
      if (r.kind !== "symlink") throw new WorkspaceError("EINVAL", op, r.path, "is not a symbolic link");
      return this._state().links.get(r.path)!;
    });
  }

  /**
   * Whether a file or directory exists (links followed). Refused paths still throw: probing is access.
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
   * The regular files (each name of a hard-linked file is listed), and with `links: true` the symbolic links too,
   * sorted by path in UTF-16 code-unit order.
   * @param options `links: true` adds `{ path, size, sha256, kind: "symlink", target }` entries
   * @returns one entry per file (and link)
   * @throws ReachError `PROTO_SEQUENCE_ERROR` on a closed transaction
   * @example ws.snapshot() // [{ path: "data/a.txt", size: 2, sha256: "…" }]
   */
  snapshot(options: { links?: boolean } = {}): SnapshotEntry[] {
    return this._guard(() => {
      const s = this._state();
      const entries: SnapshotEntry[] = [...s.files.keys()].map((path) => {
        const bytes = fileBytes(s, path);
        return { path, size: bytes.length, sha256: fileHash(bytes) };
      });
      if (options.links === true) {
        for (const [path, target] of s.links) {
          const bytes = encoder.encode(target);
          entries.push({ path, size: bytes.length, sha256: sha256Hex(bytes), kind: "symlink", target });
        }
      }
      return entries.sort((a, b) => byCodeUnits(a.path, b.path));
    });
  }

  /**
   * SHA-256 of the canonical listing over `snapshot({ links: true })`: `path \0 sha256hex \n` per file and
   * `path \0 "symlink" \0 target \n` per link (see the module notes of `workspace.ts`).
   * @returns 64 lowercase hex digits
   * @throws ReachError `PROTO_SEQUENCE_ERROR` on a closed transaction
   * @example ws.digest() === before // nothing changed
   */
  digest(): string {
    return snapshotDigest(this.snapshot({ links: true }));
  }

  /**
   * Every regular file's bytes and every link's target, without access checks (for the run's own record: a
   * capsule holds the whole workspace, write-only roots included). The bytes are the stored ones: do not mutate.
   * @returns files by path and link targets by path
   * @throws ReachError `PROTO_SEQUENCE_ERROR` on a closed transaction
   * @example const { files, links } = ws.contents();
   */
  contents(): { files: Map<string, Uint8Array>; links: Map<string, string> } {
    return this._guard(() => {
      const s = this._state();
      const files = new Map<string, Uint8Array>();
      for (const path of [...s.files.keys()].sort(byCodeUnits)) files.set(path, fileBytes(s, path));
      return { files, links: new Map([...s.links].sort((a, b) => byCodeUnits(a[0], b[0]))) };
    });
  }

  /**
   * Total bytes of all files (a hard-linked file counts once) and link targets.
   * @returns the byte count
   * @example ws.bytesUsed() // 0 for an empty workspace
   */
  bytesUsed(): number {
    return this._state().totalBytes;
  }
}

/**
 * The digest of a workspace listing (`Workspace.digest`): SHA-256 of `path \0 sha256hex \n` per file and
 * `path \0 "symlink" \0 target \n` per link, in the order given (sorted by path in UTF-16 code units).
 * @param entries a snapshot with links (`snapshot({ links: true })`), or one rebuilt from a capsule
 * @returns 64 lowercase hex digits
 * @example snapshotDigest([]) // SHA-256 of the empty string
 */
export function snapshotDigest(entries: readonly SnapshotEntry[]): string {
  return sha256Hex(entries.map((e) => (e.kind === "symlink" ? `${e.path}\0symlink\0${e.target!}\n` : `${e.path}\0${e.sha256}\n`)).join(""));
}
