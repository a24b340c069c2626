/**
 * Dependency resolution (seed 003 §4.1 "Dependencies: external packs or resources required"; §3.1 PREPARING), offline
 * and deterministic: a dependency `{id, version, optional?, source?}` of `reach.json` resolves to the pack vendored
 * inside this one at `deps/<id>/` (its own `reach.json` and files, covered by this pack's digest and carried in its
 * capsule), when that pack's `id` is the dependency's, its `version` satisfies the dependency's SemVer range, and —
 * when `source` is `sha256:<digest>` — its pack digest is that digest. Its own dependencies resolve the same way
 * inside it. Nothing is fetched: any other `source` (a registry, `https:`, `git:`) cannot be resolved here, and a
 * dependency that is missing or does not match is `PACK_DEPENDENCY_UNRESOLVED` with how to vendor it; an `optional`
 * one becomes a warning. A resolved dependency is locked by its digest; its tools are not merged into this pack.
 * @module
 */
import { issueMessage, ReachError } from "../protocol/mod.ts";
import { upgradePackDocument } from "../protocol/mod.ts";
import { PackSchema } from "../protocol/mod.ts";
import type { Dependency } from "../protocol/mod.ts";
import { packDigest } from "../trust/mod.ts";

/** Where vendored dependencies live inside a pack. */
export const DEPS_DIR = "deps/";
/** How deep vendored dependencies may nest. */
export const MAX_DEPENDENCY_DEPTH = 8;

/** A resolved dependency. */
export type ResolvedDependency = { readonly id: string; readonly version: string; readonly digest: string; readonly path: string };

type Version = [number, number, number];

function parseVersion(text: string): Version | null {
  const m = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/.exec(text);
  return m === null ? null : [Number(m[1]), Number(m[2]), Number(m[3])];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** One comparator of a range as the lower and upper bounds it allows; null when it is not understood. */
function comparator(token: string): ((v: Version) => boolean) | null {
  if (token === "*" || token === "x" || token === "X") return () => true;
  const m = /^(\^|~|>=|<=|>|<|=)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$/.exec(token);
  if (m === null) return null;
  const op = m[1] ?? "";
  const parts = [m[2], m[3], m[4]].map((p) => (p === undefined || /^[xX*]$/.test(p) ? null : Number(p)));
  const given = parts.findIndex((p) => p === null);
  const n = given < 0 ? 3 : given; // how many leading parts are numbers
  if (parts.slice(n).some((p) => p !== null)) return null; // 1.x.3
  const base: Version = [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
  if (op === "" || op === "=") {
    if (n === 3) return (v) => compare(v, base) === 0;
    return (v) => v.slice(0, n).every((x, i) => x === base[i]);
  }
  if (op === ">=") return (v) => compare(v, base) >= 0;
  if (op === ">") return n === 3 ? (v) => compare(v, base) > 0 : (v) => v.slice(0, n).some((x, i) => x !== base[i]) && compare(v, base) > 0;
  if (op === "<") return (v) => compare(v, base) < 0;
  if (op === "<=") return n === 3 ? (v) => compare(v, base) <= 0 : (v) => compare(v, base) < 0 || v.slice(0, n).every((x, i) => x === base[i]);
  if (op === "~") return (v) => compare(v, base) >= 0 && v[0] === base[0] && (n < 2 || v[1] === base[1]);
  // ^: the left-most non-zero part stays the same
  const fixed = base[0] !== 0 || n < 2 ? 1 : base[1] !== 0 || n < 3 ? 2 : 3;
  return (v) => compare(v, base) >= 0 && v.slice(0, fixed).every((x, i) => x === base[i]);
}

/**
 * Whether a version satisfies a SemVer range: `1.2.3`, `=1.2.3`, `^1.2`, `~1.2.3`, `>=1.0.0 <2.0.0`, `1.x`, `*`, and
 * alternatives joined by `||` (pre-release tags are not supported).
 * @param version a `MAJOR.MINOR.PATCH` version
 * @param range the range
 * @returns true or false; null when the range or the version is not understood
 * @example satisfies("1.4.0", "^1.2.0") // true
 */
export function satisfies(version: string, range: string): boolean | null {
  const v = parseVersion(version);
  if (v === null) return null;
  let any = false;
  for (const alt of range.split("||")) {
    const tokens = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1").split(/\s+/).filter((t) => t !== "");
    const tests = (tokens.length === 0 ? ["*"] : tokens).map(comparator);
    if (tests.some((t) => t === null)) return null;
    if (tests.every((t) => t!(v))) any = true;
  }
  return any;
}

function unresolved(dep: Dependency, where: string, why: string): ReachError {
  return new ReachError("PACK_DEPENDENCY_UNRESOLVED", `${where}: dependency ${dep.id}@${dep.version} is unresolved: ${why}; dependencies resolve offline only — copy the pack into ${DEPS_DIR}${dep.id}/ of this pack (its reach.json at ${DEPS_DIR}${dep.id}/reach.json), optionally pinned by "source": "sha256:<its pack digest>", or mark the dependency "optional": true`, {
    details: { dependency: dep.id, version: dep.version, ...(dep.source === undefined ? {} : { source: dep.source }) },
  });
}

/** The files under `prefix`, with the prefix taken off. */
function subtree(files: ReadonlyMap<string, Uint8Array>, prefix: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [p, b] of files) if (p.startsWith(prefix)) out.set(p.slice(prefix.length), b);
  return out;
}

function resolveOne(dep: Dependency, files: ReadonlyMap<string, Uint8Array>, base: string, depth: number): ResolvedDependency[] {
  const where = base === "" ? "reach.json" : `${base}reach.json`;
  if (dep.id === "." || dep.id === "..") throw new ReachError("PACK_INVALID_MANIFEST", `${where}: dependency id ${JSON.stringify(dep.id)} is not a pack id`);
  if (dep.source !== undefined && !/^sha256:[0-9a-f]{64}$/.test(dep.source)) throw unresolved(dep, where, `its source ${JSON.stringify(dep.source.slice(0, 200))} would have to be fetched`);
  const prefix = `${DEPS_DIR}${dep.id}/`;
  const mine = subtree(files, prefix);
  const doc = mine.get("reach.json");
  if (doc === undefined) throw unresolved(dep, where, `${base}${prefix}reach.json is not in the pack`);
  let parsed: ReturnType<ReturnType<typeof PackSchema>["safeParse"]>;
  try {
    parsed = PackSchema().safeParse(upgradePackDocument(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(doc)), `${prefix}reach.json`).document);
  } catch (err) {
    throw unresolved(dep, where, `${base}${prefix}reach.json is not JSON (${(err as Error).message})`);
  }
  if (!parsed.success) throw unresolved(dep, where, `${base}${prefix}reach.json is not a valid pack document (${parsed.error.issues[0] === undefined ? "invalid" : issueMessage(parsed.error.issues[0])})`);
  const pack = parsed.data;
  if (pack.id !== dep.id) throw unresolved(dep, where, `${base}${prefix} holds pack ${JSON.stringify(pack.id)}`);
  const ok = satisfies(pack.version, dep.version);
  if (ok === null) throw unresolved(dep, where, `the version range ${JSON.stringify(dep.version)} is not understood (use e.g. 1.2.3, ^1.2.0, ~1.2.3, >=1.0.0 <2.0.0)`);
  if (!ok) throw unresolved(dep, where, `the vendored pack is version ${pack.version}`);
  const digest = packDigest(mine);
  if (dep.source !== undefined && dep.source !== `sha256:${digest}`) throw unresolved(dep, where, `the vendored pack's digest is ${digest}, the source pins ${dep.source.slice(7)}`);
  const nested = resolveAll(pack.dependencies ?? [], mine, `${base}${prefix}`, depth + 1);
  return [{ id: pack.id, version: pack.version, digest, path: `${base}${prefix}`.slice(0, -1) }, ...nested.resolved];
}

