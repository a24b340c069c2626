// Progress on stderr (issue: people can see a run, "Progress"): plain lines when stderr is not a terminal, one line
// rewritten in place on a terminal, nothing with --quiet, and stdout (--json) never touched.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProgress, describeProgress } from "../src/cli/progress.ts";
import { LARGE_CAPSULE_BYTES } from "../src/cli/run-source.ts";
import { cli, ROOT, TTY } from "./_test-report.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-progress-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const hello = join(ROOT, "packs/hello");

describe("run progress", () => {
  it("plain lines: planning, the plan, each step with its elapsed time and fuel; --json stays one object", async () => {
    const r = await cli(["run", hello, "--json", "--out", join(scratch, "a")]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("reach-wasm: planning …\n");
    expect(r.stderr).toMatch(/^reach-wasm: plan hello-1: 1 step, hash [0-9a-f]{16}…$/m);
    expect(r.stderr).toMatch(/^reach-wasm: \[1\/1\] count \(wordcount\) …$/m);
    expect(r.stderr).toMatch(/^reach-wasm: \[1\/1\] count \(wordcount\) completed in [\d.]+ m?s, fuel [\d,]+$/m);
    expect(r.stderr).not.toContain("\r");
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout).status).toBe("COMPLETED");
  });

  it("--quiet (after or before the command) prints no progress; the result and stdout are the same", async () => {
    const loud = await cli(["run", hello, "--json", "--out", join(scratch, "b")]);
    for (const args of [["run", hello, "--quiet", "--json", "--out", join(scratch, "b")], ["--quiet", "run", hello, "--json", "--out", join(scratch, "b")]]) {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/planning|\[1\/1\]/);
      expect(JSON.parse(r.stdout).runHash).toBe(JSON.parse(loud.stdout).runHash);
    }
  });

  it("on a terminal: one line rewritten in place, cleared before the result", async () => {
    const r = await cli(["run", hello, "--json", "--out", join(scratch, "c")], TTY);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("\r\u001b[2Kreach-wasm: [1/1] count (wordcount) …");
    expect(r.stderr).not.toMatch(/^reach-wasm: \[1\/1\].*\n/m);
    const status = r.stderr.lastIndexOf("\r\u001b[2K");
    expect(r.stderr.slice(status).startsWith("\r\u001b[2Kreach-wasm: COMPLETED ")).toBe(true);
    expect(JSON.parse(r.stdout).status).toBe("COMPLETED");
  });
});

describe("replay, verify and pack build progress", () => {
  it("replay reports the replayed steps; verify prints no progress for a small capsule; pack build its phases", async () => {
    const out = join(scratch, "d");
    await cli(["run", hello, "--out", out, "--quiet"]);
    const capsule = join(out, readdirSync(out).find((f) => f.endsWith(".capsule.tar.gz"))!);
    const replay = await cli(["replay", capsule]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).toMatch(/^reach-wasm: replaying …$/m);
    expect(replay.stderr).toMatch(/^reach-wasm: \[1\/1\] count \(wordcount\) completed in [\d.]+ m?s, fuel [\d,]+$/m);
    expect(replay.stderr).toMatch(/^reach-wasm: replaying: done in /m);
    expect((await cli(["replay", capsule, "--quiet"])).stderr).not.toContain("replaying");
    const verify = await cli(["verify", capsule]);
    expect(verify.stderr).not.toContain("verifying …"); // a small capsule is not announced (a slow one says "done in")
    expect((await cli(["verify", capsule], TTY)).stderr).toContain("\r\u001b[2Kreach-wasm: verifying …");
    const build = await cli(["pack", "build", hello, "--out", join(scratch, "hello.tar.gz")]);
    expect(build.code, build.stderr).toBe(0);
    expect(build.stderr).toMatch(/^reach-wasm: loading .*hello …$/m);
    expect(build.stderr).toMatch(/^reach-wasm: archiving: done in /m);
  });
});

describe("large capsules", () => {
  it("reading and verifying a capsule of 8 MiB or more is announced even when not on a terminal", async () => {
    const big = join(scratch, "big.capsule.tar.gz");
    writeFileSync(big, new Uint8Array(LARGE_CAPSULE_BYTES));
    for (const command of ["verify", "show", "report"]) {
      const r = await cli([command, big]);
      expect(r.code, command).toBe(2);
      expect(r.stderr, command).toMatch(/^reach-wasm: reading .*big\.capsule\.tar\.gz …$/m);
      expect(r.stderr, command).toMatch(/REPLAY_CAPSULE_INVALID/);
    }
  });
});

describe("the progress renderer", () => {
  it("describes failed steps with their code, replans, and planning again", () => {
    expect(describeProgress({ kind: "step", index: 1, total: 3, stepId: "s", tool: "t", status: "failed", durationMs: 1500, fuel: "1234567", code: "EXEC_TOOL_TIMEOUT" }))
      .toBe("[2/3] s (t) failed EXEC_TOOL_TIMEOUT in 1.5 s, fuel 1,234,567");
    expect(describeProgress({ kind: "replan", attempt: 1, reason: "EXEC_TOOL_FAILED" })).toBe("replanning (attempt 1) after EXEC_TOOL_FAILED");
    expect(describeProgress({ kind: "planning", attempt: 2 })).toBe("planning again (attempt 2) …");
  });

  it("on a terminal the elapsed time of a long step ticks, and done() stops the clock and clears the line", async () => {
    let err = "";
    let t = 0;
    const p = createProgress({ stdout: () => {}, stderr: (s) => void (err += s), terminal: TTY }, () => t);
    p.run({ kind: "step", index: 0, total: 1, stepId: "s", tool: "t", status: "started" });
    t = 2500;
    for (let i = 0; i < 100 && !err.includes("2.5 s"); i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toContain("[1/1] s (t) … 2.5 s");
    p.done();
    const after = err.length;
    expect(err.endsWith("\r\u001b[2K")).toBe(true);
    await new Promise((r) => setTimeout(r, 400));
    expect(err.length).toBe(after);
  });

  it("clips the status line to the terminal width", () => {
    let err = "";
    const p = createProgress({ stdout: () => {}, stderr: (s) => void (err += s), terminal: { ...TTY, columns: 30 } });
    p.status("x".repeat(100));
    p.done();
    expect(err.split("\r\u001b[2K").every((l) => l.length <= 30)).toBe(true);
  });
});
