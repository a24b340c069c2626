/**
 * Every example document under `conformance/examples/<kind>/` parses with its zod schema, validates against the
 * generated JSON Schema (`conformance/schemas/`) and, where upstream has one, the upstream JSON Schema
 * (`conformance/upstream-schemas/`) (seed 003 §10 "Schema Validation"). Broken documents are rejected by all.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { canonicalize } from "../canonical/jcs.ts";
import { capsuleSchemas } from "./capsule.ts";

const { CapsuleIndexSchema } = capsuleSchemas();
import { DelegationSchema, NodeIdentitySchema } from "./delegation.ts";
import { ExecutionEnvelopeSchema, ExecutionResultSchema } from "./envelope.ts";
import { ErrorDocumentSchema } from "./error-details.ts";
import { ALL_ERROR_CODES, ReachError } from "./errors.ts";
import { payloadSchemaFor, RunEventSchema } from "./event.ts";
import { EVENT_TYPES } from "./event-types.ts";
import type { EventType } from "./event-types.ts";
import { ArtifactInfoSchema, RunEvidenceSchema } from "./evidence.ts";
import { PackSchema } from "./pack.ts";
import { BlueprintSchema } from "./plan.ts";

// Quirk: ajv and ajv-formats are CommonJS with `exports.default`; under NodeNext the default import is the
// whole `module.exports`, so the class and the plugin are at `.default` (at run time and for tsc alike).
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

const CONFORMANCE = new URL("../../conformance/", import.meta.url);
const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, CONFORMANCE), "utf8"));
const list = (path: string): string[] => readdirSync(new URL(path, CONFORMANCE)).sort();

const OURS = "https://reach-wasm.dev/schemas/v1/";
const UPSTREAM = "https://reach.dev/spec/v1/";

function makeAjv(): InstanceType<typeof Ajv2020> {
  // Full strict mode (unknown keywords or formats throw); both the generated and the upstream schemas pass it.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: true });
  addFormats(ajv);
  for (const name of list("schemas/")) ajv.addSchema(readJson(`schemas/${name}`) as object);
  for (const name of list("upstream-schemas/").filter((n) => n.endsWith(".schema.json"))) {
    ajv.addSchema(readJson(`upstream-schemas/${name}`) as object);
  }
  return ajv;
}
const ajv = makeAjv();
function validator(id: string): ValidateFunction {
  const v = ajv.getSchema(id);
  if (v === undefined) throw new Error(`no schema ${id}`);
  return v;
}
const errorsText = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`).join("; ");

type Kind = { zod: z.ZodType; ours: string; upstream?: string };
const KINDS: Record<string, Kind> = {
  artifact: { zod: ArtifactInfoSchema(), ours: "artifact.schema.json" },
  capsule: { zod: CapsuleIndexSchema, ours: "capsule.schema.json", upstream: "capsule.schema.json" },
  delegation: { zod: DelegationSchema(), ours: "delegation.schema.json" },
  envelope: { zod: ExecutionEnvelopeSchema(), ours: "envelope.schema.json" },
  error: { zod: ErrorDocumentSchema(), ours: "error.schema.json", upstream: "error.schema.json" },
  event: { zod: RunEventSchema(), ours: "event.schema.json", upstream: "event.schema.json" },
  evidence: { zod: RunEvidenceSchema(), ours: "evidence.schema.json" },
  "node-identity": { zod: NodeIdentitySchema(), ours: "node-identity.schema.json" },
  pack: { zod: PackSchema(), ours: "pack.schema.json", upstream: "pack.schema.json" },
  plan: { zod: BlueprintSchema(), ours: "plan.schema.json" },
  result: { zod: ExecutionResultSchema(), ours: "result.schema.json" },
};

/** Validate with zod, our JSON Schema and upstream; returns which accepted. */
function check(kind: Kind, doc: unknown): { zod: string | null; ours: string | null; upstream: string | null } {
  const z = kind.zod.safeParse(doc);
  const ours = validator(OURS + kind.ours);
  const up = kind.upstream === undefined ? undefined : validator(UPSTREAM + kind.upstream);
  return {
    zod: z.success ? null : z.error.issues.map((i) => i.message).join("; "),
    ours: ours(doc) ? null : errorsText(ours.errors),
    upstream: up === undefined || up(doc) ? null : errorsText(up.errors),
  };
}

