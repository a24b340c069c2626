// The mistakes agents make, between good calls, against the MCP face in process (the SDK's own Client over an
// in-memory transport): an unknown tool, bad arguments, a failing tool, a hanging tool, a spent budget, a path and a
// memory key outside the pack's resources. Every call after a mistake succeeds. A hard failure ends the run it
// happened in (seed 003 §7.2) and the session goes on in the next run of its chain, from the same workspace and memory;
// every capsule verifies and replays on its own, and the capsules link up. (tests/mcp.test.ts: the CLI on Node and Deno.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import type { EngineRun } from "../engine/engine.ts";
import { replayCapsule } from "../engine/replay.ts";
import { checkSessionChainLinks, SESSION_START, sessionLink } from "../engine/session-chain.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { openIsolatedSession } from "../host/engine-thread.ts";
import { readPackFiles, readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { buildRunView } from "../report/model.ts";
import { renderShow } from "../report/show.ts";
import { showJson } from "../report/show-json.ts";
import { createMcpServer } from "./server.ts";
import { McpSessionRun } from "./session-run.ts";
import type { McpEngine, McpSegment } from "./session-run.ts";
import { writeMcpPack } from "./_test-mcp.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-mistakes-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const files = await readPackFiles(writeMcpPack(join(scratch, "pack"), 5));
// Each call may compute 300 ms of fuel: `spin` is stopped there (counted in fuel, the same on every machine).
const engine: McpEngine = { openSession: ({ session, signal }) => openIsolatedSession({ pack: { files }, session, stepTimeoutMs: 300 }, signal === undefined ? {} : { signal }) };
const text = (r: object): string => (("content" in r ? (r.content as { text: string }[]) : [])[0]?.text ?? "");
const runOf = (r: CallToolResult): unknown => r._meta?.["reach-wasm/run"];

describe("an MCP session survives every refusal", () => {
  it("unknown tool, bad arguments, a failing and a hanging tool, a spent budget, a path and a memory key out of scope: each answered, the next call works; every run's capsule verifies, replays and links to the one before", async () => {
    const runs: EngineRun[] = [];
    let index: readonly McpSegment[] = [];
    const first = await engine.openSession({ session: SESSION_START });
    const session = new McpSessionRun(first, async (r) => (runs.push(r), `mem/${r.capsule.name}`), { engine, onSegment: (s) => void (index = [...s]) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(session, { name: "reach-wasm", version: "test" }).connect(a);
    const client = new Client({ name: "agent", version: "1" });
    await client.connect(b);
    expect((await client.getInstructions()) ?? "").toMatch(/each run of this session may make 5 tool calls and use 600000 ms of tool time.*The pack lets calls reach: workspace data\/ \(read\), temp\/ \(readwrite\); memory keys under notes\/ \(readwrite\); network: none\./);
    const call = (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
    const good = async (name: string, args: Record<string, unknown>, want: Record<string, unknown>): Promise<CallToolResult> => {
      const r = await call(name, args);
      expect(r.isError, `${name}: ${text(r)}`).toBeFalsy();
      expect(r.structuredContent).toMatchObject(want);
      return r;
    };

    // run 1
    expect(runOf(await good("write_temp", { name: "notes.txt", content: "alpha\nbeta\n" }, { path: "temp/notes.txt" }))).toMatchObject({ segment: 1, callsLeft: 4 });
    await good("write_memory", { key: "notes/k", value: { kept: true } }, { ok: true });
    // an unknown tool: a JSON-RPC error (-32602), nothing recorded, no budget spent
    await expect(call("rm_rf")).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown tool: "rm_rf" .*wordcount.*call tools\/list/) });
    expect(runOf(await good("wordcount", { text: "one two" }, { words: 2 }))).toMatchObject({ segment: 1, callsLeft: 2 });
    // bad arguments: a tool execution error the agent can correct, not recorded, no budget spent
    const bad = await call("wordcount", { txt: "x" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^PROTO_SCHEMA_VIOLATION: the arguments do not match tool "wordcount"'s inputSchema: .*fix the arguments and call again/);
    expect(runOf(bad)).toMatchObject({ segment: 1, callsLeft: 2 });
    // a memory key longer than the store takes is refused by the tool's schema too (not a hard failure in the store)
    expect(text(await call("write_memory", { key: `notes/${"k".repeat(300)}`, value: 1 }))).toMatch(/^PROTO_SCHEMA_VIOLATION: .*key/);
    // a failing tool: isError, rolled back, the run goes on
    const missing = await call("read_lines", { path: "temp/absent.txt" });
    expect(text(missing)).toMatch(/^EXEC_RESOURCE_UNAVAILABLE: .*the run goes on/);
    // a hanging tool: stopped at its time limit, the run goes on
    const hang = await call("spin");
    expect(text(hang)).toMatch(/^EXEC_TOOL_TIMEOUT: .*Call it with less work/);
    expect(runOf(hang)).toMatchObject({ segment: 1, callsLeft: 0 });
    // a spent budget: the call is refused, run 1 ends FAILED with its capsule, the next call goes to run 2
    const over = await call("wordcount", { text: "x" });
    expect(text(over)).toMatch(/^POLICY_RATE_LIMIT_EXCEEDED: .*— This run.s budget of 5 tool calls is spent\. Run 1 of this session ended FAILED \(run hash [0-9a-f]{64}\); its capsule is mem\/\S+\. This call was not carried out\. Your next call continues the session in run 2, .* fresh budget/);
    expect(over._meta?.["reach-wasm/ended"]).toMatchObject({ segment: 1, status: "FAILED", capsule: `mem/${runs[0]!.capsule.name}` });
    expect((await client.listTools())._meta?.["reach-wasm/run"]).toMatchObject({ segment: 2, callsLeft: 5 });
    // run 2: the workspace and memory carried over
    expect(runOf(await good("read_memory", { key: "notes/k" }, { value: { kept: true } }))).toMatchObject({ segment: 2, callsLeft: 4 });
    await good("read_lines", { path: "temp/notes.txt" }, { lines: ["alpha", "beta"] });
    // a path outside the pack's resources: a policy violation, which ends run 2 (seed 003 §7.2)
    const path = await call("read_lines", { path: "secret/passwd" });
    expect(text(path)).toMatch(/^POLICY_VIOLATION: .*ends the run it happens in \(Reach Protocol §7\.2\): use only what the pack declares — workspace data\/ \(read\), temp\/ \(readwrite\); memory keys under notes\/ \(readwrite\); network: none\. Run 2 of this session ended FAILED .*continues the session in run 3/);
    // run 3
    await good("wordcount", { text: "after the path" }, { words: 3 });
    const key = await call("read_memory", { key: "secret" });
    expect(text(key)).toMatch(/^POLICY_VIOLATION: memory\.get refused key "secret".* Run 3 of this session ended FAILED/);
    // run 4
    expect(runOf(await good("read_memory", { key: "notes/k" }, { value: { kept: true } }))).toMatchObject({ segment: 4 });
    expect((await client.readResource({ uri: "workspace:///temp/notes.txt" })).contents[0]).toMatchObject({ text: "alpha\nbeta\n" });
    await client.close();
    expect((await session.end()).run?.status).toBe("COMPLETED");

    expect(runs.map((r) => r.status)).toEqual(["FAILED", "FAILED", "FAILED", "COMPLETED"]);
    expect(index.map((s) => [s.segment, s.status, s.capsule])).toEqual(runs.map((r, i) => [i + 1, r.status, `mem/${r.capsule.name}`]));
    expect(index.map((s) => s.previousRunHash)).toEqual([null, ...runs.slice(0, 3).map((r) => r.runHash)]);
    const capsules = runs.map((r) => readRunCapsule(r.capsule.bytes));
    for (const c of capsules) {
      expect(verifyRunCapsule(c).checks.filter((x) => !x.ok)).toEqual([]);
      const replay = await replayCapsule(c, { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm });
      expect(replay.matches, replay.divergence?.message).toBe(true);
    }
    expect(checkSessionChainLinks(capsules)).toEqual([]);
    expect(sessionLink(capsules[1]!)).toMatchObject({ segment: 2, previousRunHash: runs[0]!.runHash });
    // a reader follows the session: `show` names the run each capsule continues
    const view = buildRunView({ origin: "capsule", entries: capsules[1]!.entries, index: capsules[1]!.index });
    expect(renderShow(view)).toContain(`session run 2 of an MCP session, continuing run ${runs[0]!.runHash}`);
    expect(showJson(view)["session"]).toEqual({ segment: 2, previousRunHash: runs[0]!.runHash });
    expect(renderShow(buildRunView({ origin: "capsule", entries: capsules[0]!.entries, index: capsules[0]!.index }))).toContain("session run 1 of an MCP session (its first)");
    // refused calls are not steps: run 1 recorded its 5 calls that ran and the refused budget call
    const plan = JSON.parse(new TextDecoder().decode(capsules[0]!.entries.get("plan.json")!)) as { steps: { tool: string }[] };
    expect(plan.steps.map((s) => s.tool)).toEqual(["write_temp", "write_memory", "wordcount", "read_lines", "spin", "wordcount"]);
    // a broken link is found: the chain out of order
    expect(checkSessionChainLinks([capsules[0]!, capsules[2]!])).not.toEqual([]);
  }, 120_000);
});
