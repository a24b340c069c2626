import process from "node:process";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EngineRun } from "../engine/engine.ts";
import type { RunProgress } from "../engine/types.ts";
import { mayReachNetwork, runInline, runInlineFirst } from "./engine-inline.ts";
import type { WireRequest } from "./engine-wire.ts";
import { readPackFiles } from "./pack-files.ts";
import { busyPack } from "../../tests/support/pack.ts";
import { writeArchive } from "../capsule/archive.ts";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { replayCapsule } from "../engine/replay.ts";
import { readQuickJsEngineWasm } from "../platform/quickjs-engine.ts";

const root = new URL("../../", import.meta.url).pathname;


/** Progress without its wall-clock durations (which differ between any two runs). */
const shape = (ps: RunProgress[]): unknown[] => ps.map((p) => ("durationMs" in p ? { ...p, durationMs: 0 } : p));

afterEach(() => vi.unstubAllGlobals());

describe("runInlineFirst: a run tries the calling thread first", () => {
  it("a short run stays on the calling thread and records what a run anywhere records", async () => {
    const request: WireRequest = { pack: { files: await readPackFiles(`${root}packs/hello`) } };
    const onThread = vi.fn(async () => {
      throw new Error("not expected");
    });
    const run = await runInlineFirst(request, {}, 60_000, onThread);
    expect(onThread).not.toHaveBeenCalled();
    expect(run.status).toBe("COMPLETED");
    expect(run.runHash).toBe((await runInline(request, {})).runHash);
  }, 60_000);

  it("a run holding the thread past its budget starts again elsewhere: the same record, no progress twice", async () => {
    const request: WireRequest = { pack: { files: busyPack(3e6) } };
    const direct: RunProgress[] = [];
    const expected = await runInline(request, { onProgress: (p) => direct.push(p) });
    const seen: RunProgress[] = [];
    const onThread = vi.fn((r: WireRequest, o: { onProgress?: (p: RunProgress) => void }) => runInline(r, o));
    const run = await runInlineFirst(request, { onProgress: (p) => seen.push(p) }, 0, onThread);
    expect(onThread).toHaveBeenCalledTimes(1);
    expect(onThread.mock.calls[0]![0]).toBe(request); // started again from the request itself, not from the attempt
    expect(expected.status).toBe("COMPLETED");
    expect(run.runHash).toBe(expected.runHash);
    expect(shape(seen)).toEqual(shape(direct));
  }, 60_000);

  it("a pack that may reach the network goes to a thread at once; an archive's tool asking for it, before any request is sent", async () => {
    const fetched = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", fetched);
    const files = await readPackFiles(`${root}packs/http`);
    const base = { input: { url: "http://127.0.0.1:9/x.json" }, network: true, trust: { unrestricted: true } };
    const sentinel = { status: "COMPLETED", runHash: "elsewhere" } as unknown as EngineRun;
    const onThread = vi.fn(async () => sentinel);
    expect(await runInlineFirst({ ...base, pack: { files } }, {}, 60_000, onThread)).toBe(sentinel);
    expect(onThread).toHaveBeenCalledTimes(1);
    // An archive is not looked into before the run: its first fetch moves the run.
    const archive = writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));
    expect(await runInlineFirst({ ...base, pack: { archive } }, {}, 60_000, onThread)).toBe(sentinel);
    expect(onThread).toHaveBeenCalledTimes(2);
    expect(fetched).not.toHaveBeenCalled();
  }, 60_000);

  it("whether a pack may reach the network is read from its declaration as a run checks it, not from unchecked JSON", async () => {
    const files = await readPackFiles(`${root}packs/http`);
    const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json"))) as { manifest: { capabilities: { permissions: string[] } } };
    const withDoc = (d: unknown): WireRequest => ({ pack: { files: new Map([...files, ["reach.json", new TextEncoder().encode(JSON.stringify(d))]]) }, network: true });
    expect(await mayReachNetwork(withDoc(doc))).toBe(true);
    expect(await mayReachNetwork({ ...withDoc(doc), network: false })).toBe(false);
    // a declaration the run refuses (an unknown permission): the run fails on the calling thread, saying why
    const refused = { ...doc, manifest: { ...doc.manifest, capabilities: { ...doc.manifest.capabilities, permissions: [...doc.manifest.capabilities.permissions, "teleport"] } } };
    expect(await mayReachNetwork(withDoc(refused))).toBe(false);
  });

  it("a signal that came while the attempt held the thread before a step is acted on before the step runs, on the calling thread", async () => {
    const user = new AbortController();
    // The signal's handler runs once the loop turns (a timer set as the step starts), as a real one's; the step's
    // start then holds the thread past the budget. The loop turns before the step runs (the engine's check there):
    // the run ends ABORTED before the step, where it is, and is not moved. (A signal while a tool holds the thread
    // stops the run started again where the attempt stopped: engine-inline-signals.test.ts.)
    const onProgress = (p: RunProgress): void => {
      if (p.kind !== "step" || p.status !== "started") return;
      setTimeout(() => user.abort("SIGINT"), 0);
      // hold the thread for 80 ms of wall clock and of CPU (a loaded machine may give it less CPU than wall time)
      const cpu = (): number => (process.cpuUsage().user + process.cpuUsage().system) / 1000;
      const [wall0, cpu0] = [performance.now(), cpu()];
      while (performance.now() - wall0 < 80 || cpu() - cpu0 < 80) {
        // hold the thread
      }
    };
    const onThread = vi.fn(async (): Promise<EngineRun> => {
      throw new Error("not expected");
    });
    const run = await runInlineFirst({ pack: { files: busyPack(3e6) } }, { signal: user.signal, onProgress }, 50, onThread);
    expect(onThread).not.toHaveBeenCalled();
    expect(run.status).toBe("ABORTED");
    const events = new TextDecoder().decode(run.files.get("events.jsonl")).trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    expect(events.map((e) => e.type)).not.toContain("tool.invoked");
    expect(events.at(-1)!.payload).toMatchObject({ signal: "SIGINT", abortedAt: { phase: "executing", stepIndex: 0 } });
    const replay = await replayCapsule(readRunCapsule(run.capsule.bytes), { quickjsEngine: readQuickJsEngineWasm });
    expect(replay.matches).toBe(true);
  }, 60_000);

  it("a signal during the attempt ends the run ABORTED, as on a thread", async () => {
    const controller = new AbortController();
    controller.abort("SIGINT");
    const onThread = vi.fn(async () => {
      throw new Error("not expected");
    });
    const run = await runInlineFirst({ pack: { files: busyPack(3e6) } }, { signal: controller.signal }, 60_000, onThread);
    expect(run.status).toBe("ABORTED");
    expect(onThread).not.toHaveBeenCalled();
  }, 60_000);
});
