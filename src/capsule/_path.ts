/**
 * Capsule entry paths (internal): which paths an archive may hold, how a path is split into the ustar `prefix` and
 * `name` fields, and the tree checks (order, duplicates, a file used as a directory).
 *
 * A capsule path is the protocol's entry path (`ENTRY_PATH_RE` of `src/protocol/_common.ts`, used by
 * `capsule.json`'s `files[].path`): printable ASCII (0x20–0x7E) without `\`, `/`-separated, no empty, `.` or `..`
 * segment, no leading or trailing `/`. On top of that it must fit a ustar header without extensions: at most 255
 * characters, every segment at most 100 (ARCHITECTURE "Capsule"). Because paths are ASCII, JavaScript string order
 * (UTF-16 code units) is the byte order of their UTF-8 encoding, which is the archive's entry order.
 *
 * "Duplicates after normalisation": the only spelling a reader normalises is what other tars write — a leading `./`
 * and a directory's trailing `/` ({@link normaliseRead}); every other non-normal spelling (`a//b`, `a/./b`, `a/.`)
 * is refused outright, so two accepted paths name the same file only when they are equal after that. Case is
 * significant (capsules are read into memory, never extracted by this module). A path that is a strict prefix
 * directory of another (`a` and `a/b`) is a clash: no file system can hold both ({@link EntryTree} for the sorted
 * paths the writer takes, {@link PathSet} for a read in any order).
 * @module
 */

/** Longest ustar `name` field. */
export const NAME_MAX = 100;
/** Longest ustar `prefix` field. */
export const PREFIX_MAX = 155;
/** Longest path: prefix, the `/` joining them, name. */
export const PATH_MAX = PREFIX_MAX + 1 + NAME_MAX;

/**
 * Why `path` cannot be a capsule entry path, or `undefined` when it can.
 * @param path the path (for a path read from a header: one char per byte)
 * @returns a phrase completing "the path …", e.g. "escapes the archive ('..' segment)"
 * @example pathProblem("../x") // "escapes the archive ('..' segment)"
 */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return "is empty";
  if (path.length > 4 * PATH_MAX) return `is longer than ${PATH_MAX} characters (the ustar limit without extension headers)`;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return "contains NUL or another control character";
    if (c > 0x7e) return "contains a non-ASCII character (capsule paths are printable ASCII)";
    if (c === 0x5c) return "contains a backslash (a Windows separator); use '/'";
  }
  if (path.startsWith("/")) return "escapes the archive (absolute path)";
  const segments = path.split("/");
  if (segments.includes("..")) return "escapes the archive ('..' segment)";
  if (segments.includes(".")) return "has a '.' segment";
  if (segments.includes("")) return "has an empty segment ('//' or a trailing '/')";
  if (path.length > PATH_MAX) return `is longer than ${PATH_MAX} characters (the ustar limit without extension headers)`;
  if (segments.some((s) => s.length > NAME_MAX)) return `has a segment longer than ${NAME_MAX} characters (the ustar limit)`;
  if (splitUstar(path)[0].length > PREFIX_MAX) {
    return `does not fit a ustar header (its directories take more than ${PREFIX_MAX} characters once the last ${NAME_MAX} are split off)`;
  }
  return undefined;
}

/**
 * Split a path into the ustar `prefix` and `name` fields: the shortest prefix (whole leading segments) that leaves
 * a name of at most 100 characters — the split tar-stream's `headers.encode` makes, so both write the same bytes.
 * @param path a path accepted by {@link pathProblem} (or one that only fails the prefix length)
 * @returns `[prefix, name]`; the prefix is `""` for paths of at most 100 characters
 * @example splitUstar("a/" + "b".repeat(100)) // ["a", "bbb…"]
 */
export function splitUstar(path: string): [string, string] {
  let name = path;
  let prefix = "";
  while (name.length > NAME_MAX) {
    const slash = name.indexOf("/");
    if (slash === -1) break;
    prefix = prefix === "" ? name.slice(0, slash) : `${prefix}/${name.slice(0, slash)}`;
    name = name.slice(slash + 1);
  }
  return [prefix, name];
}

