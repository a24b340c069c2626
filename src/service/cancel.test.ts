// Cancels: a running run stops within a second (here with a stand-in engine that yields between its steps, as the
// thread-isolated engine will; the in-process engine of today does not yield between steps), a queued run ends at
// once without running, and a storm of cancels leaves every run ended exactly once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex, utf8 } from "../canonical/sha256.ts";
import { ReachError } from "../protocol/errors.ts";
import { packArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import type { runOnEngine } from "./engine-adapter.ts";

const STEPS = 40;
const STEP_MS = 100;
/** A stand-in engine: STEPS steps of STEP_MS each, checking the signal between steps. */
const slowEngine: typeof runOnEngine = async (_env, job, hooks) => {
  let i = 0;
  for (; i < STEPS && !hooks.signal.aborted; i++) {
    hooks.onProgress({ kind: "step", index: i, total: STEPS, stepId: `s${i}`, tool: "slow", status: "started" });
    await new Promise((r) => setTimeout(r, STEP_MS));
    hooks.onProgress({ kind: "step", index: i, total: STEPS, stepId: `s${i}`, tool: "slow", status: "completed", durationMs: STEP_MS });
  }
  const aborted = hooks.signal.aborted;
  const runHash = sha256Hex(`slow:${String(job.options.seed)}:${aborted ? `aborted@${i}` : "done"}`);
  return {
    status: aborted ? "ABORTED" : "COMPLETED",
    runHash,
    engineRunId: runHash.slice(0, 36),
    error: aborted ? new ReachError("EXEC_ABORTED", "the run was aborted") : null,
    capsule: utf8(`capsule of ${runHash}`),
    result: { runHash, status: aborted ? "ABORTED" : "COMPLETED" },
    artifacts: [],
  };
};

let t: TestService;
let digest: string;
beforeAll(async () => {
  t = await startTestService({ workers: 3, worker: { engine: slowEngine, heartbeatMs: 200, staleSeconds: 30, pollMs: 500 } });
  const res = await fetch(`${t.url}/packs`, { method: "POST", headers: { "content-type": "application/gzip" }, body: (await packArchive("hello")) as Uint8Array<ArrayBuffer> });
  digest = ((await res.json()) as { digest: string }).digest;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;
const get = async (path: string): Promise<Json> => (await (await fetch(`${t.url}${path}`)).json()) as Json;
const post = async (path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
  const res = await fetch(`${t.url}${path}`, { method: "POST", ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }) });
  return { status: res.status, json: (await res.json()) as Json };
};
const submit = async (seed: number) => (await post("/runs", { pack: digest, seed })).json["runId"] as string;
async function until(runId: string, ok: (r: Json) => boolean): Promise<Json> {
  for (let i = 0; i < 400; i++) {
    const r = await get(`/runs/${runId}?wait=1`);
    if (ok(r)) return r;
  }
  throw new Error(`run ${runId} never reached the state`);
}
const ended = (r: Json) => r["status"] !== "PENDING" && r["status"] !== "EXECUTING";

describe("cancel", () => {
  it("stops a running run between steps within a second, keeping its capsule", async () => {
    const id = await submit(1);
    await until(id, (r) => r["status"] === "EXECUTING" && (r["currentStepIndex"] as number) >= 2);
    const asked = performance.now();
    expect((await post(`/runs/${id}/cancel`)).json).toEqual({ runId: id, outcome: "requested" });
    const r = await until(id, ended);
    expect(performance.now() - asked).toBeLessThan(10_000); // ≤ 1 s idle; 10x headroom for a loaded machine
    expect([r["status"], r["phase"], r["errorType"], r["cancelRequested"]]).toEqual(["ABORTED", "cancelled", "CANCELLED", true]);
    expect(r["currentStepIndex"] as number).toBeLessThan(STEPS - 1);
    expect((await fetch(`${t.url}/runs/${id}/capsule`)).status).toBe(200);
    expect((await post(`/runs/${id}/cancel`)).status).toBe(409);
    const events = await (await fetch(`${t.url}/runs/${id}/events`)).text();
    expect(events.match(/event: run_cancelled/g)?.length).toBe(1);
  }, 60_000);

  it("ends a queued run at once; no worker ever runs it", async () => {
    const busy = [await submit(10), await submit(11), await submit(12)]; // three slots taken
    for (const id of busy) await until(id, (r) => r["status"] === "EXECUTING");
    const queued = await submit(13);
    expect((await post(`/runs/${queued}/cancel`)).json).toEqual({ runId: queued, outcome: "cancelled" });
    const r = await get(`/runs/${queued}`);
    expect([r["status"], r["attempts"], r["capsule"]]).toEqual(["ABORTED", 0, null]);
    for (const id of busy) await post(`/runs/${id}/cancel`);
    for (const id of busy) await until(id, ended);
    expect((await get(`/runs/${queued}`))["attempts"]).toBe(0);
  }, 60_000);

  it("survives a cancel storm: every run ends exactly once, ABORTED", async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => submit(100 + i)));
    await new Promise((r) => setTimeout(r, 300));
    const answers = await Promise.all([...ids, ...ids].map((id) => post(`/runs/${id}/cancel`)));
    for (const a of answers) expect([202, 409]).toContain(a.status);
    for (const id of ids) {
      const r = await until(id, ended);
      expect([r["status"], r["phase"]]).toEqual(["ABORTED", "cancelled"]);
      expect(r["incidents"]).toBe(0);
      const events = await (await fetch(`${t.url}/runs/${id}/events`)).text();
      expect(events.match(/event: run_(cancelled|completed|failed)/g)?.length, id).toBe(1);
    }
  }, 120_000);
});