describe("conformance/examples", () => {
  it("has a folder for every kind and nothing else", () => {
    expect(list("examples/")).toEqual(Object.keys(KINDS).sort());
  });

  it("has one event example per event type", () => {
    expect(list("examples/event/")).toEqual(EVENT_TYPES.map((t) => `${t}.json`).sort());
  });

  for (const [name, kind] of Object.entries(KINDS)) {
    for (const file of list(`examples/${name}/`)) {
      it(`${name}/${file} is valid (zod, ours${kind.upstream ? ", upstream" : ""})`, () => {
        const doc = readJson(`examples/${name}/${file}`);
        expect(check(kind, doc)).toEqual({ zod: null, ours: null, upstream: null });
      });
    }
  }
});

// The ten payload branches of upstream event.schema.json, compiled one by one.
const upstreamEvent = readJson("upstream-schemas/event.schema.json") as { properties: { payload: { oneOf: { $ref: string }[] } } };
const BRANCHES = upstreamEvent.properties.payload.oneOf.map((b) => b.$ref.replace("#/$defs/", ""));
const branchValidators = BRANCHES.map((b) => [b, validator(`${UPSTREAM}event.schema.json#/$defs/${b}`)] as const);
const matchingBranches = (payload: unknown): string[] => branchValidators.filter(([, v]) => v(payload)).map(([b]) => b);

const EXPECTED_BRANCH: Record<EventType, string> = {
  "run.started": "RunStartedPayload",
  "run.step.started": "StepStartedPayload",
  "tool.invoked": "ToolInvokedPayload",
  "tool.completed": "ToolCompletedPayload",
  "tool.failed": "ToolFailedPayload",
  "run.step.completed": "StepCompletedPayload",
  "run.step.failed": "StepCompletedPayload",
  "run.completed": "RunCompletedPayload",
  "run.failed": "RunFailedPayload",
  "run.aborted": "RunFailedPayload",
  "policy.violation": "PolicyViolationPayload",
  "federation.delegation": "FederationDelegationPayload",
  "capsule.sync": "RunCompletedPayload",
};

describe("event examples against upstream", () => {
  it("upstream has the ten payload branches", () => expect(BRANCHES).toHaveLength(10));

  for (const type of EVENT_TYPES) {
    it(`${type}: payload matches exactly one upstream branch (${EXPECTED_BRANCH[type]})`, () => {
      const ev = readJson(`examples/event/${type}.json`) as { type: string; payload: unknown };
      expect(ev.type).toBe(type);
      expect(payloadSchemaFor(type).safeParse(ev.payload).success).toBe(true);
      expect(matchingBranches(ev.payload)).toEqual([EXPECTED_BRANCH[type]]);
    });

    it(`${type}: hashes follow seed 003 §3.3`, () => {
      const ev = readJson(`examples/event/${type}.json`) as Record<string, string> & { payload: unknown };
      const sha = (s: string) => createHash("sha256").update(s).digest("hex");
      expect(ev.payloadHash).toBe(sha(canonicalize(ev.payload)));
      expect(ev.eventHash).toBe(sha(ev.type! + ev.timestamp! + ev.payloadHash! + ev.prevEventHash!));
    });
  }

  it("an event payload with the keys of two branches is rejected by both zod and upstream", () => {
    // tool.completed with a stepId would also match StepCompletedPayload: oneOf fails, strict zod rejects it.
    const ev = readJson("examples/event/tool.completed.json") as { payload: Record<string, unknown> };
    const doc = { ...ev, payload: { ...ev.payload, stepId: "s1" } };
    expect(matchingBranches(doc.payload)).toHaveLength(2);
    const r = check(KINDS.event!, doc);
    expect(r.zod).toMatch(/unknown field "stepId"/);
    expect(r.ours).not.toBeNull();
    expect(r.upstream).toMatch(/oneOf/);
  });
});

