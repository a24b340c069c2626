/**
 * Workspace path normalisation and confinement (seed 003 §4.2 "Resource Boundaries").
 *
 * A workspace path is a relative POSIX path made of `/`-separated segments. The normalised form has no leading or
 * trailing `/`, no empty, `.` or `..` segments; the root is the empty string `""`.
 *
 * Normalisation only ever removes `.` segments and repeated slashes (`./a//b/.` → `a/b`): these cannot change
 * which entry a path names. Everything that could (or that has no meaning here) is refused, never repaired:
 * - absolute paths (`/etc/passwd`) and backslashes (`a\b`, a Windows separator);
 * - `..` segments anywhere, even when the result would stay inside (`a/../b`);
 * - NUL, the other C0 control characters and DEL; lone UTF-16 surrogates (not encodable as UTF-8);
 * - a trailing `/` where a file is meant (allowed only with `{ directory: true }`);
 * - a segment longer than 255 UTF-8 bytes, a path (as given) longer than 4096 UTF-8 bytes, more than 64 segments.
 * Paths are compared as exact strings: no Unicode normalisation, no case folding.
 *
 * Every refusal is a `POLICY_VIOLATION` with `violationType` `RESOURCE_ACCESS` (seed 003 §4.3) whose details hold
 * the offending path (clipped and made printable) and the reason.
 * @module
 */
import { policyViolation } from "../../protocol/mod.ts";
import type { ReachError } from "../../protocol/mod.ts";

/** Longest path accepted, in UTF-8 bytes, measured on the path as given (POSIX `PATH_MAX`). */
export const MAX_PATH_BYTES = 4096;
/** Longest segment accepted, in UTF-8 bytes (POSIX `NAME_MAX`). */
export const MAX_SEGMENT_BYTES = 255;
/** Most segments a normalised path may have. */
export const MAX_PATH_DEPTH = 64;

/** Options of {@link normalizeWorkspacePath}. */
export type NormalizeOptions = {
  /** Accept a trailing `/` (the path names a directory). Default false: a trailing `/` is refused. */
  directory?: boolean;
  /** The host operation, for the error's `attemptedCapability` (default `"fs.access"`). */
  operation?: string;
};

const encoder = new TextEncoder();
// eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/u;
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Make a path safe to show in a message or store in (hashed) details: control characters and lone surrogates
 * become visible escapes / U+FFFD, and it is clipped to 200 code points without splitting a surrogate pair.
 * @param path any string
 * @returns printable, well-formed text of at most 201 code points
 * @example displayPath("a\u0000b") // "a\\u0000b"
 */
export function displayPath(path: string): string {
  const printable = String(path)
    // eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
    .replace(/[\u0000-\u001f\u007f]/gu, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))
    .replace(/\p{Surrogate}/gu, "\ufffd");
  const chars = Array.from(printable);
  return chars.length <= 200 ? printable : chars.slice(0, 200).join("") + "…";
}

/**
 * The `RESOURCE_ACCESS` policy violation for a path (seed 003 §4.3).
 * @param operation the host operation attempted, e.g. `"fs.read"`
 * @param path the path as the tool gave it
 * @param reason why it was refused
 * @returns the error; details `{ violationType, attemptedCapability: "<operation>:<path>", path, reason }`
 * @example throw pathViolation("fs.read", "../x", "'..' segments are not allowed")
 */
export function pathViolation(operation: string, path: string, reason: string): ReachError {
  const shown = displayPath(path);
  return policyViolation(
    "RESOURCE_ACCESS",
    `${operation}:${shown}`,
    `${operation} refused path ${JSON.stringify(shown)}: ${reason}; use a relative path inside the workspace ` +
      `such as "data/file.txt"`,
    { path: shown, reason },
  );
}

/**
 * Normalise a workspace path, refusing anything that could escape or confuse the workspace (see the module notes).
 * @param p the path as a tool gave it; `""`, `"."` and `"./"` mean the root
 * @param options `directory: true` accepts a trailing `/`; `operation` names the host call in errors
 * @returns the normalised path (`""` for the root)
 * @throws TypeError when `p` is not a string
 * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS`) when the path is refused
 * @example normalizeWorkspacePath("./data//in.txt") // "data/in.txt"
 */
export function normalizeWorkspacePath(p: string, options: NormalizeOptions = {}): string {
  const { segments, slash } = splitWorkspacePath(p, options);
  if (slash && segments.length > 0 && options.directory !== true) {
    throw pathViolation(options.operation ?? "fs.access", p, "a trailing '/' names a directory, but a file was expected");
  }
  return segments.join("/");
}

/** Where a capsule stores the workspace's entries: the longer of `workspace/before/` and `workspace/after/` (ARCHITECTURE "Capsule"). */
const CAPSULE_PREFIX = "workspace/before/";
/** Longest ustar `name` field, `prefix` field, and so path, of a capsule entry (ARCHITECTURE "Capsule"). */
const USTAR_NAME = 100;
const USTAR_PREFIX = 155;

