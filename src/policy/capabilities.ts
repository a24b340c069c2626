/**
 * Capability decisions for the host API (seed 003 §4.1 "Declaration Requirements", §4.2 "Capability Enforcement
 * Semantics", §4.3 "Denial Behavior Requirements"; seed 000 "Marketplace Containment").
 *
 * Permission mapping (seed 003 §4.2 "Permission Checks: each operation MUST verify required permissions"; the
 * permission names are upstream's `Capabilities.permissions`):
 *
 * | op | needs permission | extra checks |
 * |---|---|---|
 * | `fs.read`, `fs.list`, `fs.stat`, `lines.read` | `filesystem` | the workspace's resource roots (read) |
 * | `fs.write`, `fs.remove` | `filesystem` | resource roots (write); `sandbox.filesystem: "readonly"` and restricted mode allow writes under `temp/` only |
 * | `temp.write` | `filesystem` | always under `temp/` (seed 002 `write_temp`) |
 * | `http.fetch` | `network` | `sandbox.network` ≠ `"none"`; not restricted; host in `policies.allowedHosts`; URL under a declared `http(s)://` resource when any is declared |
 * | `memory.get` / `memory.set` | — (seed 002 infra tools, always available) | key under a declared `memory://` prefix when any is declared; restricted mode refuses `memory.set` |
 * | `log`, `artifact.emit`, `clock.now`, `random.bytes`, `secret.placeholder` | — (always allowed: they reach nothing outside the run; a placeholder is not a value) | |
 *
 * Resource URIs (`capabilities.resources`, §4.1; read as prefixes, §4.2 "Resource Boundaries"):
 * - `workspace:///data/` → workspace root `data` with the declared access (`read`/`write`/`readwrite`); the
 *   workspace itself enforces roots (`Workspace.fromResources`). Only the three-slash form is accepted.
 * - `memory://notes/` → memory keys starting `notes/`; `memory://` alone covers every key. When no `memory://`
 *   resource is declared, every key is allowed (the store is run-scoped, seed 002).
 * - `http://…` / `https://…` → URL prefixes `http.fetch` must stay under. They do **not** add allowed hosts:
 *   `allowedHosts` come from `policies.allowedHosts` only, so one list decides where the network goes (§4.1
 *   "Policies") and a resource can only narrow it. A `read` resource admits `GET`/`HEAD` only.
 * - Other schemes are not reachable by any host op and are ignored here.
 *
 * Denials: an op the permissions do not grant, or that restricted mode forbids, is `PERMISSION_DENIED`; a target
 * outside the declared resources or hosts is `RESOURCE_ACCESS`; `attemptedCapability` is `op:target`, e.g.
 * `fs.write:data/x.txt` or `http.fetch:https://evil.com/`.
 * @module
 */
import { policyViolation } from "../protocol/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import type { Manifest, Permission, ResourceAccess } from "../protocol/mod.ts";
import { checkRedirect, checkUrlAllowed } from "./hosts.ts";

// policy/ sits below sandbox/ (sandbox/host imports it), so it names ops as strings and does not import the
// sandbox's types or path helpers; `HostOp` of sandbox/types.ts is assignable to `OpName`.
/** A host op name (see `HOST_OPS` of sandbox/types.ts). */
export type OpName = string;
type HostOp = OpName;

/** A declared workspace root, shaped like the workspace's `WorkspaceResource`. */
export type WorkspaceRootResource = { root: string; access: ResourceAccess; files?: Record<string, Uint8Array> };

/** Printable, clipped text for messages and details (control characters escaped, lone surrogates replaced). */
function displayPath(text: string): string {
  const printable = String(text)
    // eslint-disable-next-line no-control-regex -- escaping control characters is the point
    .replace(/[\u0000-\u001f\u007f]/gu, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))
    .replace(/\p{Surrogate}/gu, "\ufffd");
  const chars = Array.from(printable);
  return chars.length <= 200 ? printable : chars.slice(0, 200).join("") + "…";
}

/** Normalise the folder of a `workspace:///` URI: relative segments, no `.`/`..`, no control characters. */
function workspaceFolder(text: string): string {
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u001f\u007f\\]|\p{Surrogate}/u.test(text)) throw new TypeError("control characters or backslashes");
  const segs = text.split("/").filter((s) => s !== "" && s !== ".");
  if (segs.some((s) => s === "..")) throw new TypeError("'..' segments are not allowed");
  if (segs.length > 64 || segs.some((s) => s.length > 255)) throw new TypeError("the folder is too deep or long");
  return segs.join("/");
}

