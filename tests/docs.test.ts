// Every function and class of the library face (reach-wasm and reach-wasm/node) documents itself with an @example
// that is real, fenced TypeScript; `deno task check` type-checks those examples (`deno check --doc` over the files
// listed in deno.json), so an example that no longer compiles fails CI.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PoliciesSchema, SandboxPolicySchema } from "../src/protocol/pack.ts";
import { PlanExecutionSchema, PlanStepSchema } from "../src/protocol/plan.ts";

const root = new URL("../", import.meta.url).pathname;
const entries = ["src/mod.ts", "src/host/node.ts"];
const checked = (JSON.parse(readFileSync(join(root, "deno.json"), "utf8")) as { tasks: { check: string } }).tasks.check;

/** Value exports of an entry (`export { a, b as c } from "./x.ts"`), with the file each comes from. */
function valueExports(entry: string): { name: string; file: string }[] {
  const text = readFileSync(join(root, entry), "utf8");
  const out: { name: string; file: string }[] = [];
  for (const m of text.matchAll(/^export \{([^}]*)\} from "([^"]+)";/gm)) {
    const from = join(entry, "..", m[2]!);
    for (const raw of m[1]!.split(",")) {
      const name = raw.trim().split(/\s+as\s+/)[0]!;
      if (name !== "") out.push({ name, file: from });
    }
  }
  return out;
}

/** Follow re-export files (host-api.ts) to the file that declares `name`. */
function declaring(name: string, file: string): string | null {
  const text = readFileSync(join(root, file), "utf8");
  if (new RegExp(`^export (async )?(function|class|const) ${name}\\b`, "m").test(text)) return file;
  for (const m of text.matchAll(/^export \{([^}]*)\} from "([^"]+)";/gm)) {
    if (m[1]!.split(",").map((s) => s.trim()).includes(name)) return declaring(name, join(file, "..", m[2]!));
  }
  return null;
}

describe("the library's documentation", () => {
  const all = entries.flatMap(valueExports);
  const documented = all.filter((e) => !/^[A-Z][A-Z0-9_]+$/.test(e.name)); // CONSTANTS document themselves by their value
  it.each(documented.map((e) => [e.name, e.file]))("%s has a fenced @example that deno check --doc type-checks", (name, file) => {
    const at = declaring(name, file);
    expect(at, `${name} is not declared under ${file}`).not.toBeNull();
    const text = readFileSync(join(root, at!), "utf8");
    const decl = new RegExp(`^export (async )?(function|class|const) ${name}\\b`, "m").exec(text)!;
    if (decl[2] === "const") return; // a constant documents itself by its value
    const doc = text.slice(text.lastIndexOf("/**", decl.index), decl.index);
    expect(doc, `${name}: no @example`).toMatch(/@example\s*\n\s*\*\s*```ts/);
    expect(checked, `${at} is not in deno.json's check --doc list`).toContain(at);
  });
});

// The docs, the README, the conformance notes and every message and comment under src/ name only fields the
// protocol's schemas accept: a step's own field (`the step's X`), a plan's `execution.X`, a manifest's
// `manifest.policies.X` / `policies.sandbox.X`. (A plan step has no `timeout_ms`: the step timeout is the plan's
// `execution.step_timeout_ms`, or `run --step-timeout`; a hint that named the step's `timeout_ms` sent users to a field
// the schema refuses.)
describe("field names in the docs and messages", () => {
  const sources = [
    "README.md",
    ...readdirSync(join(root, "docs"), { recursive: true }).map(String).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
    ...readdirSync(join(root, "conformance")).filter((f) => f.endsWith(".md")).map((f) => `conformance/${f}`),
    ...readdirSync(join(root, "src"), { recursive: true }).map(String).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.includes("_test-")).map((f) => `src/${f}`),
  ];
  const keys = (schema: { shape: Record<string, unknown> }): Set<string> => new Set(Object.keys(schema.shape));
  const rules: { what: string; pattern: RegExp; allowed: Set<string> }[] = [
    { what: "a plan step's field", pattern: /\bstep's (?:`([A-Za-z_]+)`|([a-z]+_[a-z_]+))/g, allowed: keys(PlanStepSchema()) },
    { what: "a plan's execution field", pattern: /\bexecution\.([A-Za-z_]+)/g, allowed: keys(PlanExecutionSchema()) },
    { what: "a manifest policy", pattern: /\bmanifest\.policies\.([A-Za-z_]+)/g, allowed: keys(PoliciesSchema()) },
    { what: "a sandbox policy", pattern: /\bpolicies\.sandbox\.([A-Za-z_]+)/g, allowed: keys(SandboxPolicySchema()) },
  ];
  it("name only fields the schemas accept", () => {
    const wrong: string[] = [];
    for (const file of sources) {
      const text = readFileSync(join(root, file), "utf8");
      for (const rule of rules) {
        for (const m of text.matchAll(rule.pattern)) {
          const name = m[1] ?? m[2]!;
          if (!rule.allowed.has(name)) wrong.push(`${file}:${text.slice(0, m.index).split("\n").length}: "${m[0]}" is not ${rule.what} (${[...rule.allowed].join(", ")})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the refusals that ask for more time name the step timeout's real fields", async () => {
    const { STEP_TIMEOUT_HINT } = await import("../src/sandbox/fuel/meter.ts");
    const { stopError } = await import("../src/sandbox/fuel/meter.ts");
    expect(STEP_TIMEOUT_HINT).toMatch(/execution\.step_timeout_ms/);
    expect(stopError("watchdog", 1n, "t").message).toContain(STEP_TIMEOUT_HINT);
    expect(() => PlanStepSchema().parse({ id: "s", tool: "t", arguments: {}, timeout_ms: 1000 })).toThrow(/timeout_ms/);
    expect(PlanExecutionSchema().parse({ step_timeout_ms: 1000 })).toEqual({ step_timeout_ms: 1000 });
  });
});
