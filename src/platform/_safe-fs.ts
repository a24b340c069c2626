/**
 * The file-system primitives every writer in reach-wasm goes through (internal; `write.ts` builds on them). They hold
 * three rules (docs/security.md "Files and paths", "File modes"):
 *
 * - No write follows a symbolic link. New files are opened `O_CREAT|O_EXCL|O_NOFOLLOW` (an existing name, a link
 *   or a dangling link included, is refused by the kernel), and their mode is set through the open descriptor
 *   (`fchmod`), never by path; a name about to be replaced or removed is `lstat`ed first and refused when it is a
 *   link; removal walks with `lstat` and unlinks links, never descending through one.
 * - No write leaves the directory it was given. Below that directory every component is a validated name
 *   ({@link safeName}), must be a real directory (not a link) and, for private data, one owned by this user.
 * - Private data (keys, stores, runs, capsules) is 0600 and its folders 0700 whatever the umask: modes are set
 *   exactly after creation, and an existing private folder owned by this user but open to others is repaired.
 *
 * Node's `node:fs` on Node and on Deno (whose `node:fs` passes `O_NOFOLLOW` and `fchmod` through to the system, as
 * `Deno.openSync` alone cannot). Synchronous on purpose: see `write.ts`.
 * @module
 */
import { chmodSync, closeSync, constants, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, rmdirSync, statSync, unlinkSync, writeSync } from "node:fs";
import type { Stats } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import process from "node:process";
import { ReachError } from "../protocol/mod.ts";

/** `O_NOFOLLOW` where the system has it (0 on Windows, which has no such flag and where links need privileges). */
export const O_NOFOLLOW: number = constants.O_NOFOLLOW ?? 0;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function refuse(message: string, cause?: unknown): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", message, cause === undefined ? {} : { cause });
}

/** Whether file modes mean anything here (not on Windows): modes are set exactly wherever they do. */
export const POSIX_MODES: boolean = process.platform !== "win32";

let uid: number | null | undefined;
/**
 * This process's user id, or null where it cannot be known: Windows, or Deno without `--allow-sys` (its
 * `process.getuid` then throws). Ownership is checked only where it is known; modes are set either way.
 * @returns the uid, or null
 */
export function userId(): number | null {
  if (uid !== undefined) return uid;
  try {
    uid = typeof process.getuid === "function" ? process.getuid() : null;
  } catch {
    uid = null;
  }
  return uid;
}

let gid: number | null | undefined;
/**
 * This process's primary group id, or null where it cannot be known (as {@link userId}).
 * @returns the gid, or null
 */
export function groupId(): number | null {
  if (gid !== undefined) return gid;
  try {
    gid = typeof process.getgid === "function" ? process.getgid() : null;
  } catch {
    gid = null;
  }
  return gid;
}

/**
 * Whether a mode is private (nothing for group and others): such files get 0700 folders.
 * @param mode a file mode
 * @returns true for 0600, 0400, 0700 …
 */
export function isPrivateMode(mode: number): boolean {
  return (mode & 0o077) === 0;
}

/**
 * Check a single file name that came from outside (a server's header, a capsule, a peer) before it touches a path:
 * 1-255 UTF-8 bytes, no `/`, `\`, NUL or other control character, not `.` or `..`.
 * @param name the name
 * @param what how to call it in the message ("the run hash from the server")
 * @returns the name
 * @throws ReachError `PROTO_INVALID_ARGUMENT` naming what is wrong
 * @example safeName("ab12.capsule.tar.gz", "the capsule name") // "ab12.capsule.tar.gz"
 */
export function safeName(name: string, what: string): string {
  const why = typeof name !== "string" || name === "" ? "is empty"
    : name === "." || name === ".." ? "is a relative folder name"
    : /[/\\]/.test(name) ? "holds a path separator"
    : CONTROL.test(name) ? "holds a control character"
    : new TextEncoder().encode(name).length > 255 ? "is longer than 255 bytes"
    : null;
  if (why !== null) throw refuse(`${what} ${JSON.stringify(name)} ${why}; it is not used as a file name (nothing was written)`);
  return name;
}