/** A `memory://` grant: keys starting with `prefix`. */
export type MemoryGrant = { readonly prefix: string; readonly access: ResourceAccess };
/** An `http(s)://` grant: URLs starting with `prefix` (normalised by the URL parser). */
export type UrlGrant = { readonly prefix: string; readonly access: ResourceAccess };

/** The capability decisions of one pack, computed once per run. */
export type CapabilityPolicy = {
  /** Declared permissions. */
  readonly permissions: ReadonlySet<Permission>;
  /** Workspace roots from `workspace:///` resources (without files), ready for `Workspace.fromResources`. */
  readonly workspaceRoots: readonly { readonly root: string; readonly access: ResourceAccess }[];
  /** `memory://` grants, or null when none is declared (every key allowed). */
  readonly memoryGrants: readonly MemoryGrant[] | null;
  /** `http(s)://` grants, or null when none is declared (allowedHosts alone decides). */
  readonly urlGrants: readonly UrlGrant[] | null;
  /** `policies.allowedHosts`. */
  readonly allowedHosts: readonly string[];
  /** `policies.sandbox.network === "none"`. */
  readonly networkDisabled: boolean;
  /** `policies.sandbox.filesystem === "readonly"`: writes only under `temp/`. */
  readonly filesystemReadonly: boolean;
  /** Restricted executor (seed 000 "Marketplace Containment"): no network, no writes outside `temp/`, no memory.set. */
  readonly restricted: boolean;
};

/** Options of {@link capabilityPolicy}. */
export type CapabilityOptions = {
  /** Run as a restricted executor (marketplace templates, untrusted packs). Default false. */
  restricted?: boolean;
};

const FS_OPS: ReadonlySet<HostOp> = new Set<HostOp>(["fs.read", "fs.list", "fs.stat", "fs.write", "fs.remove", "lines.read", "temp.write"]);
const FS_WRITE_OPS: ReadonlySet<HostOp> = new Set<HostOp>(["fs.write", "fs.remove"]);

/**
 * The permission an op needs (see the module table), or null when it is always allowed.
 * @param op a host op
 * @returns `"filesystem"`, `"network"` or null
 * @example requiredPermission("http.fetch") // "network"
 */
export function requiredPermission(op: HostOp): Permission | null {
  if (FS_OPS.has(op)) return "filesystem";
  if (op === "http.fetch") return "network";
  return null;
}

function resourceError(uri: string, why: string): TypeError {
  return new TypeError(`manifest.capabilities.resources: ${JSON.stringify(uri)} ${why}`);
}

/**
 * Compute the capability decisions of a manifest (seed 003 §4.2 "Pre-execution: validate all declared
 * capabilities are satisfiable": a resource URI that cannot be honoured is refused here).
 * @param manifest a parsed manifest (defaults filled)
 * @param options `restricted: true` for a restricted executor
 * @returns the policy
 * @throws TypeError when a `workspace:`, `memory:` or `http(s):` resource URI is malformed, or an allowedHosts entry is
 * @example const policy = capabilityPolicy(pack.manifest); Workspace.fromResources(policy.workspaceRoots.map(r => ({...r})))
 */
export function capabilityPolicy(manifest: Manifest, options: CapabilityOptions = {}): CapabilityPolicy {
  const caps = manifest.capabilities;
  const workspaceRoots: { root: string; access: ResourceAccess }[] = [];
  const memory: MemoryGrant[] = [];
  const urls: UrlGrant[] = [];
  for (const { uri, access } of caps.resources) {
    if (uri.startsWith("workspace:")) {
      if (!uri.startsWith("workspace:///")) throw resourceError(uri, `must be written "workspace:///<folder>/"`);
      let root: string;
      try {
        root = workspaceFolder(decodeURIComponent(uri.slice("workspace:///".length)));
      } catch (err) {
        throw resourceError(uri, `does not name a workspace folder: ${(err as Error).message}`);
      }
      if (root === "" || root === "temp") throw resourceError(uri, `must name a folder other than the root and "temp"`);
      if (workspaceRoots.some((r) => r.root === root)) throw resourceError(uri, "declares a folder twice");
      workspaceRoots.push({ root, access });
    } else if (uri.startsWith("memory:")) {
      if (!uri.startsWith("memory://")) throw resourceError(uri, `must be written "memory://<prefix>"`);
      let prefix: string;
      try {
        prefix = decodeURIComponent(uri.slice("memory://".length));
      } catch {
        throw resourceError(uri, "has a malformed %-escape");
      }
      memory.push({ prefix, access });
    } else if (uri.startsWith("http:") || uri.startsWith("https:")) {
      const check = checkUrlAllowed(uri, manifest.policies.allowedHosts);
      if (!check.ok) throw resourceError(uri, `is not reachable: ${check.reason}`);
      urls.push({ prefix: check.url, access });
    }
  }
  for (const h of manifest.policies.allowedHosts) checkUrlAllowed("http://example.invalid/", [h]); // validates patterns
  return {
    permissions: new Set(caps.permissions),
    workspaceRoots,
    memoryGrants: memory.length > 0 ? memory : null,
    urlGrants: urls.length > 0 ? urls : null,
    allowedHosts: [...manifest.policies.allowedHosts],
    networkDisabled: manifest.policies.sandbox.network === "none",
    filesystemReadonly: manifest.policies.sandbox.filesystem === "readonly",
    restricted: options.restricted === true,
  };
}

