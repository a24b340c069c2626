// Fork and resume (conformance/HASHING.md "Forks and resumed runs"): a run made from a recorded one takes the steps
// before its branch point from the parent's tape (checked), runs the rest live, commits its lineage in request.json,
// and verifies and replays like any capsule; diff names the branch step as the first divergence.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import type { RunCapsule } from "../capsule/run-capsule-core.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { jsPack, planOf } from "../../tests/support/pack.ts";
import { diffRuns } from "../report/diff.ts";
import { ReachError } from "../protocol/errors.ts";
import { openSession, runEngine } from "./engine.ts";
import type { EngineRunRequest } from "./engine.ts";
import { forkCapsule, resumeCapsule } from "./fork.ts";
import type { BranchedRun } from "./fork.ts";
import { replayCapsule } from "./replay.ts";
import { verifyRunCapsule } from "./verify.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A tool that computes a while (`n` turns) and reports its input and one memory read (a host call). */
const T = `export default (input, reach) => { let c = 0; for (let i = 0; i < (input.n ?? 0); i++) c = (c + i) % 1000003;
  const seen = reach.memory.get("k") ?? null; reach.memory.set("k", input.tag); return { tag: input.tag, c, seen, r: Math.floor(Math.random() * 1e9) }; }`;

function threeSteps(): Map<string, Uint8Array> {
  const plan = planOf([
    { id: "a", tool: "t", arguments: { tag: { $input: "/first" } } },
    { id: "b", tool: "t", arguments: { tag: { $input: "/second" }, n: 400000 } },
    { id: "c", tool: "t", arguments: { tag: "third" } },
  ]);
  const manifest = { capabilities: { tools: [{ name: "t" }], resources: [{ uri: "memory://", access: "readwrite" }] } };
  return jsPack({ tools: { t: T }, plan, manifest });
}

const INPUT = { first: "one", second: "two" };

async function run(files: Map<string, Uint8Array>, extra: Partial<EngineRunRequest> = {}) {
  const r = await runEngine(env, { pack: { files }, input: INPUT, trust: { unrestricted: true }, ...extra });
  return { run: r, capsule: readRunCapsule(r.capsule.bytes) };
}

function request(c: RunCapsule): Record<string, unknown> {
  return JSON.parse(dec.decode(c.entries.get("request.json")!)) as Record<string, unknown>;
}

function outputs(r: { result: Record<string, unknown> }): Record<string, { tag: string; seen: string | null; r: number }> {
  return r.result["outputs"] as Record<string, { tag: string; seen: string | null; r: number }>;
}

