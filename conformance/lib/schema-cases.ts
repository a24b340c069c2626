/**
 * Schema conformance (seed 003 §10.1 "All structures validate against JSON Schema"), runtime-neutral: every example
 * document under `examples/<kind>/` validates against our generated JSON Schema (`schemas/`) and, where upstream has
 * one, the upstream schema (`upstream-schemas/`), with the same draft 2020-12 validator the engine uses; a copy
 * with a required member removed is refused by both. The fingerprint is the list of what was checked.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { compileSchema, loadFullValidator } from "../../src/engine/schema-check.ts";
import type { SchemaValidator } from "../../src/engine/schema-check.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

/** Example kind → our schema file and the upstream one, when there is one. */
const KINDS: Readonly<Record<string, { ours: string; upstream?: string; required: string }>> = {
  capsule: { ours: "capsule.schema.json", upstream: "capsule.schema.json", required: "runId" },
  delegation: { ours: "delegation.schema.json", required: "signature" },
  error: { ours: "error.schema.json", upstream: "error.schema.json", required: "error" },
  event: { ours: "event.schema.json", upstream: "event.schema.json", required: "eventId" },
  "node-identity": { ours: "node-identity.schema.json", required: "publicKey" },
  pack: { ours: "pack.schema.json", upstream: "pack.schema.json", required: "manifest" },
  plan: { ours: "plan.schema.json", required: "steps" },
};

function validatorOf(io: ConformanceIO, path: string): SchemaValidator {
  return compileSchema(JSON.parse(io.readText(path)) as Record<string, unknown>);
}

/**
 * The schema cases: one per example kind.
 * @param io file access rooted at `conformance/`
 * @returns the cases
 */
export function schemaCases(io: ConformanceIO): ConformanceCase[] {
  return Object.entries(KINDS).map(([kind, k]) => ({
    name: `schema: examples/${kind}/* validate against ${k.upstream === undefined ? "our" : "our and the upstream"} ${k.ours}; without "${k.required}" they do not`,
    run: async () => {
      await loadFullValidator();
      const schemas = [`schemas/${k.ours}`, ...(k.upstream === undefined ? [] : [`upstream-schemas/${k.upstream}`])];
      const validators = schemas.map((s) => [s, validatorOf(io, s)] as const);
      const checked: string[] = [];
      for (const file of io.list(`examples/${kind}`).filter((f) => f.endsWith(".json"))) {
        const doc = JSON.parse(io.readText(`examples/${kind}/${file}`)) as Record<string, unknown>;
        const broken = { ...doc };
        delete broken[k.required];
        for (const [schema, validate] of validators) {
          const r = validate(doc);
          check(r.ok, `examples/${kind}/${file} against ${schema}: ${r.ok ? "" : r.problems.join("; ")}`);
          check(!validate(broken).ok, `examples/${kind}/${file} without "${k.required}" passes ${schema}`);
          checked.push(`${kind}/${file}:${schema}`);
        }
      }
      check(checked.length > 0, `examples/${kind} holds no example`);
      return sha256Hex(utf8(canonicalize(checked)));
    },
  }));
}
