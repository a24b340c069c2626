/**
 * The post-execution capability audit (seed 003 §4.2 "Enforcement Points: 3. Post-execution: audit actual vs declared
 * capability usage"): what the pack declared, what the run actually used — as its events, its tape and its workspace
 * show — what it declared but never used, and every attempt at something undeclared. A pure function of the run's
 * record, so it is the same on every replay and runtime and can be hashed with the run (`result.json`).
 *
 * - tools: `used` are the tools of `tool.invoked` events (built-in infrastructure tools included).
 * - permissions: `filesystem` is used when a filesystem host call succeeded or the workspace changed (WASI tools reach
 *   it through preopens, not host calls); `network` when an `http.fetch` succeeded. The other permissions
 *   (`execution`, `env_access`) leave no trace the run can observe, so they are never listed as unused.
 * - resources: a `workspace:///<root>/` resource is used when a successful filesystem call named a path under it or a
 *   file under it changed; `memory://<prefix>` when a memory call named a key under it; `http(s)://…` when a fetch
 *   went under it.
 * - hosts: the allowed host patterns and the hosts successfully fetched from.
 * - undeclared: every `policy.violation` of the run (its type, the capability attempted, the step), in order.
 * - secrets (only when the pack declares any): the declared names, and those a successful `http.fetch` carried as a
 *   `{{secret:NAME}}` placeholder (URL, header value or body); names only, never a value.
 * @module
 */
import type { Manifest } from "../protocol/mod.ts";
import type { OpName } from "./capabilities.ts";
import { requiredPermission } from "./capabilities.ts";

/** Declared, used and unused names of one kind of capability (sorted). */
export type UsageAudit = { declared: string[]; used: string[]; unused: string[] };

/** The audit of one run (see the module notes). */
export type CapabilityAudit = {
  tools: UsageAudit;
  permissions: UsageAudit;
  resources: UsageAudit;
  hosts: { allowed: string[]; contacted: string[] };
  undeclared: { violationType: string; attemptedCapability: string; stepId?: string }[];
  /** Declared secrets and those a request carried (by name; present only when the pack declares secrets). */
  secrets?: UsageAudit;
};

/** What the audit reads of an event. */
export type AuditEvent = { readonly type: string; readonly payload: Readonly<Record<string, unknown>> };
/** What the audit reads of a tape record. */
export type AuditCall = { readonly op: string; readonly request: unknown; readonly error?: unknown };

/** Permissions a host call can show in use. */
const OBSERVABLE: ReadonlySet<string> = new Set(["filesystem", "network"]);

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

function usage(declared: Iterable<string>, used: Iterable<string>, observable: (name: string) => boolean = () => true): UsageAudit {
  const d = sorted(declared);
  const u = sorted(used);
  return { declared: d, used: u, unused: d.filter((x) => !u.includes(x) && observable(x)) };
}

function field(request: unknown, name: string): string | null {
  if (request === null || typeof request !== "object") return null;
  const v = (request as Record<string, unknown>)[name];
  return typeof v === "string" ? v : null;
}

/** The resource URI a successful call used, or null. */
function resourceOf(call: AuditCall, uris: readonly string[]): string | null {
  const op = call.op;
  let target: string | null = null;
  if (op === "memory.get" || op === "memory.set") target = `memory://${field(call.request, "key") ?? ""}`;
  else if (op === "http.fetch") target = field(call.request, "url");
  else if (requiredPermission(op as OpName) === "filesystem") {
    const path = op === "temp.write" ? `temp/${field(call.request, "name") ?? ""}` : field(call.request, "path");
    if (path !== null) target = `workspace:///${path.replace(/^(\.?\/)+/, "")}`;
  }
  if (target === null) return null;
  return uris.find((u) => target.startsWith(u) || `${target}/` === u) ?? null;
}