/** Every capsule written is verified and replayed. */
async function checked(child: BranchedRun): Promise<RunCapsule> {
  const capsule = readRunCapsule(child.capsule.bytes);
  const v = verifyRunCapsule(capsule);
  expect(v.checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
  expect(replay.runHash).toBe(child.runHash);
  return capsule;
}

describe("fork", () => {
  it("changes a step's arguments; the steps before come from the parent; the lineage is committed; diff starts at the step", async () => {
    const parent = await run(threeSteps());
    expect(parent.run.status).toBe("COMPLETED");
    const child = await forkCapsule(parent.capsule, env, "b", { arguments: { tag: "changed" } });
    expect(child.status, child.error?.message).toBe("COMPLETED");
    expect(child.runHash).not.toBe(parent.run.runHash);
    expect(child.runId).toBe(parent.run.runId);
    expect(child.before).toEqual(["a"]);
    const out = outputs(child);
    expect(out["a"]).toEqual(outputs(parent.run)["a"]);
    expect(out["b"]!.tag).toBe("changed");
    expect(out["c"]!.seen).toBe("changed"); // the live step after it sees the changed step's memory write
    const capsule = await checked(child);
    expect(request(capsule)["forkedFrom"]).toEqual({ runHash: parent.run.runHash, step: "b", changes: { arguments: { tag: "changed" } } });
    const d = diffRuns({ origin: "capsule", entries: parent.capsule.entries }, { origin: "capsule", entries: capsule.entries });
    expect(d.firstDivergence?.stepId).toBe("b");
    expect(d.firstDivergence?.type.a).toBe("tool.invoked");
    expect(d.inputs).toEqual(["forkedFrom"]);
    // the same fork again: the same run hash
    expect((await forkCapsule(parent.capsule, env, "2", { arguments: { tag: "changed" } })).runHash).toBe(child.runHash);
  });

  it("changes the input, the seed and a tool's build from the step on", async () => {
    const parent = await run(threeSteps());
    const other = enc.encode(T.replace("return { tag: input.tag", "return { build: 2, tag: input.tag"));
    const child = await forkCapsule(parent.capsule, env, "b", { input: { first: "x", second: "new" }, seed: "7", tools: new Map([["t", other]]) });
    expect(child.status, child.error?.message).toBe("COMPLETED");
    const out = outputs(child) as Record<string, Record<string, unknown>>;
    const was = outputs(parent.run) as Record<string, Record<string, unknown>>;
    expect(out["a"]).toEqual(was["a"]); // before the step: the parent's input, seed and build
    expect(out["b"]).toMatchObject({ build: 2, tag: "new" });
    expect(out["b"]!["r"]).not.toBe(was["b"]!["r"]); // another seed
    expect(out["c"]!["build"]).toBe(2);
    const capsule = await checked(child);
    const fork = request(capsule)["forkedFrom"] as { changes: { tools: { name: string; sha256: string }[] } };
    expect(fork.changes.tools[0]!.name).toBe("t");
    expect(capsule.entries.has(`fork/${fork.changes.tools[0]!.sha256}`)).toBe(true);
  });

  it("answers the step's K-th host call with a given response, and replays it", async () => {
    const parent = await run(threeSteps());
    const child = await forkCapsule(parent.capsule, env, "c", { responses: new Map([[1, enc.encode(JSON.stringify({ found: true, value: "answered" }))]]) });
    expect(outputs(child)["c"]!.seen).toBe("answered");
    expect(outputs(parent.run)["c"]!.seen).toBe("two");
    await checked(child);
  });

  it("takes the steps before the branch point from the parent's tape: a fetch there needs no network", async () => {
    const server = createServer((_q, res) => res.end(JSON.stringify({ title: "served once" })));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/doc`;
    const FETCH = `export default async (input, reach) => input.url === undefined ? { tag: input.tag } : { title: (await reach.http.fetch(input.url)).json().title }`;
    const files = jsPack({
      tools: { f: FETCH },
      plan: planOf([{ id: "get", tool: "f", arguments: { url } }, { id: "then", tool: "f", arguments: { tag: "x" } }]),
      manifest: { capabilities: { tools: [{ name: "f" }], permissions: ["network"] }, policies: { allowedHosts: ["127.0.0.1"], sandbox: { network: "restricted" } } },
    });
    let parent: Awaited<ReturnType<typeof run>>;
    try {
      parent = await run(files, { fetch: (u, i) => fetch(u, i) });
    } finally {
      server.close();
    }
    expect(parent.run.status, parent.run.error?.message).toBe("COMPLETED");
    const child = await forkCapsule(parent.capsule, env, "then", { arguments: { tag: "y" } }); // no fetch given
    expect(child.status, child.error?.message).toBe("COMPLETED");
    expect(outputs(child)["get"]).toEqual({ title: "served once" });
    await checked(child);
  });

  it("forks a fork: the parent's changes keep acting, the new ones win; a fork before the parent's is refused", async () => {
    const parent = await run(threeSteps());
    const first = await forkCapsule(parent.capsule, env, "b", { arguments: { tag: "first" }, seed: "3" });
    const second = await forkCapsule(readRunCapsule(first.capsule.bytes), env, "c", { arguments: { tag: "second" } });
    expect(second.status, second.error?.message).toBe("COMPLETED");
    expect(outputs(second)["b"]).toEqual(outputs(first)["b"]); // the first fork's change, from the first fork's tape
    expect(outputs(second)["c"]!.tag).toBe("second");
    expect(outputs(second)["c"]!.seen).toBe("first");
    expect(outputs(second)["c"]!.r).toBe(outputs(first)["c"]!.r); // the first fork's seed still acts at c
    const capsule = await checked(second);
    expect(request(capsule)["forkedFrom"]).toMatchObject({ runHash: first.runHash, step: "c", forkedFrom: { runHash: parent.run.runHash, step: "b" } });
    const early = await forkCapsule(readRunCapsule(first.capsule.bytes), env, "a", { seed: "1" }).catch((e: unknown) => e);
    expect((early as ReachError).code).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("resumes a fork that was aborted after its branch point; its changes keep acting", async () => {
    const parent = await run(threeSteps());
    const whole = await forkCapsule(parent.capsule, env, "b", { arguments: { tag: "mine", n: 10 } });
    const controller = new AbortController();
    const stopped = await forkCapsule(parent.capsule, env, "b", { arguments: { tag: "mine", n: 10 } }, {
      signal: controller.signal,
      onProgress: (p) => { if (p.kind === "step" && p.stepId === "c" && p.status === "started") controller.abort("SIGINT"); },
    });
    expect(stopped.status).toBe("ABORTED");
    await checked(stopped);
    const resumed = await resumeCapsule(readRunCapsule(stopped.capsule.bytes), env);
    expect(resumed.status, resumed.error?.message).toBe("COMPLETED");
    expect(outputs(resumed)).toEqual(outputs(whole));
    const capsule = await checked(resumed);
    expect(request(capsule)).toMatchObject({ forkedFrom: { runHash: parent.run.runHash, step: "b" }, resumedFrom: { runHash: stopped.runHash, status: "ABORTED" } });
  });

  it("refuses an unknown step, no change, a malformed change", async () => {
    const parent = await run(threeSteps());
    const code = async (p: Promise<unknown>) => p.then(() => "ok", (e: unknown) => (e instanceof ReachError ? e.code : String(e)));
    expect(await code(forkCapsule(parent.capsule, env, "nope", { seed: "1" }))).toBe("PROTO_INVALID_ARGUMENT");
    expect(await code(forkCapsule(parent.capsule, env, "b", {}))).toBe("PROTO_INVALID_ARGUMENT");
    expect(await code(forkCapsule(parent.capsule, env, "b", { seed: "-1" }))).toBe("PROTO_INVALID_ARGUMENT");
    expect(await code(forkCapsule(parent.capsule, env, "b", { tools: new Map([["missing", enc.encode("x")]]) }))).toBe("PROTO_INVALID_ARGUMENT");
    expect(await code(forkCapsule(parent.capsule, env, "b", { responses: new Map([[1, enc.encode("[1]")]]) }))).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("forks an MCP session run at call N", async () => {
    const session = await openSession(env, { pack: { files: threeSteps() }, trust: { unrestricted: true } });
    for (const tag of ["s1", "s2", "s3"]) expect((await session.call("t", { tag })).ok).toBe(true);
    const ended = await session.close();
    const parent = readRunCapsule(ended.capsule.bytes);
    const child = await forkCapsule(parent, env, "2", { arguments: { tag: "forked" } });
    expect(child.at).toBe("call-2");
    expect(outputs(child)["call-2"]!.tag).toBe("forked");
    expect(outputs(child)["call-3"]!.seen).toBe("forked");
    await checked(child);
  });
});

describe("resume", () => {
  /** The parent stopped in step b, as a signal or the watchdog would have stopped it. */
  async function stopped(reason: "abort" | "watchdog") {
    const full = await run(threeSteps());
    const events = dec.decode(full.capsule.entries.get("events.jsonl")!).trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    const invocationId = String(events.find((e) => e.type === "tool.invoked" && e.payload["stepId"] === "b")!.payload["invocationId"]);
    const stop = { stops: new Map([[invocationId, { fuel: 1n, reason }]]), signal: "SIGINT" };
    // the engine call's `stopAt` makes abort stops; a watchdog stop goes through runPack's `resume` directly
    if (reason === "abort") return { full, parent: await run(threeSteps(), { stopAt: { invocationId, fuel: "1", signal: "SIGINT" } }) };
    const { runPack } = await import("./coordinator.ts");
    const { loadPack } = await import("./pack.ts");
    const { buildRunCapsule } = await import("./capsule.ts");
    const loaded = await loadPack(threeSteps());
    const record = await runPack({ loaded, env, input: INPUT, resume: stop });
    return { full, parent: { run: { status: record.status, runHash: record.runHash }, capsule: readRunCapsule(buildRunCapsule(record, loaded).bytes) } };
  }

  it("continues an ABORTED run from its last completed step", async () => {
    const { full, parent } = await stopped("abort");
    expect(parent.run.status).toBe("ABORTED");
    const resumed = await resumeCapsule(parent.capsule, env);
    expect(resumed.status, resumed.error?.message).toBe("COMPLETED");
    expect(resumed.before).toEqual(["a"]);
    expect(resumed.at).toBe("b");
    expect(outputs(resumed)).toEqual(outputs(full.run));
    const capsule = await checked(resumed);
    expect(request(capsule)["resumedFrom"]).toEqual({ runHash: parent.run.runHash, status: "ABORTED", completedSteps: ["a"] });
  });

  it("continues a run the watchdog stopped; refuses a COMPLETED one", async () => {
    const { full, parent } = await stopped("watchdog");
    expect(parent.run.status).toBe("FAILED");
    const resumed = await resumeCapsule(parent.capsule, env);
    expect(resumed.status, resumed.error?.message).toBe("COMPLETED");
    expect(outputs(resumed)["c"]).toEqual(outputs(full.run)["c"]);
    await checked(resumed);
    const refused = await resumeCapsule(full.capsule, env).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ReachError);
    expect((refused as ReachError).code).toBe("PROTO_SEQUENCE_ERROR");
    expect((refused as ReachError).message).toMatch(/COMPLETED/);
  });
});
