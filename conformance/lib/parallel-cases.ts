/**
 * Parallel steps and step data flow (`src/engine/step-graph.ts`): a run's record is a function of its plan, never of
 * which step ran first or where. Each case runs the same pack sequentially and with steps at the same time — in
 * another dispatch order on this thread and, when the runner gives step threads, on them — and every way must give the
 * same run hash and the same capsule bytes (the fingerprint, compared across runtimes).
 * @module
 */
import { sha256Hex } from "../../src/canonical/sha256.ts";
import { readRunCapsule } from "../../src/capsule/run-capsule.ts";
import { buildRunCapsule } from "../../src/engine/capsule.ts";
import { runPack } from "../../src/engine/coordinator.ts";
import { loadPack } from "../../src/engine/pack.ts";
import { replayCapsule } from "../../src/engine/replay.ts";
import type { EngineEnvironment } from "../../src/engine/runners.ts";
import type { RunRecord } from "../../src/engine/types.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";
import { jsPack as jsPackFiles } from "./js-pack.ts";


/** Files of a pack under `packs/` (relative to conformance/). */
function packFiles(io: ConformanceIO, name: string): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const walk = (dir: string, rel: string): void => {
    for (const n of io.list(`${dir}`)) {
      const path = `${dir}/${n}`;
      const r = rel === "" ? n : `${rel}/${n}`;
      if (n.includes(".")) files.set(r, io.readBytes(path));
      else walk(path, r);
    }
  };
  walk(`../packs/${name}`, "");
  return files;
}

/** A pack of JS tools and a static plan, as files. */
function jsPack(tools: Record<string, string>, steps: object[], permissions: string[] = ["filesystem"]): Map<string, Uint8Array> {
  return jsPackFiles("parallel-case", tools, steps, permissions);
}

/** Run a pack; return the record and its capsule's bytes. */
async function run(env: EngineEnvironment, files: Map<string, Uint8Array>, parallel: number): Promise<{ record: RunRecord; capsule: Uint8Array }> {
  const loaded = await loadPack(files);
  const record = await runPack({ loaded, env, parallel });
  return { record, capsule: buildRunCapsule(record, loaded).bytes };
}

/** Every way gives the same run hash and capsule bytes, and the capsule replays; returns `runHash:sha256(capsule)`. */
async function sameEveryWay(io: ConformanceIO, env: EngineEnvironment, files: Map<string, Uint8Array>, expect: (r: RunRecord) => void): Promise<string> {
  const seq = await run(env, files, 1);
  expect(seq.record);
  const ways: [string, EngineEnvironment, number][] = [["4 at once on this thread", env, 4]];
  if (io.stepThreads !== undefined) ways.push(["2 step threads", { ...env, stepThreads: io.stepThreads }, 2]);
  for (const [way, e, n] of ways) {
    const par = await run(e, files, n);
    check(par.record.runHash === seq.record.runHash, `${way}: run hash ${par.record.runHash}, sequentially ${seq.record.runHash}`);
    check(sha256Hex(par.capsule) === sha256Hex(seq.capsule), `${way}: the capsule's bytes differ from the sequential run's`);
  }
  const replay = await replayCapsule(readRunCapsule(seq.capsule), { ...env, ...(io.stepThreads === undefined ? {} : { stepThreads: io.stepThreads }) }, { parallel: 2 });
  check(replay.matches, `the replay diverged: ${replay.divergence?.message ?? replay.runHash}`);
  return `${seq.record.runHash}:${sha256Hex(seq.capsule)}`;
}

const WRITE = `export default (input, reach) => {
  let seen = null;
  try { seen = reach.fs.read("temp/x.txt"); } catch (e) { seen = null; }
  reach.fs.write("temp/x.txt", input.v);
  reach.memory.set("k", input.v);
  return { seen, t: [new Date().toISOString(), new Date().toISOString()] };
}`;
const READ = `export default (input, reach) => {
  let seen = null;
  try { seen = reach.fs.read("temp/x.txt"); } catch (e) { seen = "none"; }
  return { seen, k: reach.memory.get("k") ?? null, from: input.from ?? null, t: new Date().toISOString() };
}`;

/**
 * The cases.
 * @param io file access rooted at conformance/ (and step threads, when the runner gives them)
 * @returns the cases
 */
export function parallelCases(io: ConformanceIO): ConformanceCase[] {
  const env: EngineEnvironment = { quickjsEngine: io.readBytes("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm") };
  return [
    {
      name: "packs/parallel: 8 independent steps and one that adds their outputs — the same run hash and capsule bytes sequentially and in parallel",
      run: () => sameEveryWay(io, env, packFiles(io, "parallel"), (r) => {
        check(r.status === "COMPLETED", `status ${r.status}: ${r.error?.message}`);
        const total = r.outputs["total"] as JsonObject;
        const parts = Array.from({ length: 8 }, (_, i) => (r.outputs[`crunch-${i + 1}`] as JsonObject)["primes"] as number);
        check(total["primes"] === parts.reduce((a, b) => a + b, 0), "total is not the sum of the parts it was given with $step");
        check((total["notes"] as string[]).length === 8, "total did not see the notes its dependencies left");
      }),
    },
    {
      name: "a step sees exactly its dependencies' commits, in plan order; independent steps' conflicting writes resolve in plan order",
      run: () => sameEveryWay(io, env, jsPack({ write: WRITE, read: READ }, [
        { id: "a", tool: "write", arguments: { v: "a" }, depends_on: [] },
        { id: "b", tool: "write", arguments: { v: "b" }, depends_on: [] },
        { id: "after-a", tool: "read", depends_on: ["a"] },
        { id: "after-b-a", tool: "read", arguments: { from: { $step: "a", pointer: "/seen" } }, depends_on: ["b", "a"] },
        { id: "alone", tool: "read", depends_on: [] },
      ]), (r) => {
        check(r.status === "COMPLETED", `status ${r.status}: ${r.error?.message}`);
        const o = (id: string) => r.outputs[id] as JsonObject;
        check(o("b")["seen"] === null, "b saw a's write although it does not depend on a");
        check(o("after-a")["seen"] === "a" && o("after-a")["k"] === "a", `after-a saw ${JSON.stringify(o("after-a"))}, expected a's commits only`);
        check(o("after-b-a")["seen"] === "b" && o("after-b-a")["k"] === "b", `after-b-a saw ${JSON.stringify(o("after-b-a"))}, expected b's write (later in the plan) to win`);
        check(o("alone")["seen"] === "none" && o("alone")["k"] === null, "a root step saw another step's commits");
        check(new TextDecoder().decode(r.workspaceFiles.get("temp/x.txt")) === "b", "the run's workspace does not hold the plan-order winner");
        const aEnd = (o("a")["t"] as string[])[1]!;
        check((o("after-a")["t"] as string) > aEnd, "a dependent's clock does not start after its dependency's clock ended");
        check((o("alone")["t"] as string) < aEnd, "a root step's clock does not start at the plan's start");
      }),
    },
  ];
}