/**
 * The workspace resources of a policy, for `Workspace.fromResources` (files are added by the caller).
 * @param policy the policy
 * @param files initial files per root (optional)
 * @returns one resource per `workspace:///` URI
 * @example Workspace.fromResources(workspaceResources(policy))
 */
export function workspaceResources(
  policy: CapabilityPolicy,
  files: Record<string, Record<string, Uint8Array>> = {},
): WorkspaceRootResource[] {
  return policy.workspaceRoots.map((r) => {
    const f = files[r.root];
    return f === undefined ? { root: r.root, access: r.access } : { root: r.root, access: r.access, files: f };
  });
}

function denied(op: HostOp, target: string, message: string, reason: string): ReachError {
  return policyViolation("PERMISSION_DENIED", target === "" ? op : `${op}:${target}`, message, { op, reason });
}

/**
 * Check that an op may be used at all (permissions, sandbox settings, restricted mode). Targets are checked by
 * {@link checkFsTarget}, {@link checkMemoryKey} and {@link checkFetchUrl}.
 * @param policy the policy
 * @param op the host op
 * @param target what the op names (a path, key or URL), for the error's `attemptedCapability`
 * @throws ReachError `POLICY_VIOLATION` / `PERMISSION_DENIED`
 * @example checkOp(policy, "http.fetch", "https://api.example.com/")
 */
export function checkOp(policy: CapabilityPolicy, op: HostOp, target = ""): void {
  const need = requiredPermission(op);
  if (need !== null && !policy.permissions.has(need)) {
    throw denied(op, target, `${op} needs the "${need}" permission; add "${need}" to manifest.capabilities.permissions ` +
      `in reach.json if the tool needs it`, `permission "${need}" not declared`);
  }
  if (op === "http.fetch") {
    if (policy.restricted) {
      throw denied(op, target, `${op} is not available to a restricted executor (no network); run the pack as trusted`,
        "restricted executor");
    }
    if (policy.networkDisabled) {
      throw denied(op, target, `${op} is disabled by policies.sandbox.network "none"; set it to "restricted"`,
        "sandbox.network none");
    }
  }
  if (op === "mcp.call" && policy.restricted) {
    throw denied(op, target, `${op} is not available to a restricted executor (an MCP server runs outside the sandbox); run the pack as trusted`,
      "restricted executor");
  }
  if (op === "memory.set" && policy.restricted) {
    throw denied(op, target, `memory.set is not available to a restricted executor (no writes outside temp/); ` +
      `write to temp/ instead`, "restricted executor");
  }
}

/**
 * Check a normalised workspace path for a writing op against readonly / restricted mode (roots themselves are
 * enforced by the workspace).
 * @param policy the policy
 * @param op the host op
 * @param path the normalised path
 * @throws ReachError `POLICY_VIOLATION` / `PERMISSION_DENIED` for a write outside `temp/`
 * @example checkFsTarget(policy, "fs.write", "data/x.txt")
 */
export function checkFsTarget(policy: CapabilityPolicy, op: HostOp, path: string): void {
  if (!FS_WRITE_OPS.has(op)) return;
  if (!(policy.restricted || policy.filesystemReadonly)) return;
  if (path === "temp" || path.startsWith("temp/")) return;
  const why = policy.restricted ? "a restricted executor" : 'policies.sandbox.filesystem "readonly"';
  throw denied(op, displayPath(path), `${op} refused path ${JSON.stringify(displayPath(path))}: ${why} allows writes ` +
    `under temp/ only`, policy.restricted ? "restricted executor" : "sandbox.filesystem readonly");
}

