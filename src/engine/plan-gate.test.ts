// The plan gate's rules (seed 001 §4, §6; seed 002): each refusal has its own PLAN_* code, checked in order.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { planOf } from "../../tests/support/pack.ts";
import { checkPlanLock, gatePlan, gatePlanAsync } from "./plan-gate.ts";

const tools = new Set(["echo", "other"]);
const step = (id: string, tool = "echo", extra: Record<string, unknown> = {}) => ({ id, tool, ...extra });

async function codeOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ReachError) return err.code;
    throw err;
  }
  return "passed";
}

describe("gatePlan", () => {
  it("passes an approved, scoped, small plan and returns its canonical hash", () => {
    const g = gatePlan(planOf([step("a"), step("b", "other")]), { tools });
    expect(g.planHash).toMatch(/^[0-9a-f]{64}$/);
    expect(g.approvedBy).toBeNull();
    expect(Object.isFrozen(g.plan.steps![0])).toBe(true);
  });

  const cases: [string, unknown, string, Record<string, unknown>?][] = [
    ["not a plan", { hello: 1 }, "PLAN_INVALID"],
    ["status PENDING", planOf([step("a")], { status: "PENDING" }), "PLAN_NOT_APPROVED"],
    ["status DRAFT", planOf([step("a")], { status: "DRAFT" }), "PLAN_NOT_APPROVED"],
    ["no steps", planOf([]), "PLAN_INVALID"],
    ["11 steps", planOf(Array.from({ length: 11 }, (_, i) => step(`s${i}`))), "PLAN_TOO_MANY_STEPS"],
    ["3 steps with maxSteps 2", planOf([step("a"), step("b"), step("c")]), "PLAN_TOO_MANY_STEPS", { maxSteps: 2 }],
    ["duplicate step ids", planOf([step("a"), step("a")]), "PLAN_INVALID"],
    ["depends_on a later step", planOf([step("a", "echo", { depends_on: ["b"] }), step("b")]), "PLAN_INVALID"],
    ["risk 4", planOf([step("a")], { risk: { level: 4 } }), "PLAN_RISK_TOO_HIGH"],
    ["risk 5", planOf([step("a")], { risk: { level: 5 } }), "PLAN_RISK_TOO_HIGH"],
    ["risk 3 without approval", planOf([step("a")], { risk: { level: 3 } }), "PLAN_APPROVAL_REQUIRED"],
    ["a tool outside scope.allowed", planOf([step("a")], { scope: { allowed: ["other"] } }), "PLAN_SCOPE_VIOLATION"],
    ["a tool in scope.denied", planOf([step("a")], { scope: { allowed: ["echo"], denied: ["echo"] } }), "PLAN_SCOPE_VIOLATION"],
    ["a tool not in the manifest", planOf([step("a", "shell")], { scope: { allowed: ["echo", "shell"] } }), "POLICY_VIOLATION"],
    ["a tool neither in the manifest nor in scope.allowed", planOf([step("a", "shell")]), "POLICY_VIOLATION"],
    ["no return_spec", { ...planOf([step("a")]), steps: [{ id: "a", tool: "echo", arguments: {} }] }, "PLAN_RETURN_SPEC_MISSING"],
    ["a return_spec that is not a schema", planOf([step("a", "echo", { return_spec: { type: "nonsense" } })]), "PLAN_INVALID"],
  ];
  for (const [name, plan, code, opts] of cases) {
    it(`refuses ${name} with ${code}`, async () => {
      expect(await codeOf(() => gatePlanAsync(plan, { tools, ...(opts ?? {}) }))).toBe(code);
    });
  }

  it("an undeclared tool is a POLICY_VIOLATION / UNDEFINED_TOOL naming the tool and the step (seed 003 §4.3)", () => {
    let err: unknown;
    try {
      gatePlan(planOf([step("a"), step("b", "shell.exec")], { scope: { allowed: ["echo", "shell.exec"] } }), { tools });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).details).toMatchObject({ violationType: "UNDEFINED_TOOL", attemptedCapability: "shell.exec", stepId: "b", stage: "plan" });
  });

  it("risk 3 runs with --approve or an approval record signed by a trusted key; an unsigned record in the plan is refused", async () => {
    expect(gatePlan(planOf([step("a")], { risk: { level: 3 } }), { tools, approve: true }).approvedBy).toBe("cli");
    const unsigned = { approved_by: "ops", approved_at: "2026-01-01T00:00:00.000Z", method: "record" };
    expect(await codeOf(() => gatePlan(planOf([step("a")], { risk: { level: 3 }, approval: unsigned }), { tools }))).toBe("PLAN_APPROVAL_REQUIRED");
    const { generateKeyPair } = await import("../trust/keys.ts");
    const { signApproval, approvalPlanHash } = await import("../trust/approval.ts");
    const { TrustStore } = await import("../trust/trust-store.ts");
    const { bytesToHex } = await import("../canonical/hex.ts");
    const key = generateKeyPair();
    const plan = planOf([step("a")], { risk: { level: 3 } });
    const signed = signApproval(approvalPlanHash(plan), key.privateKey);
    const store = new TrustStore({ version: 1, keys: [{ publicKey: bytesToHex(key.publicKey), name: "ops" }] });
    expect(gatePlan({ ...plan, approval: signed }, { tools, approvals: { records: [], store } }).approvedBy).toBe("record");
    expect(gatePlan(plan, { tools, approvals: { records: [signed], store } }).approvedBy).toBe("record");
  });

  it("the plan hash lock refuses a plan that changed after approval (seed 001 §6)", async () => {
    const g = gatePlan(planOf([step("a")]), { tools });
    expect(() => checkPlanLock(g.plan, g.planHash)).not.toThrow();
    const changed = { ...g.plan, steps: [{ ...g.plan.steps![0]!, arguments: { evil: true } }] };
    expect(await codeOf(() => checkPlanLock(changed, g.planHash))).toBe("PLAN_HASH_MISMATCH");
  });
});
