// `reach-wasm conformance` (seed 003 §10) as a user runs it: the CLI bundled from src/ passes all five categories
// against itself on Node and on Deno with byte-identical reports, writes JUnit XML, and fails each deliberately
// broken adapter (conformance/fixtures/) on exactly the cases its defect touches — no more, no fewer.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConformanceReport } from "../src/conformance/types.ts";
import { withCliBundle } from "./support/cli-bundle-hooks.ts";

const root = new URL("../", import.meta.url).pathname;
const { scratch, main } = withCliBundle("reach-conformance-test-");

type Outcome = { code: number | null; stdout: string; stderr: string };
function run(cmd: string, args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, REACH_WASM_CLI: main(), NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
const failedIds = (r: ConformanceReport): string[] => r.categories.flatMap((c) => c.cases.filter((k) => k.status === "failed").map((k) => k.id));

let nodeReport = "";

describe("reach-wasm conformance against this installation", () => {
  it("Node: exit 0, all five categories present and passing, black-box and in-process cases; JUnit XML written", async () => {
    const junit = join(scratch, "report.xml");
    const r = await run(process.execPath, [main(), "conformance", "--json", "--junit", junit]);
    expect(r.code, r.stderr.split("\n").filter((l) => l.includes("FAIL") || l.startsWith("    ")).join("\n")).toBe(0);
    nodeReport = r.stdout;
    const report = JSON.parse(r.stdout) as ConformanceReport;
    expect(report.passed).toBe(true);
    expect(report.categories.map((c) => [c.category, c.failed])).toEqual([["schema", 0], ["determinism", 0], ["replay", 0], ["policy", 0], ["federation", 0]]);
    for (const c of report.categories) {
      expect(c.cases.some((k) => !k.title.startsWith("in process")), c.category).toBe(true); // black-box cases
      // runtime-neutral cases (conformance/lib/) in every category that has some; policy's need the tool sources
      expect(c.cases.some((k) => k.title.startsWith("in process")), c.category).toBe(c.category !== "policy");
      for (const k of c.cases) expect(k.clause, k.id).toMatch(/§/);
    }
    expect(r.stderr).toMatch(/\[ *1\/\d+\] PASS schema\./); // progress on stderr, one line per case
    const xml = readFileSync(junit, "utf8");
    expect(xml.match(/<testsuite /g)).toHaveLength(5);
    expect(xml.match(/<testcase /g)).toHaveLength(report.summary.total);
    expect(xml).not.toContain("<failure");
  }, 600_000);

  it("Deno: the same report, byte for byte", async () => {
    expect(nodeReport).not.toBe("");
    const r = await run(join(root, "node_modules/.bin/deno"), ["run", "-A", join(root, "src/cli/main.ts"), "conformance", "--json"]);
    expect(r.code, r.stderr.split("\n").filter((l) => l.includes("FAIL") || l.startsWith("    ")).join("\n")).toBe(0);
    expect(r.stdout).toBe(nodeReport);
  }, 600_000);

  it("a bad invocation is exit 2 with an error document", async () => {
    const r = await run(process.execPath, [main(), "conformance", "--category", "schema,speed", "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ specVersion: "1.0.0", error: { code: "PROTO_INVALID_ARGUMENT" } });
    expect(JSON.parse(r.stdout).error.message).toContain("speed");
  });
});

describe("the deliberately broken adapters fail exactly their cases", () => {
  const adapters: [string, string[]][] = [
    // eventHash without prevEventHash: the recomputed chain and run hash, and replaying or verifying its own capsules
    ["broken-event-hash", ["determinism.event-hash", "determinism.run-hash", "replay.own-capsules", "replay.own-verify"]],
    // an undeclared tool with code in the pack runs: refused, audited, never-ran and the capability audit all fail
    ["broken-undeclared-tool", ["policy.undeclared-tool-refused", "policy.undeclared-tool-audited", "policy.undeclared-tool-never-ran", "policy.capability-audit"]],
  ];
  for (const [name, expected] of adapters) {
    it(name, async () => {
      const impl = `node ${join(root, "conformance/fixtures", name, "adapter.mjs")}`;
      const r = await run(process.execPath, [main(), "conformance", "--impl", impl, "--json"]);
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      const report = JSON.parse(r.stdout) as ConformanceReport;
      expect(report.implementation).toBe(impl);
      expect(report.categories.map((c) => c.category)).toEqual(["schema", "determinism", "replay", "policy", "federation"]);
      expect(report.categories.flatMap((c) => c.cases).some((k) => k.title.startsWith("in process"))).toBe(false);
      expect(failedIds(report)).toEqual(expected);
    }, 600_000);
  }
});