function hostOf(url: string | null): string | null {
  if (url === null) return null;
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/**
 * Audit a run's use of its capabilities.
 * @param manifest the pack's (locked) manifest
 * @param events the run's events, in order
 * @param calls the run's host calls (its tape), in order
 * @param changedPaths workspace paths (`root/…`) whose content differs after the run
 * @param secrets the names of the pack's declared secrets (`reach.json` `secrets`), when it declares any
 * @returns the audit, every list sorted except `undeclared` (event order)
 * @example auditCapabilities(loaded.pack.manifest, log.events, tape.records, ["out/report.txt"])
 */
export function auditCapabilities(manifest: Manifest, events: readonly AuditEvent[], calls: readonly AuditCall[], changedPaths: readonly string[], secrets?: readonly string[]): CapabilityAudit {
  const caps = manifest.capabilities;
  const uris = caps.resources.map((r) => r.uri);
  const ok = calls.filter((c) => c.error === undefined);
  const permissions = new Set<string>();
  for (const c of ok) {
    const p = requiredPermission(c.op as OpName);
    if (p !== null) permissions.add(p);
  }
  if (changedPaths.length > 0) permissions.add("filesystem");
  const resources = new Set<string>();
  for (const c of ok) {
    const r = resourceOf(c, uris);
    if (r !== null) resources.add(r);
  }
  for (const p of changedPaths) {
    const r = uris.find((u) => `workspace:///${p}`.startsWith(u));
    if (r !== undefined) resources.add(r);
  }
  const contacted = ok.filter((c) => c.op === "http.fetch").map((c) => hostOf(field(c.request, "url"))).filter((h): h is string => h !== null);
  const undeclared = events.filter((e) => e.type === "policy.violation").map((e) => {
    const stepId = e.payload["stepId"];
    return {
      violationType: String(e.payload["violationType"] ?? ""),
      attemptedCapability: String(e.payload["attemptedCapability"] ?? ""),
      ...(typeof stepId === "string" ? { stepId } : {}),
    };
  });
  return {
    tools: usage(caps.tools.map((t) => t.name), events.filter((e) => e.type === "tool.invoked").map((e) => String(e.payload["toolName"]))),
    permissions: usage(caps.permissions, permissions, (p) => OBSERVABLE.has(p)),
    resources: usage(uris, resources),
    hosts: { allowed: sorted(manifest.policies.allowedHosts), contacted: sorted(contacted) },
    undeclared,
    ...(secrets === undefined || secrets.length === 0 ? {} : { secrets: usage(secrets, ok.filter((c) => c.op === "http.fetch").flatMap((c) => secretsIn(c.request))) }),
  };
}

const SECRET_PLACEHOLDER = /(?:\{\{|%7[Bb]%7[Bb])secret:([A-Za-z_][A-Za-z0-9_]{0,63})(?:\}\}|%7[Dd]%7[Dd])/g;

/** The secret names an `http.fetch` request carries as placeholders (URL, header values, body text or bytes). */
function secretsIn(request: unknown): string[] {
  if (request === null || typeof request !== "object") return [];
  const r = request as Record<string, unknown>;
  const texts: string[] = [];
  for (const k of ["url", "text"]) if (typeof r[k] === "string") texts.push(r[k] as string);
  if (typeof r["data"] === "string") {
    try {
      texts.push(atob(r["data"] as string));
    } catch {
      // not base64: the call failed validation and is not counted anyway
    }
  }
  const h = r["headers"];
  if (h !== null && typeof h === "object") for (const v of Object.values(h as Record<string, unknown>)) if (typeof v === "string") texts.push(v);
  return texts.flatMap((t) => [...t.matchAll(SECRET_PLACEHOLDER)].map((m) => m[1]!));
}

/**
 * The workspace paths whose content differs between two snapshots (added, removed or changed).
 * @param before the snapshot before the run
 * @param after the snapshot after it
 * @returns the paths, sorted
 * @example changedPaths([{ path: "a", sha256: "1" }], [{ path: "a", sha256: "2" }]) // ["a"]
 */
export function changedPaths(before: readonly { path: string; sha256: string }[], after: readonly { path: string; sha256: string }[]): string[] {
  const was = new Map(before.map((e) => [e.path, e.sha256]));
  const now = new Map(after.map((e) => [e.path, e.sha256]));
  return sorted([...[...now].filter(([p, h]) => was.get(p) !== h).map(([p]) => p), ...[...was.keys()].filter((p) => !now.has(p))]);
}