/**
 * Check a memory key against the `memory://` grants.
 * @param policy the policy
 * @param op `memory.get` or `memory.set`
 * @param key the key
 * @throws ReachError `POLICY_VIOLATION`: `RESOURCE_ACCESS` outside every prefix, `PERMISSION_DENIED` without access
 * @example checkMemoryKey(policy, "memory.set", "notes/a")
 */
export function checkMemoryKey(policy: CapabilityPolicy, op: "memory.get" | "memory.set", key: string): void {
  const grants = policy.memoryGrants;
  if (grants === null) return;
  const shown = displayPath(key);
  let best: MemoryGrant | null = null;
  for (const g of grants) if (key.startsWith(g.prefix) && (best === null || g.prefix.length > best.prefix.length)) best = g;
  if (best === null) {
    throw policyViolation("RESOURCE_ACCESS", `${op}:${shown}`, `${op} refused key ${JSON.stringify(shown)}: it is ` +
      `outside every declared memory:// resource; declare one such as "memory://notes/"`, { key: shown, reason: "outside resources" });
  }
  const want = op === "memory.get" ? "read" : "write";
  if (best.access !== "readwrite" && best.access !== want) {
    throw policyViolation("PERMISSION_DENIED", `${op}:${shown}`, `${op} refused key ${JSON.stringify(shown)}: ` +
      `"memory://${best.prefix}" is "${best.access}" only; declare it with "${want}" access if the tool needs it`,
      { key: shown, reason: `${want} access not granted` });
  }
}

/**
 * Check a URL (the first request, or a redirect target) for `http.fetch`: allowedHosts, then the `http(s)://`
 * grants with the method's access.
 * @param policy the policy
 * @param url the URL asked for (or the redirect `Location`, with `from`)
 * @param method the HTTP method, upper case
 * @param from the URL that redirected, when `url` is a `Location`
 * @returns the normalised URL to fetch
 * @throws ReachError `POLICY_VIOLATION`: `RESOURCE_ACCESS` for a host or URL outside the declared ones,
 *   `PERMISSION_DENIED` for a writing method on a `read` resource
 * @example checkFetchUrl(policy, "https://API.example.com/v1", "GET") // "https://api.example.com/v1"
 */
export function checkFetchUrl(policy: CapabilityPolicy, url: string, method: string, from?: string): string {
  const check = from === undefined ? checkUrlAllowed(url, policy.allowedHosts) : checkRedirect(from, url, policy.allowedHosts);
  const shown = clipUrl(check.ok ? check.url : from === undefined ? url : resolveOrRaw(url, from));
  if (!check.ok) {
    throw policyViolation("RESOURCE_ACCESS", `http.fetch:${shown}`, `http.fetch to ${JSON.stringify(shown)} was ` +
      `refused: ${check.reason}; add the host to "policies.allowedHosts" in reach.json if the tool needs it`,
      { url: shown, reason: check.reason, redirect: from !== undefined });
  }
  const grants = policy.urlGrants;
  if (grants === null) return check.url;
  let best: UrlGrant | null = null;
  for (const g of grants) if (check.url.startsWith(g.prefix) && (best === null || g.prefix.length > best.prefix.length)) best = g;
  if (best === null) {
    throw policyViolation("RESOURCE_ACCESS", `http.fetch:${shown}`, `http.fetch to ${JSON.stringify(shown)} was ` +
      `refused: the URL is outside every declared http(s) resource; declare its prefix in capabilities.resources`,
      { url: shown, reason: "outside resources", redirect: from !== undefined });
  }
  if (best.access === "read" && method !== "GET" && method !== "HEAD") {
    throw policyViolation("PERMISSION_DENIED", `http.fetch:${shown}`, `http.fetch ${method} to ${JSON.stringify(shown)} ` +
      `was refused: the resource "${best.prefix}" is "read" only (GET, HEAD); declare "write" access if needed`,
      { url: shown, method, reason: "write access not granted" });
  }
  return check.url;
}

function resolveOrRaw(location: string, from: string): string {
  try {
    return new URL(location, from).href;
  } catch {
    return location;
  }
}

function clipUrl(url: string): string {
  return displayPath(url);
}
