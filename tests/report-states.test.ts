// The report's step-through (the workspace and the memory store after each step, derived from the capsule without
// running anything, or "cannot reconstruct" with the reason) and its lineage links (fork, resume, session), on the
// committed capsules, a tampered one and a hostile one.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import type { RunCapsule } from "../src/capsule/run-capsule.ts";
import { canonicalize } from "../src/canonical/jcs.ts";
import { sha256Hex } from "../src/canonical/sha256.ts";
import { buildRunView, renderReport, workspaceDigest } from "../src/report/mod.ts";
import { cli, ROOT } from "./_test-report.ts";

const capsuleOf = (folder: string): string => {
  const dir = join(ROOT, "conformance/capsules", folder);
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!);
};
const load = (folder: string): RunCapsule => readRunCapsule(readFileSync(capsuleOf(folder)));
const viewOf = (entries: ReadonlyMap<string, Uint8Array>) => buildRunView({ origin: "capsule", entries });
const enc = new TextEncoder();
const dec = new TextDecoder();

const scratch = mkdtempSync(join(tmpdir(), "reach-states-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Rewrite the terminal event's workspaceAfter (the report reads events leniently; the chain is not its business). */
function withWorkspaceAfter(entries: Map<string, Uint8Array>, digest: string): void {
  const lines = dec.decode(entries.get("events.jsonl")!).trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]!);
  last.payload.workspaceAfter = digest;
  lines[lines.length - 1] = JSON.stringify(last);
  entries.set("events.jsonl", enc.encode(lines.join("\n") + "\n"));
}

describe("the state after each step", () => {
  it("notes: the memory after every step from the tape; the workspace where the record says it, WASI steps named", () => {
    const view = viewOf(load("notes").entries);
    const s = view.states.steps;
    expect(s.map((x) => x.stepId)).toEqual(["checksum", "stats", "slug", "save", "index"]);
    for (const x of s.slice(0, 3)) expect(x.memory).toMatchObject({ known: true, basis: "tape" });
    for (const x of s.slice(0, 3)) expect(x.memory.known && x.memory.entries.size).toBe(0);
    const saved = s[3]!.memory;
    expect(saved.known && JSON.parse(saved.entries.get("notes/index")!)).toEqual([{ slug: "what-reach-wasm-does", title: "What reach-wasm does", words: 40 }]);
    expect(saved.known && saved.changed).toEqual(["notes/index"]);
    // checksum and stats are WASI tools with the workspace preopened: their writes are not recorded, so the states
    // up to the last step that changed anything are not shown; after it, the workspace is the recorded final one
    expect(s[0]!.workspace).toMatchObject({ known: false, reason: expect.stringContaining("WASI tool") });
    expect(s[3]!.workspace).toMatchObject({ known: false, reason: expect.stringContaining("step 1") });
    const last = s[4]!.workspace;
    expect(last).toMatchObject({ known: true, basis: "after", checked: true });
    expect(last.known && [...last.files.keys()]).toEqual(["data/input.txt", "out/index.json", "out/notes/what-reach-wasm-does.md"]);
    const html = renderReport(view, null);
    expect(html).toContain(`<section class="state" id="state-5">`);
    expect(html).toContain(`<a href="#state-4" rel="prev">← previous</a>`);
    expect(html).toContain("Cannot reconstruct the workspace after this step");
  });

  it("parallel: every state from the tape, checked against the recorded final workspace, with each step's changes", () => {
    const view = viewOf(load("parallel").entries);
    const s = view.states.steps;
    expect(view.states.checks).toContain("the recorded changes of every step give the recorded workspaceAfter");
    for (const [i, x] of s.slice(0, 8).entries()) {
      expect(x.workspace.known && x.workspace.changes).toEqual({ added: [`temp/part-${i + 1}.txt`], changed: [], removed: [], unchanged: i });
      expect(x.workspace).toMatchObject({ known: true, checked: true });
    }
    expect(s[2]!.workspace).toMatchObject({ basis: "tape" });
    const html = renderReport(view, null);
    expect(html).toContain(`<tr class="added"><td><code>temp/part-3.txt</code>`);
  });

  it("cannot reconstruct: when the recorded changes do not give the recorded final workspace, no state between is shown", () => {
    const entries = new Map(load("parallel").entries);
    entries.set("workspace/after/temp/part-5.txt", enc.encode("not what step crunch-5 wrote\n"));
    withWorkspaceAfter(entries, workspaceDigest(viewOf(entries).workspace.after));
    const view = viewOf(entries);
    expect(view.states.checks).toContain("the recorded changes do NOT give the recorded workspaceAfter: the states between are not shown");
    for (const x of view.states.steps.slice(0, 7)) expect(x.workspace).toMatchObject({ known: false, reason: expect.stringContaining("cannot reconstruct") });
    // the last step that changed anything, and those after it, end with the recorded workspace after
    expect(view.states.steps[7]!.workspace).toMatchObject({ known: true, basis: "after" });
    const html = renderReport(view, null);
    const first = html.slice(html.indexOf(`id="state-1"`), html.indexOf(`id="state-2"`));
    expect(first).toContain("Cannot reconstruct the workspace after this step: cannot reconstruct");
    expect(first).not.toContain("part-1.txt");
  });

  it("a blob the capsule does not hold (redacted) leaves that step's state and the ones after it unknown", () => {
    const entries = new Map(load("parallel").entries);
    const lines = dec.decode(entries.get("tape.jsonl")!).trimEnd().split("\n").map((l) => JSON.parse(l));
    const write = lines.find((r) => r.op === "fs.write")!;
    write.request = { path: write.request.path, data: { blob: "ab".repeat(32) } };
    write.requestHash = sha256Hex(canonicalize(write.request));
    entries.set("tape.jsonl", enc.encode(lines.map((l) => canonicalize(l)).join("\n") + "\n"));
    const v = viewOf(entries);
    const s = v.states.steps;
    expect(v.warnings).toEqual([]);
    const at = s.findIndex((x) => !x.workspace.known);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(s[at]!.workspace, JSON.stringify(s[at]!.workspace)).toMatchObject({ reason: expect.stringContaining("redacted or missing") });
  });

  it("a hostile run: file names, contents and memory keys with markup stay escaped", () => {
    const entries = new Map(load("parallel").entries);
    const evil = `<img src=x onerror="window.__pwned=1">`;
    const body = `</script><script>window.__pwned = 2</script>`;
    const lines = dec.decode(entries.get("tape.jsonl")!).trimEnd().split("\n").map((l) => JSON.parse(l));
    const write = lines.find((r) => r.op === "fs.write")!;
    const old = write.request.path as string;
    write.request = { path: `temp/${evil}.txt`, text: body };
    write.response = { size: enc.encode(body).length };
    write.requestHash = sha256Hex(canonicalize(write.request));
    write.responseHash = sha256Hex(canonicalize(write.response));
    entries.set("tape.jsonl", enc.encode(lines.map((l) => canonicalize(l)).join("\n") + "\n"));
    entries.delete(`workspace/after/${old}`);
    entries.set(`workspace/after/temp/${evil}.txt`, enc.encode(body));
    withWorkspaceAfter(entries, workspaceDigest(viewOf(entries).workspace.after));
    const view = viewOf(entries);
    const hit = view.states.steps.find((x) => x.workspace.known && x.workspace.files.has(`temp/${evil}.txt`));
    expect(hit?.workspace).toMatchObject({ known: true, checked: true });
    const html = renderReport(view, null);
    expect(html).not.toContain(evil);
    expect(html).not.toContain(body);
    expect(html).toContain("&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;");
    expect(html).toContain("&lt;/script&gt;&lt;script&gt;window.__pwned = 2&lt;/script&gt;");
  });
});