describe("broken documents are rejected by zod, our schema and upstream", () => {
  const cases: { name: string; kind: string; base: string; edit: (d: Record<string, unknown>) => void }[] = [
    { name: "pack with a bad id", kind: "pack", base: "pack/hello.json", edit: (d) => void (d.id = "hello world") },
    { name: "pack with a non-semver version", kind: "pack", base: "pack/hello.json", edit: (d) => void (d.version = "1.0") },
    { name: "pack without a manifest", kind: "pack", base: "pack/minimal.json", edit: (d) => void delete d.manifest },
    {
      name: "pack with a resource URI without a scheme",
      kind: "pack",
      base: "pack/minimal.json",
      edit: (d) => void ((d.manifest as { capabilities: object }).capabilities = { resources: [{ uri: "data/", access: "read" }] }),
    },
    {
      name: "event with a timestamp without milliseconds' Z form",
      kind: "event",
      base: "event/run.started.json",
      edit: (d) => void (d.timestamp = "yesterday"),
    },
    {
      name: "event whose payload matches no branch",
      kind: "event",
      base: "event/run.started.json",
      edit: (d) => void (d.payload = { hello: "world" }),
    },
    {
      name: "event with an unknown type",
      kind: "event",
      base: "event/run.started.json",
      edit: (d) => void (d.type = "run.paused"),
    },
    {
      name: "capsule with an unknown format",
      kind: "capsule",
      base: "capsule/run-a.json",
      edit: (d) => void ((d.manifest as Record<string, unknown>).format = "reach.capsule.v2"),
    },
    { name: "capsule with a bad runHash", kind: "capsule", base: "capsule/run-a.json", edit: (d) => void (d.runHash = "ABC") },
    {
      name: "error document with an empty message",
      kind: "error",
      base: "error/tool-timeout.json",
      edit: (d) => void ((d.error as Record<string, unknown>).message = ""),
    },
    {
      name: "error document with a negative retryAfter",
      kind: "error",
      base: "error/tool-timeout.json",
      edit: (d) => void ((d.error as Record<string, unknown>).retryAfter = -1),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const doc = structuredClone(readJson(`examples/${c.base}`)) as Record<string, unknown>;
      c.edit(doc);
      const kind = KINDS[c.kind]!;
      const r = check(kind, doc);
      expect(r.zod, "zod").not.toBeNull();
      expect(r.ours, "generated JSON Schema").not.toBeNull();
      if (kind.upstream !== undefined) expect(r.upstream, "upstream JSON Schema").not.toBeNull();
    });
  }

  it("a timestamp without milliseconds is ours to reject (upstream date-time allows it)", () => {
    const doc = { ...(readJson("examples/event/run.started.json") as object), timestamp: "1970-01-01T00:00:00Z" };
    const r = check(KINDS.event!, doc);
    expect(r.zod).toMatch(/milliseconds/);
    expect(r.ours).not.toBeNull();
  });
});

describe("ReachError documents", () => {
  const upstream = validator(`${UPSTREAM}error.schema.json`);
  const ours = validator(`${OURS}error.schema.json`);
  it.each(ALL_ERROR_CODES.map((c) => [c]))("%s: toJSON() validates (upstream, ours, zod)", (code) => {
    const doc = new ReachError(code, "x", { details: { k: 1 } }).toJSON();
    expect(upstream(doc), errorsText(upstream.errors)).toBe(true);
    expect(ours(doc), errorsText(ours.errors)).toBe(true);
    expect(ErrorDocumentSchema().safeParse(doc).success).toBe(true);
  });

  it("with retryAfter and as event ErrorDetails (upstream ToolFailedPayload)", () => {
    const err = new ReachError("EXEC_TOOL_TIMEOUT", "slow", { retryAfter: 500 });
    expect(upstream(err.toJSON()), errorsText(upstream.errors)).toBe(true);
    const payload = { invocationId: "i-1", error: err.toDetails() };
    expect(payloadSchemaFor("tool.failed").safeParse(payload).success).toBe(true);
    expect(matchingBranches(payload)).toEqual(["ToolFailedPayload"]);
  });
});
