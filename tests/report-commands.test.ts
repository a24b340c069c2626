// `reach-wasm show`, `report` and `diff` through the CLI (issue: people can see a run): exit codes, one JSON object
// with --json, colour only on a terminal without NO_COLOR, run directories with their real durations, a divergence
// inside a step's host calls, and bad input ending in exit 2 with a ReachError.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive, writeArchive } from "../src/capsule/archive.ts";
import { cli, ROOT, runNotes, TTY } from "./_test-report.ts";

const capsuleOf = (folder: string) => {
  const dir = join(ROOT, "conformance/capsules", folder);
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!);
};
const NOTES = capsuleOf("notes");
const NOTES_SIGNED = capsuleOf("notes-signed");
const HELLO = capsuleOf("hello");
const STEPS = ["checksum", "stats", "slug", "save", "index"];

const scratch = mkdtempSync(join(tmpdir(), "reach-report-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("reach-wasm show", () => {
  it("prints every step of a capsule with its tool, kind, status, fuel and output; no colour when piped", async () => {
    const r = await cli(["show", NOTES]);
    expect(r.code, r.stderr).toBe(0);
    for (const s of STEPS) expect(r.stdout).toMatch(new RegExp(`^ \\d  ${s}\\s`, "m"));
    expect(r.stdout).toMatch(/checksum\s+checksum\s+wasm\s+completed\s+3 ms\s+—\s+3,660\s+0/);
    expect(r.stdout).toContain(`output {"count":1`);
    expect(r.stdout).toContain("artifact what-reach-wasm-does.md (text/markdown, 284 B)");
    expect(r.stdout).not.toContain("\u001b");
  });

  it("colours only on a terminal, and not with NO_COLOR (colour: false)", async () => {
    expect((await cli(["show", NOTES], TTY)).stdout).toContain("\u001b[32m");
    expect((await cli(["show", NOTES], { ...TTY, color: false })).stdout).not.toContain("\u001b");
    expect((await cli(["show", NOTES], { ...TTY, stdout: false })).stdout).not.toContain("\u001b");
  });

  it("--json prints one object with the steps; --full keeps big outputs and lists every host call", async () => {
    const r = await cli(["show", NOTES, "--json"]);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const j = JSON.parse(r.stdout);
    expect(j.steps.map((s: { stepId: string }) => s.stepId)).toEqual(STEPS);
    expect(j.steps[3]).toMatchObject({ tool: "save-note", kind: "js", status: "completed", fuel: "214951", hostCalls: { count: 7 } });
    expect(j.steps[3].tape.map((t: { op: string }) => t.op)).toContain("artifact.emit");
    const full = await cli(["show", NOTES, "--full"]);
    expect(full.stdout).toContain("host call 2 fs.read");
  });

  it("a failed run shows its policy violation and error", async () => {
    const r = await cli(["show", capsuleOf("path_escape_fail")]);
    expect(r.stdout).toContain("policy violation RESOURCE_ACCESS fs.read:../../etc/passwd");
    expect(r.stdout).toMatch(/FAILED at .* in step s1: POLICY_VIOLATION/);
  });

  it("a run directory: real durations from evidence.json, with or without the capsule beside it", async () => {
    const run = await runNotes(join(scratch, "out"));
    const beside = await cli(["show", run.runDir, "--json"]);
    const j = JSON.parse(beside.stdout);
    expect(j.origin).toBe("capsule");
    expect(j.steps.every((s: { realMs: number | null }) => typeof s.realMs === "number")).toBe(true);
    const alone = join(scratch, "alone", run.runHash);
    cpSync(run.runDir, alone, { recursive: true });
    const r = await cli(["show", alone]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("(run directory)");
    for (const s of STEPS) expect(r.stdout).toContain(` ${s} `);
    expect(JSON.parse((await cli(["show", alone, "--json"])).stdout).workspace.after.map((f: { path: string }) => f.path)).toContain("out/index.json");
  });

  it("bad input: exit 2 with a ReachError, never a stack trace", async () => {
    const garbage = join(scratch, "garbage.capsule.tar.gz");
    writeFileSync(garbage, "not a capsule");
    const empty = join(scratch, "empty-dir");
    cpSync(join(ROOT, "packs/hello"), empty, { recursive: true });
    for (const args of [["show", join(scratch, "nope")], ["show", garbage], ["show", empty], ["show"], ["show", NOTES, "--bogus"], ["show", NOTES, HELLO]]) {
      const r = await cli([...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(JSON.parse(r.stdout).error.code, args.join(" ")).toMatch(/^(PROTO_INVALID_ARGUMENT|REPLAY_CAPSULE_INVALID)$/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe("reach-wasm report", () => {
  it("writes one self-contained page beside the capsule by default, or to --out; --json describes it", async () => {
    const copy = join(scratch, "copy.capsule.tar.gz");
    cpSync(NOTES_SIGNED, copy);
    const r = await cli(["report", copy]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(join(scratch, "copy.report.html"), "utf8");
    expect(html).toContain("Content-Security-Policy");
    expect(html).toContain('<span class="badge ok">verified</span>');
    for (const s of STEPS) expect(html).toContain(`data-step-id="${s}"`);
    const out = join(scratch, "r.html");
    const j = await cli(["report", NOTES, "--out", out, "--json"]);
    expect(JSON.parse(j.stdout)).toMatchObject({ out, status: "COMPLETED", verified: true });
    expect(existsSync(out)).toBe(true);
  });

  it("a damaged capsule still gets a page, which says verification failed; an unreadable one exits 2", async () => {
    const entries = readArchive(readFileSync(NOTES));
    const result = entries.get("result.json")!;
    entries.set("result.json", new TextEncoder().encode(new TextDecoder().decode(result).replace("COMPLETED", "FAILED!!!")));
    const damaged = join(scratch, "damaged.capsule.tar.gz");
    writeFileSync(damaged, writeArchive([...entries].map(([path, bytes]) => ({ path, bytes }))));
    const page = await cli(["report", damaged, "--json"]);
    expect(page.code, page.stderr).toBe(0);
    expect(JSON.parse(page.stdout)).toMatchObject({ verified: false });
    expect(page.stderr).toContain("verification FAILED");
    expect(readFileSync(join(scratch, "damaged.report.html"), "utf8")).toContain('<span class="badge bad">verification failed</span>');
    const bytes = readFileSync(NOTES);
    const bad = join(scratch, "bad.capsule.tar.gz");
    writeFileSync(bad, bytes.subarray(0, bytes.length - 9));
    const r = await cli(["report", bad, "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toMatch(/^REPLAY_CAPSULE_/);
    expect(existsSync(join(scratch, "bad.report.html"))).toBe(false);
  });

  it("a redacted copy given with its original (the same run hash, one page name) is named on stderr, not dropped silently", async () => {
    const salted = capsuleOf("notes-salted");
    const redacted = capsuleOf("notes-redacted");
    const r = await cli(["report", salted, redacted, "--out-dir", join(scratch, "pair"), "--no-replay", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).reports).toHaveLength(1);
    expect(r.stderr).toContain(`note: ${redacted} has the run hash of ${salted} (the same run, or a redacted copy of it)`);
  });
});

describe("reach-wasm diff", () => {
  it("identical runs exit 0 (a different proof alone is noted); different runs exit 1; unreadable exit 2", async () => {
    const same = await cli(["diff", NOTES, NOTES_SIGNED]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("only the proofs differ");
    const other = await cli(["diff", NOTES, HELLO, "--json"]);
    expect(other.code).toBe(1);
    const d = JSON.parse(other.stdout);
    expect(d).toMatchObject({ identical: false, firstDivergence: { eventIndex: 0 } });
    expect(d.packFiles.added).toContain("tools/wordcount.wasm");
    expect((await cli(["diff", NOTES, join(scratch, "nope")])).code).toBe(2);
    expect((await cli(["diff", NOTES])).code).toBe(2);
  });

  describe("two runs of packs/http whose server answered differently", () => {
    let port = 0;
    let body = "first";
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ title: body }));
    });
    beforeAll(async () => {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => void server.close());

    it("the first divergence names the step, the event, the field and the host call", async () => {
      const input = join(scratch, "http-input.json");
      writeFileSync(input, JSON.stringify({ url: `http://127.0.0.1:${port}/doc.json` }));
      const a = JSON.parse((await cli(["run", join(ROOT, "packs/http"), "--unrestricted", "--input", input, "--json", "--out", join(scratch, "ha")])).stdout);
      body = "second";
      const b = JSON.parse((await cli(["run", join(ROOT, "packs/http"), "--unrestricted", "--input", input, "--json", "--out", join(scratch, "hb")])).stdout);
      const r = await cli(["diff", a.capsule, b.capsule, "--json"]);
      expect(r.code).toBe(1);
      const d = JSON.parse(r.stdout);
      expect(d.firstDivergence).toMatchObject({ stepId: "fetch", type: { a: "tool.completed", b: "tool.completed" }, hostCall: { index: 0, op: { a: "http.fetch", b: "http.fetch" } } });
      expect(d.firstDivergence.hostCall.field).toMatch(/^\$\.response\./);
      expect(d.inputs).toEqual([]);
      expect(d.outputs.map((o: { stepId: string }) => o.stepId)).toEqual(["fetch"]);
      const text = await cli(["diff", a.capsule, b.capsule]);
      expect(text.stdout).toMatch(/first divergence: event 3 \(step "fetch"\)/);
      expect(text.stdout).toMatch(/host call 1 of the step .*http\.fetch/);
    });
  });
});

describe("the same commands under Deno", () => {
  it("show --json, the report page and diff --json come out byte for byte as on Node", async () => {
    const deno = (args: string[]) => spawnSync(join(ROOT, "node_modules/.bin/deno"), ["run", "--allow-read", "--allow-write", "--allow-env", join(ROOT, "src/cli/main.ts"), ...args], { cwd: ROOT, encoding: "utf8" });
    const show = deno(["show", NOTES, "--json", "--full"]);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toBe((await cli(["show", NOTES, "--json", "--full"])).stdout);
    const diff = deno(["diff", NOTES, HELLO, "--json"]);
    expect(diff.status).toBe(1);
    expect(diff.stdout).toBe((await cli(["diff", NOTES, HELLO, "--json"])).stdout);
    const [a, b] = [join(scratch, "deno.html"), join(scratch, "node.html")];
    expect(deno(["report", NOTES_SIGNED, "--out", a]).status).toBe(0);
    expect((await cli(["report", NOTES_SIGNED, "--out", b])).code).toBe(0);
    expect(readFileSync(a, "utf8")).toBe(readFileSync(b, "utf8"));
  }, 60_000);
});
