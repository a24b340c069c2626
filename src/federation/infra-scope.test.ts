// Delegation scopes and the engine's infrastructure tools (seed 003 §6.2 rule 1, "explicitly granted"): a delegated
// run may call write_memory, read_memory, write_temp, read_lines or exec_python only when its scope names it
// (`tool:exec_python`, …), whether the plan is static, from a planner, or a replan; a scope without the entry does not
// grant it, and a re-delegation cannot add it. A refused plan returns no capsule (a replan is refused before any of
// it runs); a granted one has the run hash of the same run done locally, and its capsule verifies and replays.
import { describe, expect, it } from "vitest";
import { writeArchive } from "../capsule/archive.ts";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { openSession, runEngine } from "../engine/engine.ts";
import { INFRA_TOOL_NAMES } from "../engine/infra-tools.ts";
import { replayCapsule } from "../engine/replay.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { jsPack, packFromDisk, planOf } from "../../tests/support/pack.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import type { Delegation } from "../protocol/delegation.ts";
import { ReachError } from "../protocol/errors.ts";
import { requestDelegatedRun } from "./delegated-client.ts";
import { signDelegation } from "./delegation.ts";
import { TestNetwork } from "../../tests/support/federation.ts";
import type { TestNode } from "../../tests/support/federation.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const iso = (ms: number): string => new Date(ms).toISOString();
const ECHO = "export default (input) => ({ echo: input })";
const PY = { id: "py", tool: "exec_python", arguments: { code: "result = 6 * 7" } };
const ARGS: Record<string, object> = {
  write_memory: { key: "k", value: 1 },
  read_memory: { key: "k" },
  write_temp: { name: "a.txt", content: "x\n" },
  read_lines: { path: "temp/a.txt" },
  exec_python: PY.arguments,
};
const archive = (files: Map<string, Uint8Array>): Uint8Array => writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));

async function net(): Promise<{ n: TestNetwork; a: TestNode; b: TestNode; c: TestNode }> {
  const n = new TestNetwork();
  const [a, b, c] = [await n.add(1), await n.add(2), await n.add(3)];
  await n.meshAll();
  return { n, a, b, c };
}

function grant(n: TestNetwork, from: TestNode, to: TestNode, scope: string[], parent?: Delegation): Delegation {
  const t = n.clock.now;
  return signDelegation({ delegator: from.id, delegate: to.id, scope, issuedAt: iso(t), expiresAt: iso(t + 3_600_000), ...(parent === undefined ? {} : { parent: parent.delegationId }) }, from.self.keys.privateKey);
}

async function delegated(n: TestNetwork, from: TestNode, at: TestNode, chain: Delegation[], files: Map<string, Uint8Array>): Promise<Awaited<ReturnType<typeof requestDelegatedRun>> | ReachError> {
  return await requestDelegatedRun(n.client(from), at.self.identity, { archive: archive(files), input: { text: "hi" }, seed: "5", approve: false, restricted: true, chain }).catch((e: unknown) => {
    expect(e).toBeInstanceOf(ReachError);
    return e as ReachError;
  });
}

function refusedFor(r: unknown, tool: string): void {
  expect(r).toBeInstanceOf(ReachError);
  expect((r as ReachError).code).toBe("POLICY_VIOLATION");
  expect((r as ReachError).details).toMatchObject({ violationType: "UNDEFINED_TOOL", attemptedCapability: `tool:${tool}` });
  expect((r as ReachError).message).toContain(`tool:${tool}`);
}

const ran = (node: TestNode): boolean => node.logs.some((l) => /^run [0-9a-f]{64} /.test(l));