/**
 * Why a capsule could not carry a workspace entry at `path`, or null when it can. A capsule's entry paths are
 * printable ASCII and fit a ustar header without extensions (segments of at most 100 characters; a path split into a
 * prefix of at most 155 and a name of at most 100), under `workspace/before/` and `workspace/after/`; a name the
 * workspace took but the capsule could not carry would lose the run's record, so it is refused when it is made.
 * @param path a normalised workspace path
 * @returns `[errno, reason]`: `EILSEQ` for a character outside printable ASCII, `ENAMETOOLONG` for a length; or null
 * @example uncarriedPath("temp/ü.txt") // ["EILSEQ", "…"]
 */
export function uncarriedPath(path: string): ["EILSEQ" | "ENAMETOOLONG", string] | null {
  const fix = "a capsule records workspace names as printable ASCII (ARCHITECTURE \"Capsule\"); choose such a name";
  const bad = /[^\x20-\x7e]/u.exec(path);
  if (bad !== null) return ["EILSEQ", `the name contains ${JSON.stringify(bad[0])}, which is not printable ASCII: ${fix}`];
  const long = path.split("/").find((segment) => segment.length > USTAR_NAME);
  const full = CAPSULE_PREFIX + path;
  let name = full;
  while (name.length > USTAR_NAME && name.includes("/")) name = name.slice(name.indexOf("/") + 1);
  if (long !== undefined || name.length > USTAR_NAME || full.length - name.length - 1 > USTAR_PREFIX) {
    return ["ENAMETOOLONG", `the path is too long for a capsule, which records it in a ustar header: each name at most ` +
      `${USTAR_NAME} characters, the whole path at most ${USTAR_PREFIX + 1 + USTAR_NAME - CAPSULE_PREFIX.length} ` +
      `(ARCHITECTURE "Capsule"); choose a shorter name`];
  }
  return null;
}

/** Options of {@link splitWorkspacePath}. */
export type SplitOptions = {
  /** Keep `..` segments (for a resolver that confines them itself). Default false: `..` is refused. */
  dotdot?: boolean;
  /** The host operation, for the error's `attemptedCapability` (default `"fs.access"`). */
  operation?: string;
};

/**
 * Check a relative path and split it into segments, dropping empty and `.` segments (and, unless `dotdot`, refusing
 * `..`). The checks are those of {@link normalizeWorkspacePath}, except that the depth limit applies to the segments
 * kept only when `dotdot` is false (a resolver checks the depth of what a path resolves to).
 * @param p the path as a tool gave it
 * @param options `dotdot: true` keeps `..` segments; `operation` names the host call in errors
 * @returns the segments and whether the path ended with `/` (after at least one segment)
 * @throws TypeError when `p` is not a string
 * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS`) when the path is refused
 * @example splitWorkspacePath("a/../b/", { dotdot: true }) // { segments: ["a", "..", "b"], slash: true }
 */
export function splitWorkspacePath(p: string, options: SplitOptions = {}): { segments: string[]; slash: boolean } {
  if (typeof p !== "string") throw new TypeError(`"path" expected a string, got ${typeof p}`);
  const op = options.operation ?? "fs.access";
  const refuse = (reason: string): ReachError => pathViolation(op, p, reason);

  // Cheap length bound first, so that nothing below runs on huge input.
  if (p.length > MAX_PATH_BYTES || encoder.encode(p).length > MAX_PATH_BYTES) {
    throw refuse(`the path is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (CONTROL.test(p)) throw refuse("the path contains NUL or another control character");
  if (LONE_SURROGATE.test(p)) throw refuse("the path is not well-formed Unicode (lone surrogate)");
  if (p.includes("\\")) throw refuse("backslashes are not allowed; use '/' as the separator");
  if (p.startsWith("/")) throw refuse("absolute paths are not allowed");

  const segments: string[] = [];
  for (const segment of p.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === ".." && options.dotdot !== true) throw refuse("'..' segments are not allowed");
    if (encoder.encode(segment).length > MAX_SEGMENT_BYTES) {
      throw refuse(`a path segment is longer than ${MAX_SEGMENT_BYTES} bytes`);
    }
    segments.push(segment);
  }
  if (options.dotdot !== true && segments.length > MAX_PATH_DEPTH) {
    throw refuse(`the path is deeper than ${MAX_PATH_DEPTH} segments`);
  }
  return { segments, slash: p.endsWith("/") && segments.length > 0 };
}

/**
 * The parent of a normalised path (`""` for top-level entries and for the root).
 * @param path a normalised path
 * @returns the parent's normalised path
 * @example parentPath("a/b/c") // "a/b"
 */
export function parentPath(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/**
 * The proper ancestors of a normalised path, outermost first, root excluded.
 * @param path a normalised path
 * @returns e.g. `["a", "a/b"]` for `"a/b/c"`
 * @example ancestorPaths("a/b/c") // ["a", "a/b"]
 */
export function ancestorPaths(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) out.push(path.slice(0, i));
  return out;
}

/**
 * True when normalised `path` is `dir` or lies below it.
 * @param path a normalised path
 * @param dir a normalised directory path (`""` is the root, which contains everything)
 * @returns whether `path` is inside `dir`
 * @example isWithin("data/a.txt", "data") // true
 */
export function isWithin(path: string, dir: string): boolean {
  return dir === "" || path === dir || path.startsWith(dir + "/");
}
