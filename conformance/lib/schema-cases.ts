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
import { readRunCapsule } from "../../src/capsule/run-capsule.ts";
import { liveRunDocument } from "../../src/engine/run-document.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
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
  plan: { ours: "plan.schema.json", required: "scope" },
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
  return [...exampleCases(io), runDocumentCase(io)];
}

/**
 * run.json (seed 004 ProductionRun, `src/engine/run-document.ts`) of every committed capsule, and its run-files form
 * (real times), validate against the upstream run.schema.json; without `runId` they do not.
 */
function runDocumentCase(io: ConformanceIO): ConformanceCase {
  return {
    name: "schema: run.json of every committed capsule and of the run files validates against the upstream run.schema.json",
    run: async () => {
      await loadFullValidator();
      const validate = validatorOf(io, "upstream-schemas/run.schema.json");
      const checked: string[] = [];
      for (const folder of io.list("capsules")) {
        for (const file of io.list(`capsules/${folder}`).filter((f) => f.endsWith(".capsule.tar.gz"))) {
          const capsule = readRunCapsule(io.readBytes(`capsules/${folder}/${file}`));
          if (capsule.index.redacted?.entries.some((e) => e.path === "run.json") === true) continue; // derived; redacted
          const raw = capsule.entries.get("run.json");
          check(raw !== undefined, `capsules/${folder}/${file} holds no run.json`);
          const doc = JSON.parse(new TextDecoder().decode(raw)) as JsonObject;
          const live = liveRunDocument(doc, { createdAt: 1_790_000_000_000, startedAt: 1_790_000_000_100, completedAt: 1_790_000_001_000 }, doc["evidence"] as unknown[]);
          for (const [what, d] of [["capsule", doc], ["run files", live]] as const) {
            const r = validate(d);
            check(r.ok, `capsules/${folder} run.json (${what}): ${r.ok ? "" : r.problems.join("; ")}`);
            const broken = { ...d };
            delete broken["runId"];
            check(!validate(broken).ok, `capsules/${folder} run.json (${what}) without runId passes run.schema.json`);
          }
          checked.push(`${folder}:${String(doc["status"])}:${String(doc["state"])}`);
        }
      }
      check(checked.length > 0, "no committed capsule");
      return sha256Hex(utf8(canonicalize(checked)));
    },
  };
}

function exampleCases(io: ConformanceIO): ConformanceCase[] {
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
