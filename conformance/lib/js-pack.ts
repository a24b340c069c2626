/**
 * A pack of JS tools and a static plan, as files: what the run-model and parallel cases run.
 * @module
 */

const enc = new TextEncoder();

/**
 * Build the pack's files.
 * @param id the pack id
 * @param tools tool name → QuickJS module source (`tools/<name>.js`)
 * @param steps the plan's steps (`arguments` and `return_spec` default to `{}` and an object)
 * @param permissions the manifest's permissions
 * @returns relative path → bytes
 */
export function jsPack(id: string, tools: Record<string, string>, steps: object[], permissions: string[]): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const [name, src] of Object.entries(tools)) files.set(`tools/${name}.js`, enc.encode(src));
  files.set("plan.json", enc.encode(JSON.stringify({
    contract_version: "S2-B-05.v1", plan_id: "p", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "test", status: "APPROVED",
    risk: { level: 0 }, scope: { allowed: Object.keys(tools) }, steps: steps.map((s) => ({ arguments: {}, return_spec: { type: "object" }, ...s })), success_criteria: [],
  })));
  files.set("reach.json", enc.encode(JSON.stringify({
    specVersion: "1.0.0", id, version: "1.0.0", entrypoint: "plan.json",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: Object.keys(tools).map((name) => ({ name })), permissions } },
    tools: Object.fromEntries(Object.keys(tools).map((n) => [n, { kind: "js", module: `tools/${n}.js` }])),
  })));
  return files;
}
