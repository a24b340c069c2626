// Seed 004's run model through the CLI ("Run Data Structure", "Event Types"): run.json in the run files (real times,
// virtual offsets beside them) valid against the upstream run.schema.json, TASK_<id>.json per step, --request-id, and
// the live event stream (--events FILE|-, heartbeats); the capsule's run.json is virtual and verified.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { main } from "../src/cli/cli.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-runmodel-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe("run model (seed 004)", () => {
  it("run --request-id --events: run.json (upstream run.schema.json), TASK files, the live stream with heartbeats", async () => {
    const out = join(scratch, "chart");
    const events = join(scratch, "events.jsonl");
    const r = await cli(["run", "packs/chart", "--unrestricted", "--out", out, "--request-id", "req-2026-001", "--events", events, "--heartbeat", "1", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const { runHash, capsule } = JSON.parse(r.stdout) as { runHash: string; capsule: string };
    const dir = join(out, "runs", runHash);
    const doc = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as Record<string, unknown>;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(join(root, "conformance/upstream-schemas/run.schema.json"), "utf8")));
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc).toMatchObject({ requestId: "req-2026-001", status: "completed", state: "COMPLETED", totalSteps: 2, currentStepIndex: 1, replansCount: 0, clock: "real", intent: { name: "chart_generate" } });
    expect(Date.parse(String(doc["completedAt"]))).toBeGreaterThan(Date.parse("2020-01-01T00:00:00Z")); // real, not the virtual epoch
    expect((doc["virtualTime"] as Record<string, unknown>)["epoch"]).toBe("1970-01-01T00:00:00.000Z");
    expect(readdirSync(dir).filter((f) => f.startsWith("TASK_")).sort()).toEqual(["TASK_chart.json", "TASK_stats.json"]);
    const task = JSON.parse(readFileSync(join(dir, "TASK_stats.json"), "utf8")) as Record<string, unknown>;
    expect(task).toMatchObject({ stepId: "stats", requestId: "req-2026-001", status: "SUCCESS", task_id: "stats" }); // seed 001 §7 (task-files.ts)
    // the capsule's copy: virtual times, verified against the chain
    const inCapsule = JSON.parse(new TextDecoder().decode(readRunCapsule(readFileSync(capsule)).entries.get("run.json"))) as Record<string, unknown>;
    expect(inCapsule).toMatchObject({ clock: "virtual", requestId: "req-2026-001", startedAt: "1970-01-01T00:00:00.000Z" });
    const verify = await cli(["verify", capsule, "--json"]);
    expect(verify.code, verify.stdout).toBe(0);
    const live = readFileSync(events, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { eventType: string; runId: string | null });
    const types = live.map((e) => e.eventType).filter((t) => t !== "heartbeat");
    expect(types).toEqual(["run_started", "step_started", "tool_called", "tool_output", "step_completed", "step_started", "tool_called", "tool_output", "artifact_created", "step_completed", "run_completed"]);
    expect(live.some((e) => e.eventType === "heartbeat")).toBe(true); // a run lasts far longer than 1 ms
    expect(live.filter((e) => e.eventType !== "heartbeat").every((e) => e.runId === doc["runId"])).toBe(true);
  });

  it("refuses a bad --request-id, --events - with --json, and an unwritable --events file (exit 2)", async () => {
    for (const args of [["--request-id", "has space"], ["--events", "-", "--json"], ["--events", join(scratch, "no-such-dir", "e.jsonl")], ["--heartbeat", "0"]]) {
      const r = await cli(["run", "packs/hello", "--out", join(scratch, "refused"), ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
