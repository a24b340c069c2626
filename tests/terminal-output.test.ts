// What a tool, a server or a peer says never reaches the terminal as control characters: a pack whose tool fails
// with an OSC 52 clipboard write, a title change, a screen clear, a C1 CSI and a bidi override in its error message,
// and returns one in its output, is run with `run` (plain and TTY progress, --json), tested with `pack test`, and
// submitted to a run service with `submit --wait`, then listed and shown with `runs` — every line is escaped
// (\u001b…), the message is still there to read, and --json stays JSON meaning the same. The capsule each run wrote
// verifies and replays.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import type { CliIO } from "../src/cli/io.ts";
import { startTestService } from "./support/service.ts";
import type { TestService } from "./support/service.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-tty-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What the tool says: clipboard write (OSC 52), title (OSC 0), clear screen, cursor home, C1 CSI, bidi override. */
const HOSTILE = "boom \\u001b]52;c;cm0gLXJmIH4K\\u0007\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[H\\r\\u009b31m\\u202egnp.exe";
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function writePack(dir: string, withTests: boolean): string {
  mkdirSync(join(dir, "tools"), { recursive: true });
  const pack = {
    specVersion: "1.0.0", id: "hostile", version: "1.0.0", entrypoint: "plan.json",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "say" }, { name: "fail" }] }, policies: { maxToolCalls: 4 } },
    tools: { say: { kind: "js", module: "tools/say.js" }, fail: { kind: "js", module: "tools/fail.js" } },
  };
  const plan = {
    contract_version: "S2-B-05.v1", plan_id: "hostile-1", goal_id: "hostile", created_at: "1970-01-01T00:00:00.000Z", planner: "static", status: "APPROVED",
    risk: { level: 0 }, scope: { allowed: ["say", "fail"] },
    steps: [{ id: "say", tool: "say", arguments: {}, return_spec: { type: "object" } }, { id: "fail", tool: "fail", arguments: {}, depends_on: ["say"], return_spec: { type: "object" } }],
    success_criteria: ["said"],
  };
  writeFileSync(join(dir, "reach.json"), JSON.stringify(pack));
  writeFileSync(join(dir, "plan.json"), JSON.stringify(plan));
  writeFileSync(join(dir, "tools/say.js"), `export default () => ({ text: "${HOSTILE}" });\n`);
  writeFileSync(join(dir, "tools/fail.js"), `export default () => { throw new Error("${HOSTILE}"); };\n`);
  if (withTests) {
    mkdirSync(join(dir, "tests"));
    writeFileSync(join(dir, "tests/completes.json"), JSON.stringify({ input: {}, expect: { output: { say: { text: "calm" } } } }));
  }
  return dir;
}

type Out = { code: number; stdout: string; stderr: string };
async function cli(args: string[], terminal?: CliIO["terminal"]): Promise<Out> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), ...(terminal === undefined ? {} : { terminal }) });
  return { code, stdout, stderr };
}

/** Every line is free of raw controls, and the tool's words are still there (escaped). */
function expectEscaped(text: string, what: string): void {
  const tty = text.replaceAll("\r\u001b[2K", ""); // the CLI's own progress sequence (TTY mode only)
  expect(tty, what).not.toMatch(RAW_CONTROL);
  expect(text, what).toContain("\\u001b]52;c;cm0gLXJmIH4K\\u0007");
  expect(text, what).toContain("\\u009b31m\\u202egnp.exe");
}

describe("guest- and network-supplied text on the terminal", () => {
  const pack = writePack(join(scratch, "pack"), true);

  it("run: the failing tool's message, plain and with TTY progress; --json stays JSON", async () => {
    const plain = await cli(["run", pack, "--unrestricted", "--out", join(scratch, "out1")]);
    expect(plain.code).toBe(1);
    expectEscaped(plain.stderr, "run stderr");
    const tty = await cli(["run", pack, "--unrestricted", "--out", join(scratch, "out2")], { stdout: false, stderr: true, color: true, columns: 400 });
    expect(tty.stderr).toContain("\r\u001b[2K"); // progress in place (the CLI's own sequence)
    expectEscaped(tty.stderr, "run TTY stderr");
    const json = await cli(["run", pack, "--unrestricted", "--json", "--out", join(scratch, "out3")]);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    const doc = JSON.parse(json.stdout) as { error: { message: string } };
    expect(doc.error.message).toContain("\u001b]52;c;cm0gLXJmIH4K\u0007"); // JSON.parse gives the tool's words back as they were
    // the capsule verifies and replays
    const capsule = readdirSync(join(scratch, "out3")).find((f) => f.endsWith(".capsule.tar.gz"))!;
    expect((await cli(["verify", join(scratch, "out3", capsule)])).code).toBe(0);
    expect((await cli(["replay", join(scratch, "out3", capsule)])).code).toBe(0);
  }, 120_000);

  it("pack test: the case's detail (the tool's output and message)", async () => {
    const r = await cli(["pack", "test", pack]);
    expect(r.code).toBe(1);
    expectEscaped(r.stderr, "pack test");
  }, 120_000);

  describe("the run service's clients", () => {
    let t: TestService;
    beforeAll(async () => {
      t = await startTestService();
    }, 120_000);
    afterAll(async () => await t?.close());

    it("submit --wait and runs show: the record's error message from the server", async () => {
      const submitted = await cli(["submit", writePack(join(scratch, "unsigned"), false), "--server", t.url, "--wait", "--out", join(scratch, "svc")]);
      expect(submitted.code, submitted.stderr).toBe(1);
      expectEscaped(submitted.stderr, "submit --wait");
      const runId = /submitted run ([0-9a-f-]{36})/.exec(submitted.stderr)![1]!;
      const shown = await cli(["runs", "show", runId, "--server", t.url]);
      expectEscaped(shown.stdout, "runs show"); // the record is the command's answer: on stdout
      const json = await cli(["runs", "show", runId, "--server", t.url, "--json"]);
      expect(json.stdout).not.toMatch(RAW_CONTROL);
      expect((JSON.parse(json.stdout) as { error: { message: string } }).error.message).toContain("\u009b31m\u202egnp.exe");
      const capsule = readdirSync(join(scratch, "svc")).find((f) => f.endsWith(".capsule.tar.gz"))!;
      expect((await cli(["verify", join(scratch, "svc", capsule)])).code).toBe(0);
      expect((await cli(["replay", join(scratch, "svc", capsule)])).code).toBe(0);
    }, 120_000);
  });
});
