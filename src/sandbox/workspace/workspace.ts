/**
 * The virtual workspace: an in-memory file system seeded from a run's declared resources, with per-step staging
 * (seed 003 §4.2 "Resource Boundaries" and "Permission Checks", §4.3 "No Partial Effects").
 *
 * Model
 * - Entries are regular files (bytes), directories and symbolic-link records, keyed by normalised path
 *   (see `path.ts`); the root `""` is always a directory. Stored bytes are never shared with callers: `write`
 *   copies in, `read` copies out.
 * - Symbolic links are followed, confined (`_resolve.ts`): the walk from a path to its entry stays inside the
 *   workspace (or, for a WASI guest, inside the directory descriptor the path is relative to); a relative target is
 *   read from the link's directory, an absolute one from the workspace root (`/`); a walk that would leave the
 *   workspace is `RESOURCE_ACCESS`, more than 40 links on one walk (a loop) is `ELOOP`. Access is checked on the
 *   resolved path, so a link never widens access: a link in a writable root pointing into a read-only one cannot be
 *   written through, a link into an undeclared folder is `RESOURCE_ACCESS`. `remove`, `rename`, `link`, `lstat`
 *   and `readlink` act on a link itself (links before the last segment are still followed).
 * - Hard links share one file node (`link`): a write through either name is seen through both, each name counts
 *   as an entry and the bytes count once. Since the new name can change the file, linking needs write access to
 *   both names. A snapshot lists each name as a regular file with the same content (the sharing is not recorded).
 * - A workspace made by {@link Workspace.fromResources} is confined to its declared roots, each with an access of
 *   `read`, `write` or `readwrite`, plus a `temp` root that is always `readwrite` (seed 002 `write_temp`). A path
 *   outside every root is `RESOURCE_ACCESS`; an operation the root's access does not grant is `PERMISSION_DENIED`.
 *   Reading covers `read`, `list`, `stat`, `lstat`, `readlink` and `exists`; writing covers `write`, `mkdir`,
 *   `remove`, `symlink`, `link` and `rename`.
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
 * UTF-16 code-unit order — because capsules hold regular files only (ARCHITECTURE "Capsule"); `snapshot({ links:
 * true })` adds `{ path, size, sha256, kind: "symlink", target }` per link (size and hash of the target's UTF-8
 * bytes). Empty directories are not part of either. `digest()` is `sha256Hex(utf8(L))` where `L` is the
 * concatenation, in `snapshot({ links: true })` order, of `path + "\0" + sha256hex + "\n"` per file and
 * `path + "\0symlink\0" + target + "\n"` per link (paths and targets cannot contain NUL or newline, and a file's
 * second field is 64 hex digits, so the listing is unambiguous). A workspace without links has the digest it had
 * before links were followed; the digest of an empty workspace is the SHA-256 of the empty string.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import { ancestorPaths, normalizeWorkspacePath } from "./path.ts";
import { DEFAULT_MAX_ENTRIES, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, TEMP_ROOT, byCodeUnits, checkLimit, cloneState, emptyState } from "./_state.ts";
import type { Config, FsState, Mount, WorkspaceOptions, WorkspaceResource } from "./_state.ts";
import { WorkspaceView } from "./view.ts";

export { DEFAULT_MAX_ENTRIES, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, TEMP_ROOT, WorkspaceError } from "./_state.ts";
export type { RemoveOptions, SnapshotEntry, WorkspaceAccess, WorkspaceEntry, WorkspaceEntryType, WorkspaceErrno, WorkspaceLstat, WorkspaceOptions, WorkspaceResource, WorkspaceStat } from "./_state.ts";
export type { ResolveOptions, ResolvedPath } from "./_view-base.ts";
export { snapshotDigest } from "./_view-base.ts";
export { MAX_LINK_EXPANSIONS } from "./_resolve.ts";
export { WorkspaceView } from "./view.ts";
export { applyWorkspaceDelta, mergeWorkspaceChanges, workspaceDelta } from "./_merge.ts";
export type { WorkspaceDelta } from "./_merge.ts";

/**
 * A workspace's committed tables and configuration, to rebuild it elsewhere — another thread (structured clone) or
 * another composition of step commits (`_merge.ts`). Treat it as opaque and never change it.
 */
export type WorkspaceImage = { readonly state: FsState; readonly config: Config };

const INSTALL = Symbol("install");
const RELEASE = Symbol("release");

/**
 * A workspace carried over from an earlier run (a session's next run starts from the one before it): regular files and
 * symbolic links by workspace path, as {@link WorkspaceView.contents} gives them.
 */
export type CarriedWorkspace = { readonly files: ReadonlyMap<string, Uint8Array>; readonly links: ReadonlyMap<string, string> };

/**
 * Place a carried workspace's files, then its links (their folders made first), before the mounts confine the
 * workspace; every path must lie under a mount (a declared root or `temp`).
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a path under no mount; as `write` / `symlink` for the rest
 */
function placeCarried(ws: Workspace, mounts: readonly Mount[], carried: CarriedWorkspace): void {
  const under = (path: string): string => {
    const p = normalizeWorkspacePath(path, { operation: "workspace.seed" });
    if (!mounts.some((m) => p.startsWith(`${m.root}/`))) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `the carried workspace names ${JSON.stringify(p.slice(0, 200))}, which is under no declared root nor temp/`, { details: { path: p.slice(0, 200) } });
    }
    return p;
  };
  for (const [path, bytes] of carried.files) ws.write(under(path), bytes);
  for (const [path, target] of carried.links) {
    const p = under(path);
    for (const d of ancestorPaths(p)) if (d !== "" && !ws.exists(d)) ws.mkdir(d);
    ws.symlink(p, target);
  }
}

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
  static fromResources(resources: readonly WorkspaceResource[], options: WorkspaceOptions = {}, carried?: CarriedWorkspace): Workspace {
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
    if (carried !== undefined) placeCarried(ws, mounts, carried);
    ws.#config = { ...ws.#config, mounts };
    return ws;
  }

  /**
   * The committed state as an image (shared, not copied: states are never changed once made).
   * @returns the image
   * @throws ReachError `PROTO_SEQUENCE_ERROR` while a step transaction is open
   * @example const copy = Workspace.fromImage(ws.image());
   */
  image(): WorkspaceImage {
    this._beginWrite();
    return { state: this.#state, config: this.#config };
  }

  /**
   * A workspace standing at an image's state, with its confinement and limits (its own copy of the tables).
   * @param image from {@link Workspace.image} (possibly after a structured clone)
   * @returns the workspace
   * @example Workspace.fromImage(ws.image()).digest() === ws.digest() // true
   */
  static fromImage(image: WorkspaceImage): Workspace {
    const ws = new Workspace();
    ws.#state = cloneState(image.state); // the tables, not the file bytes (immutable once stored)
    ws.#config = image.config;
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
