import { getEventListeners } from "node:events";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { EngineRun } from "../engine/engine.ts";
import { jsPack } from "../../tests/support/pack.ts";
import type { JsonValue } from "../protocol/json.ts";
import { openInlineSession } from "./engine-inline.ts";
import { openInlineFirstSession } from "./engine-inline-session.ts";
import type { IsolatedSession, WireRequest } from "./engine-wire.ts";
import { readPackFiles } from "./pack-files.ts";

const root = new URL("../../", import.meta.url).pathname;

/** A quick tool and one that computes for seconds (it holds the thread far past any budget used here). */
const loop = (turns: number): string => `export default (a) => { let c = 0; for (let i = 0; i < ${turns}; i++) c = (c + i) % 1000003; return { c, tag: a.tag ?? null }; }\n`;
const request: WireRequest = {
  pack: {
    files: jsPack({
      tools: { quick: loop(100), slow: loop(3e7) },
      plan: { contract_version: "S2-B-05.v1", plan_id: "p", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "t", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["quick"] }, steps: [], success_criteria: [] },
      manifest: { policies: { maxToolCalls: 50, maxExecutionTime: 600_000 } },
    }),
  },
};
const calls: [string, JsonValue][] = [
  ["quick", { tag: "a" }],
  ["write_memory", { key: "k", value: [1, 2] }],
  ["quick", { tag: "b" }],
  ["slow", { tag: "s" }],
  ["quick", { tag: "c" }],
];

/** How many answers the tests have received so far (when a session moved, it says after which call). */
let answered = 0;

/** The answers as the client sees them (errors by code and message). */
async function answers(session: IsolatedSession, list: [string, JsonValue][]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [tool, args] of list) {
    const a = await session.call(tool, args);
    answered++;
    out.push(a.ok ? a : { ok: false, stepId: a.stepId, code: a.error.code, message: a.error.message, ended: a.ended });
  }
  return out;
}

/** The same session made directly on one engine (what a session on a thread records). */
async function direct(list: [string, JsonValue][]): Promise<{ answers: unknown[]; run: EngineRun }> {
  const session = await openInlineSession(request, {});
  const a = await answers(session, list);
  return { answers: a, run: await session.close() };
}

describe("openInlineFirstSession: MCP calls on the calling thread first", () => {
  // The JavaScript engine is loaded and compiled once per process: not inside a call whose hold is measured here.
  beforeAll(async () => void (await direct([["quick", {}]])), 60_000);

  it("short calls stay on the calling thread and record what a session anywhere records", async () => {
    const onThread = vi.fn(async (): Promise<IsolatedSession> => {
      throw new Error("not expected");
    });
    const list = calls.filter(([tool]) => tool !== "slow");
    const session = await openInlineFirstSession(request, {}, 60_000, onThread);
    const got = await answers(session, list);
    const run = await session.close();
    expect(onThread).not.toHaveBeenCalled();
    const expected = await direct(list);
    expect(got).toEqual(expected.answers);
    expect(run.status).toBe("COMPLETED");
    expect(run.runHash).toBe(expected.run.runHash);
  }, 60_000);

  it("a call holding the thread moves the session: the calls before it are made again there, the record is the same", async () => {
    const made: [string, JsonValue][] = [];
    let movedAfter = -1;
    const onThread = vi.fn(async (r: WireRequest, o: { signal?: AbortSignal }): Promise<IsolatedSession> => {
      movedAfter = answered;
      const s = await openInlineSession(r, o);
      return { ...s, call: (tool, args) => (made.push([tool, args]), s.call(tool, args)) };
    });
    const server = new AbortController(); // the server's signal: it outlives every session
    const session = await openInlineFirstSession(request, { signal: server.signal }, 100, onThread);
    const start = answered;
    const got = await answers(session, calls);
    const run = await session.close();
    expect(onThread).toHaveBeenCalledTimes(1);
    expect(onThread.mock.calls[0]![0]).toBe(request);
    expect(movedAfter - start).toBe(3); // the three quick calls were answered here, the slow one moved the session
    expect(getEventListeners(server.signal, "abort")).toHaveLength(0); // a closed session leaves nothing on it
    // Everything from the first call on, in order: the three answered before, the one that held the thread, the rest.
    expect(made).toEqual(calls);
    const expected = await direct(calls);
    expect(got).toEqual(expected.answers);
    expect(run.status).toBe("COMPLETED");
    expect(run.runHash).toBe(expected.run.runHash);
  }, 120_000);

  it("a signal while a call holds the thread ends the session ABORTED after the calls answered before it", async () => {
    const user = new AbortController();
    const onThread = vi.fn((r: WireRequest, o: { signal?: AbortSignal }) => openInlineSession(r, o));
    const session = await openInlineFirstSession(request, { signal: user.signal }, 100, onThread);
    const before = await answers(session, calls.slice(0, 3));
    // Its handler runs once the slow call has given the thread up (the timer is due while the call computes; the loop
    // turns before a call's step too, so on a machine slow to start the call the signal stops it before it runs).
    setTimeout(() => user.abort("SIGINT"), 30);
    const held = await session.call("slow", { tag: "s" });
    const run = await session.close(true);
    expect(onThread.mock.calls.length).toBeLessThanOrEqual(1);
    expect(before.every((a) => (a as { ok: boolean }).ok)).toBe(true);
    expect(held.ok).toBe(false);
    expect(run.status).toBe("ABORTED");
    const events = new TextDecoder().decode(run.files.get("events.jsonl")).trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: { stepId?: string } });
    expect(events.filter((e) => e.type === "run.step.completed").map((e) => e.payload.stepId)).toEqual(["call-1", "call-2", "call-3"]);
  }, 120_000);

  it("a pack that may reach the network opens on a thread at once", async () => {
    const sentinel = { tools: [], pack: { id: "elsewhere" } } as unknown as IsolatedSession;
    const onThread = vi.fn(async () => sentinel);
    const files = await readPackFiles(`${root}packs/http`);
    expect(await openInlineFirstSession({ pack: { files }, network: true, trust: { unrestricted: true } }, {}, 60_000, onThread)).toBe(sentinel);
    expect(onThread).toHaveBeenCalledTimes(1);
  }, 60_000);
});
