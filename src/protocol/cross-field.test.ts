import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { capsuleSchemas } from "./capsule.ts";

const { CapsuleIndexSchema } = capsuleSchemas();
import { DelegationSchema, NodeIdentitySchema } from "./delegation.ts";
import { ExecutionResultSchema } from "./envelope.ts";
import { BlueprintSchema } from "./plan.ts";

const example = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../conformance/examples/${path}`, import.meta.url), "utf8")) as Record<string, unknown>;

describe("cross-field rules the JSON Schemas cannot express", () => {
  it("delegation: expiresAt after issuedAt, delegate ≠ delegator, scope unique (seed 003 §6.2)", () => {
    const d = example("delegation/a-to-b.json");
    expect(DelegationSchema().safeParse(d).success).toBe(true);
    expect(DelegationSchema().safeParse({ ...d, expiresAt: d.issuedAt }).success).toBe(false);
    expect(DelegationSchema().safeParse({ ...d, delegate: d.delegator }).success).toBe(false);
    expect(DelegationSchema().safeParse({ ...d, scope: ["a", "a"] }).success).toBe(false);
    expect(DelegationSchema().safeParse({ ...d, scope: [] }).success).toBe(false);
  });

  it("node identity: Ed25519 key is 32 bytes of base64; endpoint is http(s)", () => {
    const n = example("node-identity/node-a.json");
    expect(NodeIdentitySchema().safeParse(n).success).toBe(true);
    expect(NodeIdentitySchema().safeParse({ ...n, publicKey: "AAAA" }).success).toBe(false);
    expect(NodeIdentitySchema().safeParse({ ...n, endpoint: "ftp://x.example.com/" }).success).toBe(false);
  });

  it("capsule: files in strict lexicographic order", () => {
    const c = example("capsule/run-a.json");
    const files = c.files as unknown[];
    expect(CapsuleIndexSchema.safeParse(c).success).toBe(true);
    expect(CapsuleIndexSchema.safeParse({ ...c, files: [...files].reverse() }).success).toBe(false);
    expect(CapsuleIndexSchema.safeParse({ ...c, files: [files[0], files[0]] }).success).toBe(false);
    expect(CapsuleIndexSchema.safeParse({ ...c, files: [{ path: "../x", sha256: "0".repeat(64), size: 0 }] }).success).toBe(false);
  });

  it("result: failure needs an error; success may not carry one (seed 000 §3.2)", () => {
    const ok = example("result/success.json");
    const bad = example("result/failure.json");
    expect(ExecutionResultSchema().safeParse({ ...ok, error: bad.error }).success).toBe(false);
    expect(ExecutionResultSchema().safeParse({ ...bad, error: undefined }).success).toBe(false);
    expect(ExecutionResultSchema().safeParse({ envelope_id: "e", status: "insufficient" }).success).toBe(true);
  });

  it("plan: the schema accepts non-executable plans; the plan gate judges them (seed 001 §4)", () => {
    const p = example("plan/hello.json");
    const steps = (p.steps as Record<string, unknown>[]).map(({ return_spec: _r, ...s }) => s);
    expect(BlueprintSchema().safeParse({ ...p, status: "DRAFT", risk: { level: 5 }, steps }).success).toBe(true);
    expect(BlueprintSchema().safeParse({ ...p, risk: { level: 6 } }).success).toBe(false);
    expect(BlueprintSchema().safeParse({ ...p, contract_version: "S2-B-06.v1" }).success).toBe(false);
  });
});