describe("infrastructure tools need their own scope entry (seed 003 §6.2)", () => {
  it("a tool:echo delegation cannot run exec_python, nor any other infrastructure tool; nothing runs", async () => {
    const { n, a, c } = await net();
    const d = grant(n, a, c, ["tool:echo"]);
    for (const tool of INFRA_TOOL_NAMES) {
      const r = await delegated(n, a, c, [d], jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "e", tool: "echo" }, { id: "x", tool, arguments: ARGS[tool]! }]) }));
      refusedFor(r, tool);
    }
    // packs/hello with an exec_python step added to its plan, under tool:wordcount
    const hello = packFromDisk("hello");
    const plan = JSON.parse(new TextDecoder().decode(hello.get("plan.json")!)) as { scope: { allowed: string[] }; steps: object[] };
    plan.steps.push({ ...PY, return_spec: { type: "object" } });
    plan.scope.allowed.push("exec_python");
    hello.set("plan.json", new TextEncoder().encode(JSON.stringify(plan)));
    refusedFor(await delegated(n, a, c, [grant(n, a, c, ["tool:wordcount"])], hello), "exec_python");
    expect(ran(c)).toBe(false);
  });

  it("tool:echo plus tool:exec_python runs it, with the run hash of a local run; the capsule verifies and replays", async () => {
    const { n, a, c } = await net();
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "e", tool: "echo" }, PY]) });
    const run = await delegated(n, a, c, [grant(n, a, c, ["tool:echo", "tool:exec_python"])], files);
    if (run instanceof ReachError) throw run;
    expect(run.status).toBe("COMPLETED");
    const local = await runEngine(env, { pack: { files }, input: { text: "hi" }, seed: "5" });
    expect(run.runHash).toBe(local.runHash);
    const capsule = readRunCapsule(run.capsule.bytes);
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches, replay.divergence?.message).toBe(true);
    // write_memory is granted by its own entry only: exec_python's does not cover it
    const mem = await delegated(n, a, c, [grant(n, a, c, ["tool:echo", "tool:exec_python"])], jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "m", tool: "write_memory", arguments: ARGS["write_memory"]! }]) }));
    refusedFor(mem, "write_memory");
  });

  it("a plan from a planner, and a replan after a step ran, are held to the scope too", async () => {
    const { n, a, c } = await net();
    const d = grant(n, a, c, ["tool:echo"]);
    const head = `contract_version: "S2-B-05.v1", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "t", status: "APPROVED", risk: { level: 0 }, success_criteria: []`;
    const planned = `export default () => ({ ${head}, plan_id: "p", scope: { allowed: ["exec_python"] }, steps: [{ id: "py", tool: "exec_python", arguments: { code: "result = 1" }, return_spec: { type: "object" } }] });`;
    refusedFor(await delegated(n, a, c, [d], jsPack({ tools: { echo: ECHO }, plan: planned })), "exec_python");
    const replanned = `export default ({ context }) => context.replan === undefined
      ? ({ ${head}, plan_id: "first", scope: { allowed: ["echo"] }, steps: [{ id: "e", tool: "echo", arguments: {}, return_spec: { type: "object", required: ["missing"] } }] })
      : ({ ${head}, plan_id: "second", scope: { allowed: ["exec_python"] }, steps: [{ id: "py", tool: "exec_python", arguments: { code: "result = 1" }, return_spec: { type: "object" } }] });`;
    refusedFor(await delegated(n, a, c, [d], jsPack({ tools: { echo: ECHO }, plan: replanned, run: { maxReplans: 1 } })), "exec_python");
    expect(ran(c)).toBe(false);
  });

  it("a re-delegation cannot add an infrastructure tool, and one its parent grants is withheld when it does not name it", async () => {
    const { n, a, b, c } = await net();
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([PY]) });
    const ab = grant(n, a, b, ["tool:echo"]);
    const widened = await delegated(n, a, c, [ab, grant(n, b, c, ["tool:echo", "tool:exec_python"], ab)], files);
    expect([(widened as ReachError).code, (widened as ReachError).details?.["excess"]]).toEqual(["FED_DELEGATION_INVALID", ["tool:exec_python"]]);
    const wide = grant(n, a, b, ["tool:echo", "tool:exec_python"]);
    refusedFor(await delegated(n, a, c, [wide, grant(n, b, c, ["tool:echo"], wide)], files), "exec_python");
    const through = await delegated(n, a, c, [wide, grant(n, b, c, ["tool:echo", "tool:exec_python"], wide)], files);
    expect(through instanceof ReachError ? through.message : through.status).toBe("COMPLETED");
  });

  it("the engine's narrowing: a session lists and calls only the infrastructure tools it allows, refusing others unrecorded", async () => {
    const files = jsPack({ tools: { echo: ECHO }, plan: planOf([{ id: "e", tool: "echo" }]) });
    const session = await openSession(env, { pack: { files }, infraTools: ["read_memory"] });
    expect(session.tools().map((t) => t.name)).toEqual(["echo", "read_memory"]);
    await expect(session.call("exec_python", { code: "result = 1" })).rejects.toMatchObject({ code: "POLICY_VIOLATION", details: { infraTool: "exec_python" } });
    expect((await session.call("read_memory", { key: "k" })).ok).toBe(true);
    const run = await session.close();
    expect(run.status).toBe("COMPLETED");
    const capsule = readRunCapsule(run.capsule.bytes);
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    expect((await replayCapsule(capsule, env)).matches).toBe(true);
    await expect(runEngine(env, { pack: { files }, infraTools: ["shell"] })).rejects.toThrow(TypeError);
  });
});
