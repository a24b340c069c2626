// The report's step-through where the record cannot say: the state after a WASI step (its writes go through its
// preopened directories, not through recorded host calls) comes from replaying the capsule, trusted only when the
// replay reproduces the run hash and checked against every state the record gives; a replay that diverges leaves
// those steps "cannot reconstruct" with the divergence as the reason.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashCanonical } from "../src/canonical/jcs.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import type { RunCapsule } from "../src/capsule/run-capsule.ts";
import { buildRunCapsule } from "../src/engine/capsule.ts";
import { loadPack } from "../src/engine/pack.ts";
import { replayedStates } from "../src/engine/replay-states.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { defaultEnvironment } from "../src/host/mod.ts";
import { valueCommit } from "../src/canonical/commit.ts";
import { buildRunView, renderReport, workspaceDigest } from "../src/report/mod.ts";
import type { RunView } from "../src/report/mod.ts";
import { wat } from "../src/sandbox/wasi/_test-support.ts";
import { jsPack, planOf, runFiles } from "./support/pack.ts";
import { cli, ROOT } from "./_test-report.ts";
import { forged } from "./support/forge.ts";

const env = defaultEnvironment();
const scratch = mkdtempSync(join(tmpdir(), "reach-report-replay-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const enc = new TextEncoder();
const dec = new TextDecoder();

const capsuleOf = (folder: string): string => {
  const dir = join(ROOT, "conformance/capsules", folder);
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!);
};
const load = (folder: string): RunCapsule => readRunCapsule(readFileSync(capsuleOf(folder)));
const source = (c: RunCapsule) => ({ origin: "capsule" as const, entries: c.entries, index: c.index, damaged: c.damaged });
const text = (m: ReadonlyMap<string, Uint8Array>, path: string) => dec.decode(m.get(path));

async function replayedView(c: RunCapsule): Promise<RunView> {
  return buildRunView({ ...source(c), replayed: await replayedStates(c, env) });
}

// A WASI command: through its first preopen (out/) it writes x.txt and makes the link `link` → x.txt; prints {}.
const WRITER = `(module
  (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "x.txt")
  (data (i32.const 8) "link")
  (data (i32.const 32) "{}")
  (data (i32.const 40) "written by a WASI tool\\n")
  (func $check (param $e i32) (if (local.get $e) (then (call $exit (i32.add (i32.const 100) (local.get $e))))))
  (func (export "_start")
    (call $check (call $open (i32.const 3) (i32.const 0) (i32.const 0) (i32.const 5) (i32.const 9) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 16)))
    (i32.store (i32.const 64) (i32.const 40))
    (i32.store (i32.const 68) (i32.const 23))
    (call $check (call $write (i32.load (i32.const 16)) (i32.const 64) (i32.const 1) (i32.const 72)))
    (call $check (call $close (i32.load (i32.const 16))))
    (call $check (call $symlink (i32.const 0) (i32.const 5) (i32.const 3) (i32.const 8) (i32.const 4)))
    (i32.store (i32.const 64) (i32.const 32))
    (i32.store (i32.const 68) (i32.const 2))
    (drop (call $write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 72)))))`;

// A JS tool: sets memory "k" (two of them run at the same time: the later in the plan wins) and writes out/<v>.txt.
const SET = `export default (input, reach) => { const seen = reach.memory.get("k") ?? null; reach.memory.set("k", input.v); reach.fs.write("out/" + input.v + ".txt", input.v); return { seen }; }`;

/** The WASI writer and three memory writers, two of them independent of everything: run 4 at once. */
async function wasiPack(): Promise<Map<string, Uint8Array>> {
  const files = jsPack({
    tools: { set: SET },
    plan: planOf([
      { id: "wasi", tool: "w", depends_on: [] },
      { id: "a", tool: "set", arguments: { v: "a" }, depends_on: [] },
      { id: "b", tool: "set", arguments: { v: "b" }, depends_on: [] },
      { id: "last", tool: "set", arguments: { v: "c" }, depends_on: ["wasi", "a", "b"] },
    ] as unknown as Parameters<typeof planOf>[0]),
    manifest: { capabilities: { tools: [{ name: "set" }, { name: "w" }], resources: [{ uri: "workspace:///out/", access: "readwrite" }], permissions: ["filesystem"] } },
  });
  const doc = JSON.parse(dec.decode(files.get("reach.json")!));
  doc.tools.w = { kind: "wasm", module: "tools/w.wasm" };
  files.set("reach.json", enc.encode(JSON.stringify(doc)));
  files.set("tools/w.wasm", await wat(WRITER));
  return files;
}

/** Re-chain a record's events after `mutate` changed payloads (a consistent forgery: every hash recomputed). */
describe("the state after each step, from a replay where the record cannot say", () => {
  it("notes (committed): every step's workspace and memory; the WASI steps' states too; the last is workspaceAfter", async () => {
    const c = load("notes");
    const tapeOnly = buildRunView(source(c));
    expect(tapeOnly.states.steps.filter((s) => !s.workspace.known).map((s) => s.stepId)).toEqual(["checksum", "stats", "slug", "save"]);
    const view = await replayedView(c);
    const s = view.states.steps;
    expect(view.states.replay).toEqual({ matches: true, reason: null });
    expect(s.every((x) => x.workspace.known && x.memory.known)).toBe(true);
    expect(s.map((x) => x.workspace.known && x.workspace.basis)).toEqual(["replay", "replay", "replay", "replay", "after"]);
    for (const x of s.slice(0, 3)) expect(x.workspace.known && [...x.workspace.files.keys()]).toEqual(["data/input.txt"]);
    const save = s[3]!.workspace;
    expect(save.known && save.changes).toEqual({ added: ["out/notes/what-reach-wasm-does.md"], changed: [], removed: [], unchanged: 1 });
    expect(save.known && text(save.files, "out/notes/what-reach-wasm-does.md")).toBe(text(c.entries, "workspace/after/out/notes/what-reach-wasm-does.md"));
    const last = s[4]!.workspace;
    expect(last.known && last.digest).toBe(workspaceDigest(view.workspace.after));
    expect(last.known && last.changes).toEqual({ added: ["out/index.json"], changed: [], removed: [], unchanged: 2 });
    expect(view.states.checks.at(-1)).toMatch(/reproduced the run hash.*gave 4 states the record does not, and agrees with every one the record gives/);
    const html = renderReport(view, null);
    const saved = html.slice(html.indexOf(`id="state-4"`), html.indexOf(`id="state-5"`));
    expect(saved).toContain("as replaying the capsule left it after this step");
    expect(saved).toContain("<h5><code>out/notes/what-reach-wasm-does.md</code></h5>");
    expect(html).not.toContain("Cannot reconstruct");
  });

  it("a WASI tool's file and link, and memory written by steps run at the same time, agree with the record", async () => {
    const files = await wasiPack();
    const loaded = await loadPack(files);
    const record = await runFiles(files, { parallel: 4 });
    expect(record.status, record.error?.message).toBe("COMPLETED");
    const c = readRunCapsule(buildRunCapsule(record, loaded).bytes);
    expect(verifyRunCapsule(c).checks.filter((x) => !x.ok)).toEqual([]);
    expect(buildRunView(source(c)).states.steps[0]!.workspace).toMatchObject({ known: false, reason: expect.stringContaining("WASI tool") });
    const view = await replayedView(c); // the replay: it must reproduce the run hash, or no state comes from it
    expect(view.states.replay).toEqual({ matches: true, reason: null });
    const [wasi, a, b, last] = view.states.steps;
    expect(wasi!.workspace).toMatchObject({ known: true, basis: "replay", changes: { added: ["out/link", "out/x.txt"] } });
    expect(wasi!.workspace.known && text(wasi!.workspace.files, "out/x.txt")).toBe("written by a WASI tool\n");
    expect(wasi!.workspace.known && [...wasi!.workspace.links]).toEqual([["out/link", "x.txt"]]);
    const k = (x: typeof a) => (x!.memory.known ? x!.memory.entries.get("k") : "unknown");
    expect([k(wasi), k(a), k(b), k(last)]).toEqual([undefined, '"a"', '"b"', '"c"']); // plan order: b after a
    expect(record.outputs["last"]).toEqual({ seen: "b" });
    expect(last!.workspace.known && last!.workspace.digest).toBe(workspaceDigest(view.workspace.after));
    expect(view.states.checks.at(-1)).toContain("agrees with every one the record gives");
    expect(renderReport(view, null)).toContain("written by a WASI tool");
  });

  it("a replay that diverges (a forged output, consistently re-hashed) gives no state: the steps say why", async () => {
    const files = await wasiPack();
    const loaded = await loadPack(files);
    const record = await runFiles(files);
    // another output for the WASI step, as salted commitments record it (HASHING.md "Value commitments"), so the
    // capsule verifies and only the replay can tell
    const output = { forged: true };
    const bad = forged(record, (events) => {
      const commits: Record<string, string> = {};
      let step = "";
      for (const e of events) {
        if (e.type === "run.step.started") step = String(e.payload["stepId"]);
        if (e.type === "tool.completed" && step === "wasi") Object.assign(e.payload, { result: output, outputHash: valueCommit(String(e.payload["resultSalt"]), output) });
        if (e.type === "tool.completed") commits[step] = String(e.payload["outputHash"]);
        if (e.type === "run.step.completed") e.payload["result"] = { outputHash: commits[step] };
        if (e.type === "run.completed") e.payload["outputHash"] = hashCanonical(commits);
      }
    });
    const c = readRunCapsule(buildRunCapsule(bad, loaded).bytes);
    const replayed = await replayedStates(c, env);
    expect(replayed).toMatchObject({ matches: false, reason: expect.stringMatching(/did not reproduce the run: event \d+ \(step "wasi", tool.completed\) differs/) });
    const view = buildRunView({ ...source(c), replayed });
    expect(view.states.replay).toMatchObject({ matches: false });
    expect(view.states.steps[0]!.workspace).toMatchObject({ known: false, reason: expect.stringMatching(/WASI tool.*replaying the capsule did not reproduce the run/) });
    expect(renderReport(view, null)).toContain("Cannot reconstruct the workspace after this step");
  });

  it("a swapped module: the capsule no longer verifies, so the replay gives nothing and says why", async () => {
    const c = load("notes");
    const entries = new Map(c.entries);
    entries.set("pack/tools/stats.wasm", c.entries.get("pack/tools/checksum.wasm")!);
    const swapped = { ...c, entries };
    const replayed = await replayedStates(swapped, env);
    expect(replayed).toMatchObject({ matches: false, reason: expect.stringContaining("damaged before replay") });
    const view = buildRunView({ ...source(swapped), replayed });
    expect(view.states.steps[1]!.workspace).toMatchObject({ known: false, reason: expect.stringContaining("damaged before replay") });
  });

  it("a redacted capsule (capsule.json redacted) is not stepped through by replay: each step the record cannot give says so", async () => {
    const c = load("notes");
    const replayed = await replayedStates(c, env);
    expect(replayed.matches).toBe(true);
    const index = { ...c.index, redacted: { steps: ["save"], entries: [{ path: "workspace/after/out/index.json", by: "entry" as const }], rewritten: [] } };
    const view = buildRunView({ ...source(c), index, replayed });
    expect(view.states.replay).toMatchObject({ matches: false });
    const reason = 'the capsule is redacted (step "save", "workspace/after/out/index.json"): the report does not replay it, so nothing removed is shown again';
    for (const s of view.states.steps.slice(0, 4)) expect(s.workspace).toMatchObject({ known: false, reason: expect.stringContaining(reason) });
    expect(renderReport(view, null)).not.toContain("as replaying the capsule left it");
    // the committed redacted capsule, through the CLI: not replayed, and each step it cannot give names the redaction
    const r = await cli(["report", capsuleOf("notes-redacted"), "--out", join(scratch, "redacted.html"), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.replay).toMatchObject({ matches: false, reason: expect.stringContaining('the capsule is redacted (step "save"') });
    const unknown = j.states.filter((x: { workspace: { known: boolean } }) => !x.workspace.known);
    expect(unknown.length).toBeGreaterThan(0);
    for (const x of unknown) expect(x.workspace.reason).toContain("the report does not replay it");
  });

  it("report --json replays by default and --no-replay shows the record alone", async () => {
    const r = await cli(["report", capsuleOf("notes"), "--out", join(scratch, "notes.html"), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.replay).toEqual({ matches: true, reason: null });
    expect(j.states.map((s: { workspace: { basis: string } }) => s.workspace.basis)).toEqual(["replay", "replay", "replay", "replay", "after"]);
    const q = await cli(["report", capsuleOf("notes"), "--out", join(scratch, "notes.html"), "--json", "--no-replay"]);
    const k = JSON.parse(q.stdout);
    expect(k.replay).toBeNull();
    expect(k.states[0].workspace).toMatchObject({ known: false });
  });
});
