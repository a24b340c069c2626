// Seed 001 as written: a plan in the shape of seed 001's origin (tasks, risk.notes, scope.forbidden, execution.mode and
// delegation, approval.required, created_at without a fraction, an extension field) runs, replays and verifies; its
// evidence carries the origin's fields (EXECUTION_HEADER.json plan_path/plan_sha256/state, TASK_<id>.json task_id/
// status/started_at_utc/ended_at_utc) with real times kept out of the run hash; `plan validate` applies seed 001 §4
// rule by rule; `pack validate` gates a static plan as `run` does; a task the engine cannot execute is refused with
// PLAN_TASK_NOT_EXECUTABLE. The fixture is tests/fixtures/seed001 (its plan written for this test).
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { sha256Hex } from "../src/canonical/sha256.ts";
import { gatePlan } from "../src/engine/plan-gate.ts";
import { cliBundle } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const FIXTURE = join(root, "tests/fixtures/seed001");
const PLAN_FILE = "plans/PLAN_RWASM-S2-B-26-001.json";
const scratch = mkdtempSync(join(tmpdir(), "reach-seed001-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const dec = new TextDecoder();
const plan = (): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURE, PLAN_FILE), "utf8")) as Record<string, unknown>;
const Ajv2020 = Ajv2020Module.default;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormatsModule.default(ajv);
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
const upstream = (name: string) => compiled.get(name) ?? compiled.set(name, ajv.compile(JSON.parse(readFileSync(join(root, "conformance/upstream-schemas", name), "utf8")))).get(name)!;

async function cli(...args: string[]): Promise<{ code: number; json: Record<string, unknown> | null; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, json: stdout.trim() === "" ? null : (JSON.parse(stdout) as Record<string, unknown>), stderr };
}

/** The fixture pack copied to `name` with its plan replaced by `doc` (an object, or the exact bytes). */
function packWith(name: string, doc: unknown): string {
  const dir = join(scratch, name);
  cpSync(FIXTURE, dir, { recursive: true });
  writeFileSync(join(dir, PLAN_FILE), doc instanceof Uint8Array ? doc : JSON.stringify(doc, null, 2));
  return dir;
}

function entryJson(capsule: string, entry: string): Record<string, unknown> {
  const bytes = readRunCapsule(readFileSync(capsule)).entries.get(entry);
  expect(bytes, entry).toBeDefined();
  return JSON.parse(dec.decode(bytes)) as Record<string, unknown>;
}

/** Run a pack, then verify (with the independent verifier too) and replay its capsule. */
async function runVerified(dir: string, out: string): Promise<{ code: number; runHash: string; capsule: string; runDir: string }> {
  const r = await cli("run", dir, "--json", "--quiet", "--out", join(scratch, out));
  const { runHash, capsule, out: runDir } = r.json as { runHash: string; capsule: string; out: string };
  const v = await cli("verify", capsule, "--json");
  expect(v.code, v.stderr).toBe(0);
  expect((v.json!["checks"] as { name: string; ok: boolean }[]).find((c) => c.name === "plan.sha256")).toMatchObject({ ok: true });
  const standalone = spawnSync(process.execPath, [join(root, "conformance/verifier/verify-capsule.mjs"), capsule], { encoding: "utf8" });
  expect(standalone.status, standalone.stdout + standalone.stderr).toBe(0);
  const rp = await cli("replay", capsule, "--json");
  expect(rp.code, rp.stderr).toBe(0);
  expect(rp.json).toMatchObject({ matches: true, runHash });
  return { code: r.code, runHash, capsule, runDir };
}