describe("lineage links between reports", () => {
  it("a resumed run links its parent and the parent lists it, both written as <runHash>.report.html (CLI, --json)", async () => {
    const parent = load("notes-aborted").index.runHash;
    const child = load("notes-resumed").index.runHash;
    const r = await cli(["report", capsuleOf("notes-aborted"), capsuleOf("notes-resumed"), "--out-dir", scratch, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.reports.map((x: { runHash: string }) => x.runHash)).toEqual([parent, child]);
    expect(j.reports[0].children).toEqual([{ runHash: child, relation: "resume", step: null }]);
    expect(j.reports[1].lineage.resumedFrom).toMatchObject({ runHash: parent, status: "ABORTED", completedSteps: ["checksum"] });
    expect(j.reports[1].states[4].memory).toMatchObject({ known: true, entries: [{ key: "notes/index" }] });
    const childPage = readFileSync(join(scratch, `${child}.report.html`), "utf8");
    const parentPage = readFileSync(join(scratch, `${parent}.report.html`), "utf8");
    expect(childPage).toContain(`Resumed <a href="${parent}.report.html"`);
    expect(parentPage).toContain(`Resumed by <a href="${child}.report.html"`);
  });

  it("a fork names its parent by run hash; alone, no link unless its page follows the naming rule", () => {
    const fork = load("notes-fork");
    const view = viewOf(fork.entries);
    const parent = view.lineage.forkedFrom[0]!;
    expect(parent).toMatchObject({ step: "save", changes: ["arguments"] });
    expect(renderReport(view, null)).toContain(`Forked from <code>${parent.runHash}</code> at step <code>save</code>`);
    const linked = renderReport(view, null, { lineage: { pages: new Set([parent.runHash]) } });
    expect(linked).toContain(`Forked from <a href="${parent.runHash}.report.html"`);
  });

  it("a lineage whose run hash is not 64 hex digits never becomes a link", () => {
    const entries = new Map(load("notes-fork").entries);
    const request = JSON.parse(dec.decode(entries.get("request.json")!));
    request.forkedFrom.runHash = `../../x"><script>alert(1)</script>`;
    entries.set("request.json", enc.encode(JSON.stringify(request)));
    const view = viewOf(entries);
    expect(view.lineage.forkedFrom).toEqual([]);
    const html = renderReport(view, null, { lineage: { pages: new Set([request.forkedFrom.runHash]), children: [{ runHash: "../evil", relation: "fork", step: null }] } });
    expect(html).not.toContain("../evil");
    expect(html).not.toContain("<script>alert(1)");
    expect(sha256Hex(html)).toMatch(/^[0-9a-f]{64}$/);
  });
});