/** What is wrong with the next path of a sorted sequence (see {@link EntryTree}). */
export type TreeProblem = { reason: "duplicate" | "order" | "conflict"; text: string };

/**
 * The set of paths seen so far, fed in archive order: refuses a path equal to the previous one (duplicate), one that
 * sorts before it (order), and one inside a path that is a file (conflict). In sorted order a directory's name sorts
 * before everything inside it, so the only clash possible is a later path under an earlier file.
 */
export class EntryTree {
  readonly #files = new Set<string>();
  #last: string | undefined;

  /**
   * Record the next path.
   * @param path an accepted path
   * @returns the problem, or `undefined` when the path was recorded
   */
  add(path: string): TreeProblem | undefined {
    const last = this.#last;
    if (last !== undefined && path === last) return { reason: "duplicate", text: "appears twice" };
    if (last !== undefined && path < last) {
      return { reason: "order", text: `comes after "${last}" but sorts before it (entries are in byte order of their paths)` };
    }
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      if (this.#files.has(dir)) return { reason: "conflict", text: `is inside "${dir}", which is a file` };
    }
    this.#files.add(path);
    this.#last = path;
    return undefined;
  }
}

/** Compare paths by UTF-16 code units (= UTF-8 byte order for ASCII paths). */
export function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Normalise a path read from another tar's header: leading `./` removed (GNU tar and Python write `./a` for an
 * archive made with `-C dir .`), and for a directory its trailing `/`. The root (`.`, `./`) becomes `""`.
 * @param path the path as stored (after pax `path` or a GNU long name applied)
 * @param directory whether the entry is a directory
 * @returns the path to check with {@link pathProblem}
 * @example normaliseRead("./pack/", true) // "pack"
 */
export function normaliseRead(path: string, directory: boolean): string {
  let p = path;
  while (p.startsWith("./")) p = p.slice(2);
  if (p === ".") return "";
  if (directory && p.endsWith("/")) p = p.slice(0, -1);
  return p;
}

/**
 * The files and directories an archive declares, in any order: a file given twice (also once as `a` and once as
 * `./a`) is a duplicate; a file and a directory of the same path, or anything below a file, is a conflict.
 * Directory entries are implicit in a capsule, so repeating one is harmless.
 */
export class PathSet {
  /** File path → 1-based header number. */
  readonly #files = new Map<string, number>();
  /** Directory path → 1-based header number. */
  readonly #dirs = new Map<string, number>();

  /**
   * Record a path.
   * @param path a normalised, accepted path
   * @param entry its header number
   * @param directory whether it is a directory entry
   * @returns the problem, or `undefined` when recorded
   */
  add(path: string, entry: number, directory: boolean): TreeProblem | undefined {
    const file = this.#files.get(path);
    if (file !== undefined) {
      return directory
        ? { reason: "conflict", text: `is a directory, but entry #${file} is a file of that path` }
        : { reason: "duplicate", text: `appears twice (also entry #${file}, after removing any leading "./")` };
    }
    if (directory) {
      if (!this.#dirs.has(path)) this.#dirs.set(path, entry);
      return undefined;
    }
    const dir = this.#dirs.get(path);
    if (dir !== undefined) return { reason: "conflict", text: `is a file, but entry #${dir} is a directory of that path` };
    this.#files.set(path, entry);
    return undefined;
  }

  /**
   * The first path (by header number) that lies below a file, once every path is known.
   * @returns the path, its header number and the problem, or `undefined`
   */
  firstConflict(): { path: string; entry: number; problem: TreeProblem } | undefined {
    let found: { path: string; entry: number; problem: TreeProblem } | undefined;
    for (const map of [this.#files, this.#dirs]) {
      for (const [path, entry] of map) {
        if (found !== undefined && found.entry < entry) continue;
        for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
          const dir = path.slice(0, i);
          const owner = this.#files.get(dir);
          if (owner !== undefined) {
            found = { path, entry, problem: { reason: "conflict", text: `is inside "${dir}", which is a file (entry #${owner})` } };
            break;
          }
        }
      }
    }
    return found;
  }
}