describe("a plan in seed 001's shape runs, replays and verifies", () => {
  it("its tasks execute as steps; extension fields are kept and hashed; the evidence has the origin's fields", async () => {
    const a = await runVerified(FIXTURE, "a");
    expect(a.code).toBe(0);
    const planJson = entryJson(a.capsule, "plan.json");
    expect(planJson).toMatchObject({ x_review: { ticket: "OPS-2611" }, risk: { notes: expect.any(String) }, scope: { forbidden: expect.any(Array) }, execution: { mode: "sequential", delegation: { claude_code: false } }, approval: { required: false } });
    const result = entryJson(a.capsule, "result.json");
    expect(result["outputs"]).toHaveProperty("T2");
    expect(result["deprecations"]).toBeUndefined(); // seed 001's approval form is not our deprecated one
    // the header: the plan file's bytes as read, and seed 001 §5's state
    const header = entryJson(a.capsule, "EXECUTION_HEADER.json");
    expect(header).toMatchObject({ contract_version: "S2-B-06.v1", plan_id: "RWASM-S2-B-26-001", plan_path: `pack/${PLAN_FILE}`, plan_sha256: sha256Hex(readFileSync(join(FIXTURE, PLAN_FILE))), state: "COMPLETED" });
    // TASK files: virtual times in the capsule (hashed), real ones in the run files (never hashed)
    const t2 = entryJson(a.capsule, "TASK_T2.json");
    expect(t2).toMatchObject({ task_id: "T2", plan_id: "RWASM-S2-B-26-001", contract_version: "S2-B-06.v1", status: "SUCCESS", stepId: "T2", toolName: "wordstat", output: { words: 7 } });
    expect(String(t2["started_at_utc"])).toMatch(/^1970-01-01T00:00:00\.\d{3}Z$/);
    expect(Date.parse(String(t2["ended_at_utc"]))).toBeGreaterThanOrEqual(Date.parse(String(t2["started_at_utc"])));
    const live = JSON.parse(readFileSync(join(a.runDir, "TASK_T1.json"), "utf8")) as Record<string, unknown>;
    expect(live).toMatchObject({ task_id: "T1", status: "SUCCESS" });
    expect(Date.parse(String(live["started_at_utc"]))).toBeGreaterThan(Date.parse("2020-01-01T00:00:00Z"));
    // run.json stays seed 004's evidence and the upstream run schema's document
    for (const doc of [entryJson(a.capsule, "run.json"), JSON.parse(readFileSync(join(a.runDir, "run.json"), "utf8")) as Record<string, unknown>]) {
      const validate = upstream("run.schema.json");
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      expect(doc["totalSteps"]).toBe(2);
      expect((doc["evidence"] as Record<string, unknown>[]).map((e) => [e["stepId"], e["status"], "task_id" in e])).toEqual([["T1", "completed", false], ["T2", "completed", false]]);
    }
    const index = upstream("capsule.schema.json");
    expect(index(JSON.parse(JSON.stringify(readRunCapsule(readFileSync(a.capsule)).index))), JSON.stringify(index.errors)).toBe(true);
    // the same run again: the same run hash (the real times are not in it)
    const again = await cli("run", FIXTURE, "--json", "--quiet", "--out", join(scratch, "a2"));
    expect(again.json!["runHash"]).toBe(a.runHash);
    // an extension field is hashed with the plan
    const changed = await cli("run", packWith("ext", { ...plan(), x_review: { ticket: "OPS-2612" } }), "--json", "--quiet", "--out", join(scratch, "ext-out"));
    expect(changed.code).toBe(0);
    expect(changed.json!["runHash"]).not.toBe(a.runHash);
  });

  it("plan_sha256 is of the bytes as read (a byte-order mark and CRLF line ends); a failed task is FAILED, the next SKIPPED, the run FAILED", async () => {
    const text = readFileSync(join(FIXTURE, PLAN_FILE), "utf8").replace(/\n/g, "\r\n");
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]);
    const crlf = await runVerified(packWith("crlf", bytes), "crlf-out");
    expect(crlf.code).toBe(0);
    expect(entryJson(crlf.capsule, "EXECUTION_HEADER.json")["plan_sha256"]).toBe(sha256Hex(bytes));
    const doc = plan();
    const tasks = doc["tasks"] as Record<string, unknown>[];
    tasks[0]!["return_spec"] = { type: "object", properties: { headline: { type: "string", minLength: 500 } } };
    const failed = await runVerified(packWith("fails", doc), "fails-out");
    expect(failed.code).toBe(1);
    expect(entryJson(failed.capsule, "EXECUTION_HEADER.json")["state"]).toBe("FAILED");
    expect(entryJson(failed.capsule, "TASK_T1.json")).toMatchObject({ task_id: "T1", status: "FAILED" });
    expect(entryJson(failed.capsule, "TASK_T2.json")).toMatchObject({ task_id: "T2", status: "SKIPPED", started_at_utc: null, ended_at_utc: null });
  });

  it("a capsule made before seed 001's fields still replays to its run hash, its entries rebuilt byte for byte", async () => {
    const dir = join(root, "conformance/capsules/hello");
    const capsule = join(dir, readdirSync(dir)[0]!);
    expect(entryJson(capsule, "EXECUTION_HEADER.json")["state"]).toBeUndefined();
    const rp = await cli("replay", capsule, "--json");
    expect(rp.code, rp.stderr).toBe(0);
    expect(rp.json).toMatchObject({ matches: true });
  });
});