/**
 * Split and check a relative `/`-separated path that came from outside ({@link safeName} for each segment).
 * @param rel the path
 * @param what how to call it in the message
 * @returns its segments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an absolute path, an empty, `.` or `..` segment, or a bad name
 * @example safeSegments("out/notes/a.md", "a run file") // ["out", "notes", "a.md"]
 */
export function safeSegments(rel: string, what: string): string[] {
  if (typeof rel !== "string" || rel === "") throw refuse(`${what} has an empty path; nothing was written`);
  return rel.split("/").map((s) => safeName(s, `${what} ${JSON.stringify(rel)}: segment`));
}

/**
 * `lstat`, or null when nothing is there.
 * @param path a path
 * @returns the link's own status, or null for ENOENT/ENOTDIR
 */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
}

/**
 * The segments of `path` below `base` (both resolved), refusing a path that is not strictly inside it.
 * @param base the directory given
 * @param path a path inside it
 * @returns the relative segments (at least one)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when `path` leaves `base`
 */
export function segmentsWithin(base: string, path: string): string[] {
  const rel = relative(resolve(base), resolve(path));
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw refuse(`${JSON.stringify(path)} is not inside ${JSON.stringify(base)}; nothing was written outside the folder given`);
  }
  return rel.split(sep);
}

/**
 * Make sure `path` is a real directory (not a link) that may hold what is written there: created with `mode` when
 * missing (exactly, whatever the umask); when `mode` is private, an existing one must be owned by this user, and is
 * narrowed to 0700 when open to others (the way the caches check their folders, `_authenticated-store.ts`).
 * @param path the folder
 * @param mode 0700 for private data, else 0755
 * @param what how to call it in messages
 * @returns `created`, `repaired` (it was open to others and is 0700 now) or `ok`
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a link, a non-directory or another owner
 */
export function realDir(path: string, mode: number, what = "the folder"): "created" | "repaired" | "ok" {
  let st = lstatOrNull(path);
  let created = false;
  if (st === null) {
    try {
      mkdirSync(path, { mode });
      created = true;
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
    }
    st = lstatSync(path);
  }
  if (st.isSymbolicLink()) throw refuse(`${what} ${JSON.stringify(path)} is a symbolic link; reach-wasm never writes through a link — remove it, or give the real folder`);
  if (!st.isDirectory()) throw refuse(`${what} ${JSON.stringify(path)} exists and is not a directory; move it away or choose another place`);
  if (!POSIX_MODES) return created ? "created" : "ok";
  if (created) {
    if ((st.mode & 0o777) !== mode) chmodSync(path, mode);
    return "created";
  }
  if (!isPrivateMode(mode)) return "ok";
  const me = userId();
  if (me !== null && st.uid !== me) {
    throw refuse(`${what} ${JSON.stringify(path)} is owned by uid ${st.uid}, not by this user (${me}); another user could read or replace ` +
      "what reach-wasm keeps there — use a folder of your own");
  }
  if ((st.mode & 0o077) === 0) return "ok";
  chmodSync(path, 0o700);
  return "repaired";
}

/**
 * A folder that holds private data and that the user named (a node directory, the embedded store's `--data`): its
 * parents are followed as given and created 0700 when missing; the folder itself is {@link realDir}'d private.
 * @param path the folder
 * @param what how to call it in messages
 * @param warn told when an existing folder open to others was narrowed to 0700
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a link, a non-directory or another owner
 */
export function privateDir(path: string, what: string, warn: (message: string) => void): void {
  givenDir(dirname(resolve(path)), 0o700);
  if (realDir(resolve(path), 0o700, what) === "repaired") {
    warn(`reach-wasm: warning: ${what} ${JSON.stringify(path)} was readable by other users; it is 0700 now (check what it held)\n`);
  }
}

