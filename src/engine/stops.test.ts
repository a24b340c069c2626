// Stops from outside the deterministic budgets (an abort, the wall-clock watchdog) land where they can be recorded,
// end the run as they should, and replay to the same run hash: inside a busy tool (at a fuel refill), while a tool
// waits for the host (the tape records the halting error), between steps and while the planner runs.
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { verifyRunCapsule } from "./verify.ts";
import { readQuickJsEngineWasm, readPythonWasm } from "../../tests/support/platform.ts";
import { buildRunCapsule, capsuleRequest } from "./capsule.ts";
import { loadPack } from "./pack.ts";
import { runPack } from "./coordinator.ts";
import { replayCapsule } from "./replay.ts";
import { jsPack, planOf } from "../../tests/support/pack.ts";
import type { RunRecord, RunRequest } from "./types.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const SPIN = "export default () => { for (;;) {} }";
const ECHO = "export default (input) => ({ echo: input })";
const WAIT = `export default async (i, reach) => { reach.fs.write("out/p.txt", "p"); await reach.http.fetch("http://127.0.0.1:9/never"); return {}; }`;
const NET = { capabilities: { tools: [{ name: "wait" }, { name: "echo" }], resources: [{ uri: "workspace:///out/", access: "readwrite" }], permissions: ["filesystem", "network"] }, policies: { allowedHosts: ["127.0.0.1"] } };
const never: typeof fetch = (_u, init) => new Promise((_res, rej) => init?.signal?.addEventListener("abort", () => rej(new Error("aborted"))));

/** Run, build the capsule, replay it: the replay must reproduce the run hash and every capsule entry. */
async function runAndReplay(files: Map<string, Uint8Array>, options: Partial<Omit<RunRequest, "loaded" | "env">>): Promise<RunRecord> {
  const loaded = await loadPack(files);
  const record = await runPack({ loaded, env, ...options });
  const capsule = readRunCapsule(buildRunCapsule(record, loaded, capsuleRequest(record, options)).bytes);
  expect(verifyRunCapsule(capsule).valid).toBe(true);
  const report = await replayCapsule(capsule, env);
  expect(report.divergence, report.divergence?.message).toBeNull();
  expect(report.matches).toBe(true);
  expect(report.status).toBe(record.status);
  expect(report.rebuilt?.indexMatches).toBe(true);
  return record;
}

describe("stops from outside the budgets", () => {
  it("an abort lands inside a busy QuickJS loop at a fuel refill; the ABORTED capsule replays", async () => {
    let polls = 0;
    const record = await runAndReplay(jsPack({ tools: { spin: SPIN }, plan: planOf([{ id: "a", tool: "spin" }]) }), { interrupted: () => ++polls > 40 });
    expect(record.status).toBe("ABORTED");
    const failed = record.events.find((e) => e.type === "tool.failed")!.payload as { error: { code: string; details: { reason: string; fuel: number } } };
    expect(failed.error.code).toBe("EXEC_ABORTED");
    expect(failed.error.details.reason).toBe("aborted");
    expect(failed.error.details.fuel).toBeGreaterThan(0);
    const last = record.events.at(-1)!;
    expect(last.type).toBe("run.aborted");
    expect((last.payload as { stops: unknown[] }).stops).toHaveLength(1);
  });

  it("an abort while a tool waits for the host is recorded on the tape as the call's halting error; it replays", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort("SIGTERM"), 200);
    const files = jsPack({ tools: { wait: WAIT, echo: ECHO }, plan: planOf([{ id: "a", tool: "wait" }, { id: "b", tool: "echo" }]), manifest: NET });
    const record = await runAndReplay(files, { signal: controller.signal, fetch: never });
    expect(record.status).toBe("ABORTED");
    expect(record.workspaceFiles.has("out/p.txt")).toBe(false);
    expect(record.tape.records.at(-1)?.error?.code).toBe("EXEC_ABORTED");
    expect((record.events.at(-1)!.payload as { signal: string }).signal).toBe("SIGTERM");
  });

  it("the watchdog stops a tool that waits too long (EXEC_TOOL_TIMEOUT, reason watchdog); the run replays", async () => {
    const files = jsPack({ tools: { wait: WAIT, echo: ECHO }, plan: planOf([{ id: "a", tool: "wait" }], { execution: { step_timeout_ms: 100 } }), manifest: NET });
    const record = await runAndReplay(files, { fetch: never });
    expect(record.status).toBe("FAILED");
    expect(record.error?.code).toBe("EXEC_TOOL_TIMEOUT");
    expect(record.error?.details["reason"]).toBe("watchdog");
  });

  it("an abort noticed between steps is recorded as abortedAt and replays", async () => {
    let firstDone = false;
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "a", tool: "echo" }, { id: "b", tool: "echo" }]) });
    const record = await runAndReplay(files, {
      interrupted: () => firstDone,
      onProgress: (p) => {
        if (p.kind === "step" && p.status === "completed") firstDone = true;
      },
    });
    expect(record.status).toBe("ABORTED");
    expect((record.events.at(-1)!.payload as { abortedAt: unknown }).abortedAt).toEqual({ phase: "executing", stepIndex: 1 });
  });

  it("an abort before anything runs replays as one", async () => {
    const controller = new AbortController();
    controller.abort("SIGINT");
    const record = await runAndReplay(jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "a", tool: "echo" }]) }), { signal: controller.signal });
    expect(record.status).toBe("ABORTED");
    expect(record.events.map((e) => e.type)).toEqual(["run.started", "run.aborted"]);
  });

  it("an abort while the planner runs lands at a refill of the planner's meter; it replays", async () => {
    let polls = 0;
    const planner = "export default () => { for (;;) {} }";
    const record = await runAndReplay(jsPack({ tools: { echo: ECHO }, plan: planner }), { interrupted: () => ++polls > 30 });
    expect(record.status).toBe("ABORTED");
    expect(record.events.map((e) => e.type)).toEqual(["run.started", "run.aborted"]);
    expect((record.events.at(-1)!.payload as { stops: { reason: string }[] }).stops[0]?.reason).toBe("abort");
  });
});