function resolveAll(deps: readonly Dependency[], files: ReadonlyMap<string, Uint8Array>, base: string, depth: number): { resolved: ResolvedDependency[]; warnings: string[] } {
  if (deps.length > 0 && depth > MAX_DEPENDENCY_DEPTH) throw new ReachError("PACK_DEPENDENCY_UNRESOLVED", `${base}reach.json: dependencies nest deeper than ${MAX_DEPENDENCY_DEPTH} levels; flatten them`);
  const resolved: ResolvedDependency[] = [];
  const warnings: string[] = [];
  for (const dep of deps) {
    try {
      resolved.push(...resolveOne(dep, files, base, depth));
    } catch (err) {
      if (!(err instanceof ReachError) || err.code !== "PACK_DEPENDENCY_UNRESOLVED" || dep.optional !== true) throw err;
      warnings.push(`optional ${err.message}`);
    }
  }
  return { resolved, warnings };
}

/**
 * Resolve a pack's dependencies against the packs vendored inside it (see the module notes).
 * @param deps the pack's `dependencies`
 * @param files the pack's files
 * @returns every resolved dependency (nested ones after their parent), and a warning per unresolved optional one
 * @throws ReachError `PACK_DEPENDENCY_UNRESOLVED` naming the dependency, why, and how to vendor it;
 *   `PACK_INVALID_MANIFEST` for a dependency id that is not a pack id
 * @example resolveDependencies([{ id: "util", version: "^1.0.0" }], files) // [{ id: "util", version: "1.2.0", digest, path: "deps/util" }]
 */
export function resolveDependencies(deps: readonly Dependency[], files: ReadonlyMap<string, Uint8Array>): { resolved: ResolvedDependency[]; warnings: string[] } {
  return resolveAll(deps, files, "", 1);
}
