/**
 * Delegation scopes (seed 003 §6.2): the capabilities a delegated run may use, one entry per capability:
 *
 * | entry | covers |
 * |---|---|
 * | `tool:NAME` | the declared tool `NAME` (`manifest.capabilities.tools[].name`), or the built-in infrastructure tool `NAME` (`write_memory`, `read_memory`, `write_temp`, `read_lines`, `exec_python`) |
 * | `resource:URI` | the declared resource `URI`; a `URI` ending in `/` also covers every resource under it |
 * | `permission:NAME` | the declared permission `NAME` (`network`, `filesystem`, `execution`, `env_access`) |
 * | `host:NAME` | the allowed host `NAME` (`manifest.policies.allowedHosts`); `host:*.example.com` covers every subdomain |
 *
 * Rule 2 ("scope MUST be a subset of the delegator's capabilities") is {@link scopeExcess}: every entry of a child
 * link must be covered by an entry of its parent. A pack runs under a scope only when everything it declares is
 * covered ({@link packExcess}).
 *
 * The infrastructure tools every run has without declaring them are granted only by name: a scope without
 * `tool:exec_python` does not let a delegated plan call `exec_python`, whatever else it grants
 * ({@link grantedInfraTools}; the delegate runs the engine with the others withheld, so a plan — static, planned or
 * replanned — that calls one is refused before it runs). Since scopes narrow by entry, a re-delegation can pass an
 * infrastructure tool on only when its parent names it.
 * @module
 */
import { TOOL_NAME_RE } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { Pack } from "../protocol/mod.ts";
import { PermissionSchema } from "../protocol/mod.ts";

/** The kinds of scope entry. */
export type ScopeKind = "tool" | "resource" | "permission" | "host";

const HOST_RE = /^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const URI_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

/**
 * Why a scope entry is malformed, or `undefined` when it is well formed.
 * @param entry a scope entry such as `tool:wordcount`
 * @returns a description of the problem, or undefined
 * @throws never
 * @example scopeEntryProblem("tool:wordcount") // undefined
 */
export function scopeEntryProblem(entry: string): string | undefined {
  const colon = entry.indexOf(":");
  const kind = entry.slice(0, colon);
  const value = entry.slice(colon + 1);
  if (colon < 1 || value === "") return `${JSON.stringify(entry)} is not KIND:VALUE (tool:NAME, resource:URI, permission:NAME or host:NAME)`;
  if (entry.length > 1024) return `${JSON.stringify(entry.slice(0, 40))}… is longer than 1024 characters`;
  switch (kind) {
    case "tool":
      return TOOL_NAME_RE.test(value) ? undefined : `${JSON.stringify(entry)}: a tool name has letters, digits, '.', '_' and '-' only`;
    case "resource":
      return URI_RE.test(value) ? undefined : `${JSON.stringify(entry)}: expected a URI with a scheme, e.g. resource:workspace:///data/`;
    case "permission":
      return PermissionSchema().safeParse(value).success ? undefined : `${JSON.stringify(entry)}: expected one of ${PermissionSchema().options.map((p) => `permission:${p}`).join(", ")}`;
    case "host":
      return HOST_RE.test(value) ? undefined : `${JSON.stringify(entry)}: expected a host such as host:api.example.com or host:*.example.com`;
    default:
      return `${JSON.stringify(entry)}: unknown kind "${kind}"; use tool:, resource:, permission: or host:`;
  }
}

/**
 * Check every entry of a scope.
 * @param scope the entries
 * @param what how to name the scope in the error
 * @returns the scope, unchanged
 * @throws ReachError `FED_DELEGATION_INVALID` naming the first malformed entry
 * @example assertScope(["tool:wordcount"], "--scope")
 */
export function assertScope(scope: readonly string[], what: string): readonly string[] {
  for (const entry of scope) {
    const problem = scopeEntryProblem(entry);
    if (problem !== undefined) throw new ReachError("FED_DELEGATION_INVALID", `${what}: ${problem}`, { details: { entry } });
  }
  return scope;
}

function hostCovers(parent: string, child: string): boolean {
  const p = parent.toLowerCase();
  const c = child.toLowerCase();
  if (p === c) return true;
  if (!p.startsWith("*.")) return false;
  const suffix = p.slice(1); // ".example.com"
  return c.endsWith(suffix) && c.length > suffix.length && c !== `*${suffix}`;
}

/**
 * Whether scope entry `parent` covers scope entry `child`.
 * @param parent an entry of the wider scope
 * @param child an entry of the narrower scope
 * @returns true when everything `child` allows is allowed by `parent`
 * @throws never
 * @example entryCovers("resource:workspace:///data/", "resource:workspace:///data/in/") // true
 */
export function entryCovers(parent: string, child: string): boolean {
  const pc = parent.indexOf(":");
  const cc = child.indexOf(":");
  if (pc < 1 || cc < 1 || parent.slice(0, pc) !== child.slice(0, cc)) return false;
  const kind = parent.slice(0, pc);
  const p = parent.slice(pc + 1);
  const c = child.slice(cc + 1);
  if (kind === "resource") return p === c || (p.endsWith("/") && c.startsWith(p));
  if (kind === "host") return hostCovers(p, c);
  return p === c;
}

/**
 * The entries of `child` that `parent` does not cover (seed 003 §6.2 rule 2).
 * @param child the narrower scope
 * @param parent the wider scope
 * @returns the uncovered entries, in `child`'s order (empty when `child` ⊆ `parent`)
 * @throws never
 * @example scopeExcess(["tool:a", "tool:b"], ["tool:a"]) // ["tool:b"]
 */
export function scopeExcess(child: readonly string[], parent: readonly string[]): string[] {
  return child.filter((c) => !parent.some((p) => entryCovers(p, c)));
}

/**
 * Everything a pack declares, as scope entries: its tools, resources, permissions and allowed hosts.
 * @param pack the parsed pack document
 * @returns the entries, in declaration order
 * @throws never
 * @example packDeclarations(pack) // ["tool:wordcount"]
 */
export function packDeclarations(pack: Pack): string[] {
  const caps = pack.manifest.capabilities;
  return [
    ...caps.tools.map((t) => `tool:${t.name}`),
    ...caps.resources.map((r) => `resource:${r.uri}`),
    ...caps.permissions.map((p) => `permission:${p}`),
    ...pack.manifest.policies.allowedHosts.map((h) => `host:${h}`),
  ];
}

/**
 * What a pack declares beyond a scope.
 * @param pack the parsed pack document
 * @param scope the delegated scope
 * @returns the declared entries the scope does not cover (empty when the pack fits)
 * @throws never
 * @example packExcess(pack, ["tool:wordcount"]) // []
 */
export function packExcess(pack: Pack, scope: readonly string[]): string[] {
  return scopeExcess(packDeclarations(pack), scope);
}

/**
 * The infrastructure tools a scope grants: only those it names, `tool:NAME` (seed 003 §6.2 rule 1, "explicitly
 * granted"); no other entry grants one.
 * @param scope the delegated scope
 * @param infraNames the engine's infrastructure tool names
 * @returns the granted names, in `infraNames` order
 * @throws never
 * @example grantedInfraTools(["tool:wordcount", "tool:exec_python"], INFRA_TOOL_NAMES) // ["exec_python"]
 */
export function grantedInfraTools(scope: readonly string[], infraNames: readonly string[]): string[] {
  return infraNames.filter((n) => scope.some((e) => entryCovers(e, `tool:${n}`)));
}