describe("the plan gate reads seed 001's plans", () => {
  const tools = new Set(["headline", "wordstat"]);
  const gate = (doc: Record<string, unknown>) => gatePlan(doc, { tools });
  const code = (doc: Record<string, unknown>): unknown => {
    try {
      gate(doc);
      return null;
    } catch (err) {
      return { code: (err as { code: string }).code, details: (err as { details: unknown }).details };
    }
  };
  const withTasks = (...t: Record<string, unknown>[]) => ({ ...plan(), tasks: t });

  it("RFC 3339 UTC timestamps with or without a fraction; other offsets refused", () => {
    for (const t of ["2025-12-21T15:21:25Z", "2025-12-21T15:21:25.1Z", "2025-12-21T15:21:25.123456Z"]) expect(code({ ...plan(), created_at: t }), t).toBeNull();
    for (const t of ["2025-12-21T15:21:25+02:00", "2025-12-21 15:21:25Z", "2025-12-21"]) expect(code({ ...plan(), created_at: t }), t).toMatchObject({ code: "PLAN_INVALID" });
  });

  it("a task the engine cannot execute is refused with PLAN_TASK_NOT_EXECUTABLE and why", () => {
    expect(code(withTasks({ task_id: "T1", description: "write the contract", type: "documentation", tools: ["markdown"], paths: ["docs/"] }))).toEqual({ code: "PLAN_TASK_NOT_EXECUTABLE", details: { taskId: "T1", reason: "no_arguments" } });
    expect(code(withTasks({ task_id: "T1", tools: ["headline", "wordstat"], arguments: {} }))).toMatchObject({ code: "PLAN_TASK_NOT_EXECUTABLE", details: { reason: "several_tools" } });
    expect(code(withTasks({ task_id: "T1", arguments: {} }))).toMatchObject({ code: "PLAN_TASK_NOT_EXECUTABLE", details: { reason: "no_tool" } });
    expect(code(withTasks())).toMatchObject({ code: "PLAN_INVALID" });
    expect(code({ ...plan(), steps: [{ id: "s", tool: "headline", arguments: {}, return_spec: {} }] })).toMatchObject({ code: "PLAN_INVALID" }); // steps and tasks
  });

  it("scope.forbidden wins over scope.allowed; an extension member named __proto__ is kept as a member and hashed", () => {
    expect(code({ ...plan(), scope: { allowed: ["headline", "wordstat"], forbidden: ["wordstat"] } })).toMatchObject({ code: "PLAN_SCOPE_VIOLATION", details: { stepId: "T2" } });
    const a = gate(JSON.parse(JSON.stringify(plan()).replace('"x_review"', '"__proto__":{"a":1},"x_review"')) as Record<string, unknown>);
    const b = gate(JSON.parse(JSON.stringify(plan()).replace('"x_review"', '"__proto__":{"a":2},"x_review"')) as Record<string, unknown>);
    expect(Object.hasOwn(a.plan, "__proto__")).toBe(true);
    expect(a.planHash).not.toBe(b.planHash);
  });
});

