/**
 * Deprecated features (seed 003 §9.2): each is documented in the CHANGELOG ("Deprecated"), still accepted for at
 * least two minor versions, and warned about whenever it is used — on stderr (the engine's `warning` progress) and in
 * the run record (`deprecations` of the capsule's `result.json`, hashed with the run, present only when one was used,
 * so runs that use none keep their run hashes). A test keeps this table and the CHANGELOG in step.
 * @module
 */

/** One deprecated feature. */
export type Deprecation = {
  /** Stable id, also the CHANGELOG's anchor text. */
  readonly id: string;
  /** What is deprecated. */
  readonly feature: string;
  /** The reach-wasm version that deprecated it. */
  readonly since: string;
  /** The earliest version that may remove it (seed 003 §9.2: two minor versions later at least, or the next major). */
  readonly removableIn: string;
  /** What to do instead. */
  readonly instead: string;
};

/** Every deprecated feature, by id. */
export const DEPRECATIONS = {
  "plan.approval.unsigned": {
    id: "plan.approval.unsigned",
    feature: 'an unsigned "approval" object in a plan ({approved_by, approved_at, method}); since signed approvals it approves nothing',
    since: "0.1.0",
    removableIn: "0.3.0",
    instead: "approve with --approve, or sign the plan hash with `reach-wasm approve PLAN_HASH --key KEY --out approval.json` and pass --approval approval.json (or carry that signed record in the plan)",
  },
  "manifest.capabilities.tools.names": {
    id: "manifest.capabilities.tools.names",
    feature: 'tool names as plain strings in manifest.capabilities.tools (the short form of seed 003 §4.1, e.g. ["echo"])',
    since: "0.1.0",
    removableIn: "0.3.0",
    instead: 'declare each tool as an object, as seed 003 §5.3 and pack.schema.json do: {"name": "echo"} (optionally with "version")',
  },
} as const satisfies Readonly<Record<string, Deprecation>>;

/** A deprecated feature's id. */
export type DeprecationId = keyof typeof DEPRECATIONS;

/** A use of a deprecated feature, as the run records it. */
export type DeprecationNotice = { id: DeprecationId; message: string };

/**
 * The notice for a use of a deprecated feature.
 * @param id the feature
 * @param where where it was used (e.g. `plan "p1"`)
 * @returns `{id, message}`; the message names the feature, the versions and what to do instead
 * @example deprecationNotice("plan.approval.unsigned", 'plan "p1"').message
 */
export function deprecationNotice(id: DeprecationId, where: string): DeprecationNotice {
  const d: Deprecation = DEPRECATIONS[id];
  return { id, message: `deprecated (${d.id}, since ${d.since}; may be removed in ${d.removableIn}): ${where} uses ${d.feature}; ${d.instead}` };
}

/**
 * The deprecated features a plan document uses (read before the plan gate, so that a refused plan is warned about too).
 * @param plan the plan as the planner made it (untrusted JSON)
 * @returns one notice per feature used, in table order
 * @example planDeprecations({ plan_id: "p1", approval: { approved_by: "ops", approved_at: "…", method: "record" } })
 */
export function planDeprecations(plan: unknown): DeprecationNotice[] {
  if (plan === null || typeof plan !== "object") return [];
  const p = plan as Record<string, unknown>;
  const where = `plan ${typeof p["plan_id"] === "string" ? JSON.stringify(p["plan_id"].slice(0, 100)) : "(no plan_id)"}`;
  const approval = p["approval"];
  const unsigned = approval !== null && typeof approval === "object" && !Array.isArray(approval) && !Object.hasOwn(approval, "signature");
  // seed 001's own form ({approved_by, approved_at, required}) is the planner's statement, never an approval here
  const seed001 = unsigned && Object.hasOwn(approval, "required") && !Object.hasOwn(approval, "method");
  return unsigned && !seed001 ? [deprecationNotice("plan.approval.unsigned", where)] : [];
}

/**
 * Read a pack document's deprecated forms as their current ones (seed 003 §9.2: still accepted, warned about):
 * a tool named by a plain string in `manifest.capabilities.tools` becomes `{"name": …}`. Runs before the pack schema,
 * never mutates its argument, and leaves a document without deprecated forms as it is (the same object).
 * @param raw the parsed `reach.json` (untrusted JSON)
 * @param where how to name the document in the notice (e.g. `reach.json of pack "notes"`)
 * @returns the document to validate, and one notice per deprecated form it used
 * @example upgradePackDocument({ manifest: { capabilities: { tools: ["echo"] } } }, "reach.json").document
 */
export function upgradePackDocument(raw: unknown, where: string): { document: unknown; deprecations: DeprecationNotice[] } {
  const manifest = _object(_object(raw)?.["manifest"]);
  const capabilities = _object(manifest?.["capabilities"]);
  const tools = capabilities?.["tools"];
  if (!Array.isArray(tools) || !tools.some((t) => typeof t === "string")) return { document: raw, deprecations: [] };
  const upgraded = tools.map((t: unknown) => (typeof t === "string" ? { name: t } : t));
  const document = { ...(raw as object), manifest: { ...manifest, capabilities: { ...capabilities, tools: upgraded } } };
  return { document, deprecations: [deprecationNotice("manifest.capabilities.tools.names", where)] };
}

function _object(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
