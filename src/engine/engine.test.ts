// The coordinator and executor end to end through runPack: lifecycle events, budgets, replans, insufficient, abort,
// isolation between runs, and that every event validates against our schema and the upstream event.schema.json.
import { readFileSync } from "node:fs";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { verifyChain } from "../ledger/verify.ts";
import { RunEventSchema } from "../protocol/event.ts";
import { jsPack, packFromDisk, planOf, runFiles } from "../../tests/support/pack.ts";
import type { RunRecord } from "./types.ts";

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const upstream = ajv.compile(JSON.parse(readFileSync(new URL("../../conformance/upstream-schemas/event.schema.json", import.meta.url), "utf8")));

function checkEvents(record: RunRecord): void {
  for (const e of record.events) {
    const plain = JSON.parse(JSON.stringify(e));
    expect(RunEventSchema().safeParse(plain).success, `${e.type}: ${JSON.stringify(RunEventSchema().safeParse(plain).error?.issues)}`).toBe(true);
    expect(upstream(plain), `${e.type}: ${JSON.stringify(upstream.errors)}`).toBe(true);
  }
  expect(verifyChain(record.events.map((e) => JSON.parse(JSON.stringify(e))), record.runHash).valid).toBe(true);
}

const types = (r: RunRecord): string[] => r.events.map((e) => e.type);
const ECHO = "export default (input) => ({ echo: input })";

describe("runPack: the notes pack (planner, three sandboxes, workspace, memory, artifact)", () => {
  it("completes with the §3.2 event sequence, evidence and an artifact, and every event validates upstream", async () => {
    const r = await runFiles(packFromDisk("notes"));
    expect(r.status, r.error?.message).toBe("COMPLETED");
    expect(r.plan?.steps?.map((s) => s.id)).toEqual(["checksum", "stats", "slug", "save", "index"]);
    expect(types(r)[0]).toBe("run.started");
    expect(types(r).at(-1)).toBe("run.completed");
    expect(types(r).filter((t) => t === "tool.completed")).toHaveLength(5);
    expect(r.evidence.map((e) => [e.stepId, e.status, e.schemaValidation])).toEqual([
      ["checksum", "completed", "pass"], ["stats", "completed", "pass"], ["slug", "completed", "pass"], ["save", "completed", "pass"], ["index", "completed", "pass"],
    ]);
    expect(r.artifacts).toHaveLength(1);
    expect(r.artifacts[0]!.info.mimeType).toBe("text/markdown");
    expect([...r.workspaceFiles.keys()]).toContain("out/index.json");
    expect(r.outputs["index"]).toMatchObject({ count: 1 });
    expect(r.header.plan_hash).toBe(r.planHash);
    expect(r.header.phases).toEqual(["PENDING", "PREPARING", "EXECUTING", "COMPLETED"]);
    checkEvents(r);
  });

  it("two runs in one process share nothing and give the same run hash", async () => {
    const [a, b] = await Promise.all([runFiles(packFromDisk("notes")), runFiles(packFromDisk("notes"))]);
    expect(a.status).toBe("COMPLETED");
    expect(b.runHash).toBe(a.runHash);
    // each run's memory store saw exactly its own note
    expect(a.outputs["index"]).toMatchObject({ count: 1 });
    expect(b.outputs["index"]).toMatchObject({ count: 1 });
  });

  it("a different input or seed gives a different run hash", async () => {
    const a = await runFiles(packFromDisk("notes"));
    const b = await runFiles(packFromDisk("notes"), { input: { title: "Another note" } });
    const c = await runFiles(packFromDisk("notes"), { seed: "7" });
    expect(new Set([a.runHash, b.runHash, c.runHash]).size).toBe(3);
  });

  it("in the restricted executor the writing step fails and leaves no partial effect", async () => {
    const r = await runFiles(packFromDisk("notes"), { restricted: true });
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("POLICY_VIOLATION");
    expect(types(r)).toContain("policy.violation");
    expect([...r.workspaceFiles.keys()].filter((p) => p.startsWith("out/"))).toEqual([]);
    expect(r.artifacts).toHaveLength(0);
    checkEvents(r);
  });
});