describe("reach-wasm plan validate applies seed 001 §4 rule by rule", () => {
  const file = (name: string, doc: unknown): string => {
    const p = join(scratch, name);
    writeFileSync(p, typeof doc === "string" ? doc : JSON.stringify(doc));
    return p;
  };
  const failed = (json: Record<string, unknown> | null) => (json!["rules"] as { rule: string; ok: boolean }[]).filter((r) => !r.ok).map((r) => r.rule);

  it("exit 0 for the fixture; exit 1 naming the rules a plan holding only contract_version fails; exit 2 unreadable", async () => {
    const ok = await cli("plan", "validate", join(FIXTURE, PLAN_FILE), "--json");
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json).toMatchObject({ valid: true, executable: true, planId: "RWASM-S2-B-26-001", planSha256: sha256Hex(readFileSync(join(FIXTURE, PLAN_FILE))) });
    expect(failed(ok.json)).toEqual([]);
    const only = await cli("plan", "validate", file("only.json", { contract_version: "S2-B-05.v1" }), "--json");
    expect(only.code).toBe(1);
    expect(failed(only.json)).toEqual(["required-fields", "schema", "status-approved", "at-least-one-task", "scope-allowed", "risk-level", "risk-approval"]);
    expect(only.stderr).toMatch(/is invalid: required-fields/);
    for (const bad of [join(scratch, "missing.json"), file("garbage.json", "{not json")]) {
      const r = await cli("plan", "validate", bad, "--json");
      expect(r.code, bad).toBe(2);
      expect(r.json!["error"]).toBeDefined();
    }
  });

  it("the risk rules; the origin's tasks are valid but reported as not executable (exit 1 with --executable)", async () => {
    const risk4 = await cli("plan", "validate", file("risk4.json", { ...plan(), risk: { level: 4, notes: "x" } }), "--json");
    expect([risk4.code, failed(risk4.json)]).toEqual([1, ["risk-level"]]);
    const risk3 = await cli("plan", "validate", file("risk3.json", { ...plan(), risk: { level: 3 }, approval: { approved_by: "auto", approved_at: "2026-01-01T00:00:00Z", required: false } }), "--json");
    expect([risk3.code, failed(risk3.json)]).toEqual([1, ["risk-approval"]]);
    const approved = await cli("plan", "validate", file("risk3ok.json", { ...plan(), risk: { level: 3 }, approval: { approved_by: "ops-lead", approved_at: "2026-01-01T00:00:00Z", required: true } }));
    expect(approved.code).toBe(0);
    const origin = file("origin.json", { ...plan(), scope: { allowed: ["docs_update"], forbidden: ["self_heal"] }, tasks: [{ task_id: "T1", description: "write the contract", type: "documentation", tools: ["markdown"], paths: ["docs/contracts/"] }] });
    const v = await cli("plan", "validate", origin, "--json");
    expect(v.code, v.stderr).toBe(0);
    expect(v.json).toMatchObject({ valid: true, executable: false, tasks: [{ taskId: "T1", executable: false, code: "PLAN_TASK_NOT_EXECUTABLE", reason: "no_arguments" }] });
    expect(v.stderr).toMatch(/cannot execute .*PLAN_TASK_NOT_EXECUTABLE/);
    expect((await cli("plan", "validate", origin, "--executable")).code).toBe(1);
    const forbidden = await cli("plan", "validate", file("forbidden.json", { ...plan(), scope: { allowed: ["headline", "wordstat"], forbidden: ["wordstat"] } }), "--json");
    expect([forbidden.code, failed(forbidden.json)]).toEqual([1, ["scope"]]);
  });
});

describe("pack validate checks a static plan as run does", () => {
  it("passes the fixture; refuses a task it cannot execute, a plan holding only contract_version and a tool outside scope", async () => {
    const ok = await cli("pack", "validate", FIXTURE, "--json");
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json).toMatchObject({ valid: true, plan: { planId: "RWASM-S2-B-26-001", work: "tasks", steps: 2, approvalRequired: false } });
    const cases: [unknown, string, Record<string, unknown>][] = [
      [{ ...plan(), tasks: [{ task_id: "T1", tools: ["markdown"], paths: ["docs/"] }] }, "PLAN_TASK_NOT_EXECUTABLE", { taskId: "T1", reason: "no_arguments" }],
      [{ contract_version: "S2-B-05.v1" }, "PLAN_INVALID", {}],
      [{ ...plan(), scope: { allowed: ["headline"] } }, "PLAN_SCOPE_VIOLATION", { stepId: "T2", tool: "wordstat" }],
    ];
    for (const [i, [doc, want, details]] of cases.entries()) {
      const r = await cli("pack", "validate", packWith(`bad-${i}`, doc), "--json");
      expect(r.code, want).toBe(2);
      expect(r.json).toMatchObject({ error: { code: want, details } });
    }
  });
});

describe("on Deno", () => {
  let bundle: Awaited<ReturnType<typeof cliBundle>> | undefined;
  beforeAll(async () => {
    bundle = await cliBundle();
  }, 120_000);
  afterAll(() => bundle?.remove());

  it("the fixture runs to the run hash Node gives; its capsule verifies and replays", async () => {
    const node = await cli("run", FIXTURE, "--json", "--quiet", "--out", join(scratch, "node"));
    const r = spawnSync(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", bundle!.deno, "run", FIXTURE, "--json", "--quiet", "--out", join(scratch, "deno")], { encoding: "utf8", cwd: root });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { runHash: string; capsule: string };
    expect(out.runHash).toBe(node.json!["runHash"]);
    expect(entryJson(out.capsule, "TASK_T1.json")).toMatchObject({ task_id: "T1", status: "SUCCESS" });
    expect((await cli("verify", out.capsule)).code).toBe(0);
    expect((await cli("replay", out.capsule)).code).toBe(0);
  }, 120_000);
});