/**
 * Create a new folder with exactly `mode`: it must not exist (a link there included).
 * @param path the folder
 * @param mode its permissions
 * @throws the system error (`EEXIST` when the name exists)
 */
export function newDir(path: string, mode: number): void {
  mkdirSync(path, { mode });
  const st = lstatSync(path);
  if (!st.isDirectory()) throw refuse(`${JSON.stringify(path)} changed while it was created; nothing was written there`);
  if (POSIX_MODES && (st.mode & 0o777) !== mode) chmodSync(path, mode);
}

/**
 * Make the directory `base` itself exist: a path the user gave, so links in it are followed; components missing are
 * created with `mode`.
 * @param base the directory
 * @param mode for created components
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when an existing component is not a directory
 */
export function givenDir(base: string, mode: number): void {
  const missing: string[] = [];
  for (let at = resolve(base); ; at = dirname(at)) {
    const st = statOrNull(at);
    if (st !== null) {
      if (!st.isDirectory()) throw refuse(`${JSON.stringify(at)} is not a directory; choose a path inside a folder`);
      break;
    }
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const dir of missing.reverse()) realDir(dir, mode);
}

/** `stat` (links followed: a path the user gave), or null when nothing is there. */
function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
}

/**
 * Create the folders `segments` below `base` (each a real directory, see {@link realDir}) and return the last.
 * @param base an existing directory (the one given)
 * @param segments validated names
 * @param mode 0700 for private data, else 0755
 * @returns the full path of the last folder
 */
export function dirsWithin(base: string, segments: readonly string[], mode: number): string {
  let at = base;
  for (const s of segments) realDir((at = join(at, s)), mode);
  return at;
}

/**
 * Create a new file (it must not exist, not even as a link) holding `bytes`, synced, with exactly `mode`.
 * @param path the new file
 * @param bytes its content
 * @param mode its permissions (set on the descriptor, whatever the umask)
 * @throws the system error (`EEXIST` when the name exists, `ELOOP` for a link where supported)
 */
export function createFile(path: string, bytes: Uint8Array, mode: number): void {
  const fd = openSync(path, CREATE_FLAGS, mode);
  try {
    if (POSIX_MODES) fchmodSync(fd, mode);
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove a file or a folder tree without ever following a link: links are unlinked, folders are read only after
 * `lstat` says they are folders. Missing entries are fine.
 * @param path what to remove
 */
export function removeTree(path: string): void {
  const st = lstatOrNull(path);
  if (st === null) return;
  if (!st.isDirectory()) {
    unlinkSync(path);
    return;
  }
  for (const name of readdirSync(path)) removeTree(join(path, name));
  rmdirSync(path);
}

/**
 * Narrow every folder under `root` (itself included) to `dirMode` and every file to `fileMode`, without following
 * links (links are left alone). Used for stores that another library writes (PGlite) with its own modes.
 * @param root the folder
 * @param dirMode e.g. 0700
 * @param fileMode e.g. 0600
 * @returns how many entries were changed
 */
export function narrowTree(root: string, dirMode: number, fileMode: number): number {
  if (!POSIX_MODES) return 0;
  const st = lstatOrNull(root);
  if (st === null || st.isSymbolicLink()) return 0;
  let changed = 0;
  const want = st.isDirectory() ? dirMode : fileMode;
  if ((st.mode & 0o777 & ~want) !== 0 && (userId() === null || st.uid === userId())) {
    try {
      chmodSync(root, (st.mode & 0o777) & want);
      changed++;
    } catch {
      // not ours to change (the uid could not be known): its folder, 0700, keeps it from others
    }
  }
  if (st.isDirectory()) for (const name of readdirSync(root)) changed += narrowTree(join(root, name), dirMode, fileMode);
  return changed;
}