describe("runPack: budgets, outputs and failures", () => {
  it("maxToolCalls stops the run before the call that would exceed it", async () => {
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "a", tool: "echo" }, { id: "b", tool: "echo" }]), manifest: { policies: { maxToolCalls: 1 } } });
    const r = await runFiles(files);
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("POLICY_RATE_LIMIT_EXCEEDED");
    expect(types(r).filter((t) => t === "run.step.started")).toHaveLength(1);
    checkEvents(r);
  });

  it("a step answering insufficient fails the run cleanly with that reason (seed 002)", async () => {
    const files = jsPack({ tools: { multi: `export default () => ({ status: "insufficient", need: ["two tools"] })` }, plan: planOf([{ id: "a", tool: "multi" }]) });
    const r = await runFiles(files);
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("EXEC_INSUFFICIENT");
    const failed = r.events.find((e) => e.type === "run.step.failed")!;
    expect((failed.payload as { result: { status: string } }).result.status).toBe("insufficient");
    checkEvents(r);
  });

  it("an output that does not match return_spec fails with schemaValidation fail and commits nothing", async () => {
    const writer = `export default (i, reach) => { reach.fs.write("out/x.txt", "x"); return { n: "not a number" }; }`;
    const files = jsPack({
      tools: { w: writer },
      plan: planOf([{ id: "a", tool: "w", return_spec: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } }]),
      manifest: { capabilities: { tools: [{ name: "w" }], resources: [{ uri: "workspace:///out/", access: "readwrite" }], permissions: ["filesystem"] } },
    });
    const r = await runFiles(files);
    expect(r.error?.code).toBe("EXEC_OUTPUT_INVALID");
    expect(r.evidence[0]!.schemaValidation).toBe("fail");
    expect(r.workspaceFiles.has("out/x.txt")).toBe(false);
    checkEvents(r);
  });

  it("the tool's inputSchema is enforced before the tool runs", async () => {
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "a", tool: "echo", arguments: { n: "x" } }]), toolDefs: { echo: { inputSchema: { type: "object", properties: { n: { type: "integer" } } } } } });
    const r = await runFiles(files);
    expect(r.error?.code).toBe("PROTO_SCHEMA_VIOLATION");
    expect(r.tape.records).toHaveLength(0);
  });

  it("$input references take values from the run input; a missing one fails the run", async () => {
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "a", tool: "echo", arguments: { who: { $input: "/name" } } }]) });
    const ok = await runFiles(files, { input: { name: "Ada" } });
    expect(ok.outputs["a"]).toEqual({ echo: { who: "Ada" } });
    const missing = await runFiles(files, { input: {} });
    expect(missing.error?.code).toBe("PROTO_SCHEMA_VIOLATION");
  });

  it("a tool that returns a non-object fails with EXEC_OUTPUT_INVALID", async () => {
    const r = await runFiles(jsPack({ tools: { n: "export default () => 42" }, plan: planOf([{ id: "a", tool: "n" }]) }));
    expect(r.error?.code).toBe("EXEC_OUTPUT_INVALID");
  });
});

describe("runPack: replanning (seed 001: no silent retries)", () => {
  const planner = `export default ({ context }) => {
    const bad = context.replan === undefined;
    return { contract_version: "S2-B-05.v1", plan_id: bad ? "first" : "second", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z",
      planner: "test", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["echo"] },
      steps: [{ id: bad ? "try" : "again", tool: "echo", arguments: { attempt: context.replan?.attempt ?? 0 },
        return_spec: bad ? { type: "object", required: ["missing"] } : { type: "object" } }], success_criteria: [] };
  }`;

  it("without maxReplans a soft failure ends the run", async () => {
    const r = await runFiles(jsPack({ tools: { echo: ECHO }, plan: planner }));
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("EXEC_OUTPUT_INVALID");
  });

  it("with maxReplans 1 the planner is asked again, the replan is a recorded step, and the run completes", async () => {
    const r = await runFiles(jsPack({ tools: { echo: ECHO }, plan: planner, run: { maxReplans: 1 } }));
    expect(r.status, r.error?.message).toBe("COMPLETED");
    const replan = r.events.find((e) => e.type === "run.step.started" && (e.payload as { stepType: string }).stepType === "replan");
    expect(replan).toBeDefined();
    expect(r.plan?.plan_id).toBe("second");
    expect(r.outputs["again"]).toEqual({ echo: { attempt: 1 } });
    expect(r.evidence[0]!.replanEvents).toEqual(["reach.replan.1"]);
    checkEvents(r);
  });

  it("a hard failure is never replanned", async () => {
    const hard = `export default (i, reach) => reach.fs.read("../x")`;
    const r = await runFiles(jsPack({ tools: { echo: hard }, plan: planner, run: { maxReplans: 3 } }));
    expect(r.status).toBe("FAILED");
    expect(r.events.some((e) => (e.payload as { stepType?: string }).stepType === "replan")).toBe(false);
  });
});

