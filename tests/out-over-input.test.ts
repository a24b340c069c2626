// A command that reads files and writes one (`redact`, `report`, `export otel`, `attest`, `approve`) refuses an --out
// that is one of its inputs — the capsule, the private key, the trust store; by the same path or through a linked
// folder — instead of replacing it with its output: exit 2, PROTO_INVALID_ARGUMENT, the input's bytes as they were
// (a capsule still verifies).
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";

const HELLO = "conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz";
const s = mkdtempSync(join(tmpdir(), "reach-out-over-input-"));
afterAll(() => rmSync(s, { recursive: true, force: true }));

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

const COMMANDS: Record<string, (capsule: string, out: string, key: string) => string[]> = {
  redact: (c, o) => ["redact", c, "--step", "count", "--out", o, "--json"],
  report: (c, o) => ["report", c, "--out", o, "--no-replay", "--json"],
  "export otel": (c, o) => ["export", "otel", c, "--out", o],
  attest: (c, o, k) => ["attest", c, "--key", k, "--out", o, "--json"],
};

describe("--out that is the private key or the trust store", () => {
  const key = join(s, "own.key");
  beforeAll(async () => {
    expect((await cli(["keygen", "--out", key])).code).toBe(0);
  });
  const CASES: Record<string, (capsule: string, key: string) => [string[], string]> = {
    "approve --key": (_, k) => [["approve", "0".repeat(64), "--key", k, "--out", k, "--json"], k],
    "attest --key": (c, k) => [["attest", c, "--key", k, "--out", k, "--json"], k],
    "report --trust": (c, k) => [["report", c, "--trust", `${k}.pub`, "--out", `${k}.pub`, "--no-replay", "--json"], `${k}.pub`],
  };
  for (const [name, make] of Object.entries(CASES)) {
    it(`${name}: refused, the file left as it was`, async () => {
      const capsule = join(mkdtempSync(join(s, "k-")), "run.capsule.tar.gz");
      copyFileSync(HELLO, capsule);
      const [args, target] = make(capsule, key);
      const before = readFileSync(target);
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/PROTO_INVALID_ARGUMENT: --out .* is the input .* itself/);
      expect(readFileSync(target).equals(before)).toBe(true);
    }, 60_000);
  }
});

describe("--out that is the input capsule", () => {
  const key = join(s, "signer.key");
  beforeAll(async () => {
    expect((await cli(["keygen", "--out", key])).code).toBe(0);
  });
  for (const [name, args] of Object.entries(COMMANDS)) {
    for (const how of ["the same path", "a path through a linked folder"]) {
      it(`${name}: --out ${how} is refused and the capsule is left as it was`, async () => {
        const dir = mkdtempSync(join(s, "case-"));
        const capsule = join(dir, "run.capsule.tar.gz");
        copyFileSync(HELLO, capsule);
        if (how !== "the same path") symlinkSync(dir, join(dir, "here"));
        const out = how === "the same path" ? join(dir, ".", "run.capsule.tar.gz") : join(dir, "here", "run.capsule.tar.gz");
        const r = await cli(args(capsule, out, key));
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/PROTO_INVALID_ARGUMENT: --out .* is the input .* itself/);
        expect(readFileSync(capsule).equals(readFileSync(HELLO))).toBe(true);
        expect((await cli(["verify", capsule, "--json"])).code).toBe(0);
      }, 60_000);
    }
  }
});
