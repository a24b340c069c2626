// A call the agent cancels (notifications/cancelled) while it waits its turn behind a running call never runs: the
// client was told it was cancelled, so its effects, its budget and its step must not appear in the run either. The
// SDK's own Client over an in-memory transport, the engine in process; the capsule verifies and replays.
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
import { SESSION_START } from "../engine/session-chain.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { openIsolatedSession } from "../host/engine-thread.ts";
import { readPackFiles, readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { createMcpServer } from "./server.ts";
import { McpSessionRun } from "./session-run.ts";
import type { McpEngine } from "./session-run.ts";
import { writeMcpPack } from "./_test-mcp.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-cancel-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const files = await readPackFiles(writeMcpPack(join(scratch, "pack"), 8));
// `spin` is stopped at 300 ms of fuel: the queued call waits behind it (counted in fuel, the same on every machine).
const engine: McpEngine = { openSession: ({ session, signal }) => openIsolatedSession({ pack: { files }, session, stepTimeoutMs: 300 }, signal === undefined ? {} : { signal }) };

describe("a cancelled MCP call", () => {
  it("cancelled while queued behind a running call: never runs, writes nothing, spends nothing, is not a step; the next call works; the capsule verifies and replays", async () => {
    const runs: EngineRun[] = [];
    const first = await engine.openSession({ session: SESSION_START });
    const session = new McpSessionRun(first, async (r) => (runs.push(r), `mem/${r.capsule.name}`), { engine });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(session, { name: "reach-wasm", version: "test" }).connect(a);
    const client = new Client({ name: "agent", version: "1" });
    await client.connect(b);

    const spin = client.callTool({ name: "spin", arguments: {} }) as Promise<CallToolResult>;
    const agent = new AbortController();
    const queued = client.callTool({ name: "write_temp", arguments: { name: "cancelled.txt", content: "never" } }, undefined, { signal: agent.signal });
    agent.abort("the agent changed its mind");
    await expect(queued).rejects.toThrow(/the agent changed its mind/);
    expect((await spin).content).toMatchObject([{ text: expect.stringMatching(/^EXEC_TOOL_TIMEOUT/) }]);
    const next = (await client.callTool({ name: "wordcount", arguments: { text: "still here" } })) as CallToolResult;
    expect(next.structuredContent).toMatchObject({ words: 2 });
    // spin and wordcount spent two calls of eight; the cancelled call none
    expect(next._meta?.["reach-wasm/run"]).toMatchObject({ segment: 1, callsLeft: 6 });
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain("workspace:///temp/cancelled.txt");
    await client.close();
    expect((await session.end()).run?.status).toBe("COMPLETED");

    const capsule = readRunCapsule(runs[0]!.capsule.bytes);
    const plan = JSON.parse(new TextDecoder().decode(capsule.entries.get("plan.json")!)) as { steps: { tool: string }[] };
    expect(plan.steps.map((s) => s.tool)).toEqual(["spin", "wordcount"]);
    expect([...capsule.entries.keys()].filter((p) => p.includes("cancelled.txt"))).toEqual([]);
    expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
    const replay = await replayCapsule(capsule, { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm });
    expect(replay.matches, replay.divergence?.message).toBe(true);
  }, 60_000);
});