describe("runPack: abort", () => {
  it("an abort while a tool waits ends the run ABORTED with the step rolled back and run.aborted last", async () => {
    const waiting = `export default async (i, reach) => { reach.fs.write("out/p.txt", "p"); await reach.http.fetch("http://127.0.0.1:9/never"); return {}; }`;
    const files = jsPack({
      tools: { wait: waiting },
      plan: planOf([{ id: "a", tool: "wait" }]),
      manifest: { capabilities: { tools: [{ name: "wait" }], resources: [{ uri: "workspace:///out/", access: "readwrite" }], permissions: ["filesystem", "network"] }, policies: { allowedHosts: ["127.0.0.1"] } },
    });
    const controller = new AbortController();
    const never: typeof fetch = (_u, init) => new Promise((_res, rej) => init?.signal?.addEventListener("abort", () => rej(new Error("aborted"))));
    setTimeout(() => controller.abort("SIGINT"), 300);
    const started = performance.now();
    const r = await runFiles(files, { signal: controller.signal, fetch: never });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(r.status).toBe("ABORTED");
    expect(r.error?.code).toBe("EXEC_ABORTED");
    expect(types(r).slice(-3)).toEqual(["tool.failed", "run.step.failed", "run.aborted"]);
    expect(r.workspaceFiles.has("out/p.txt")).toBe(false);
    checkEvents(r);
  });

  it("an abort before the run starts still writes run.started and run.aborted", async () => {
    const controller = new AbortController();
    controller.abort("SIGTERM");
    const r = await runFiles(jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "a", tool: "echo" }]) }), { signal: controller.signal });
    expect(r.status).toBe("ABORTED");
    expect(types(r)).toEqual(["run.started", "run.aborted"]);
  });
});

describe("runPack: WASI tools and the policy (the workspace enforces what the host API would)", () => {
  // A WASI command that creates out/x.txt through its first preopen (fd 3) and prints {}; exit 100+errno on refusal.
  const WAT = `(module
    (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
    (memory (export "memory") 1)
    (data (i32.const 0) "x.txt")
    (data (i32.const 32) "{}")
    (func (export "_start") (local $e i32)
      (local.set $e (call $open (i32.const 3) (i32.const 0) (i32.const 0) (i32.const 5) (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 16)))
      (if (local.get $e) (then (call $exit (i32.add (i32.const 100) (local.get $e)))))
      (i32.store (i32.const 64) (i32.const 32))
      (i32.store (i32.const 68) (i32.const 2))
      (drop (call $write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 72)))))`;
  async function writerPack(permissions: string[], sandbox?: Record<string, unknown>): Promise<Map<string, Uint8Array>> {
    const binaryen = (await import("binaryen")).default;
    const mod = binaryen.parseText(WAT);
    const wasm = mod.emitBinary();
    mod.dispose();
    const enc = new TextEncoder();
    const doc = {
      specVersion: "1.0.0", id: "writer", version: "1.0.0", entrypoint: "plan.json", tools: { w: { kind: "wasm", module: "w.wasm" } },
      manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "w" }], resources: [{ uri: "workspace:///out/", access: "readwrite" }], permissions }, ...(sandbox === undefined ? {} : { policies: { sandbox } }) },
    };
    return new Map([["reach.json", enc.encode(JSON.stringify(doc))], ["plan.json", enc.encode(JSON.stringify(planOf([{ id: "a", tool: "w" }])))], ["w.wasm", wasm]]);
  }

  it("unrestricted with the filesystem permission, the tool writes out/x.txt", async () => {
    const r = await runFiles(await writerPack(["filesystem"]));
    expect(r.status, r.error?.message).toBe("COMPLETED");
    expect(r.workspaceFiles.has("out/x.txt")).toBe(true);
  });

  it("in the restricted executor the same write is refused and nothing is written", async () => {
    const r = await runFiles(await writerPack(["filesystem"]), { restricted: true });
    expect(r.status).toBe("FAILED");
    expect(r.workspaceFiles.has("out/x.txt")).toBe(false);
  });

  it("with sandbox.filesystem readonly the write is refused", async () => {
    const r = await runFiles(await writerPack(["filesystem"], { filesystem: "readonly" }));
    expect(r.status).toBe("FAILED");
    expect(r.workspaceFiles.has("out/x.txt")).toBe(false);
  });

  it("without the filesystem permission nothing is preopened", async () => {
    const r = await runFiles(await writerPack([]));
    expect(r.status).toBe("FAILED");
    expect(r.error?.details["exitCode"]).toBe(108); // 100 + EBADF: fd 3 does not exist
  });
});
