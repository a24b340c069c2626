// Bad input never ends in a stack trace or an exit other than 0/1/2: every command is fed missing, wrong-kind and
// hostile paths, unknown and incomplete flags, and malformed files. Commands that would start a server get only
// arguments that must be refused before they listen.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";

const s = mkdtempSync(join(tmpdir(), "reach-bad-"));
afterAll(() => rmSync(s, { recursive: true, force: true }));
const junk = join(s, "junk.bin");
writeFileSync(junk, new Uint8Array([0x1f, 0x8b, 0, 1, 2, 3, 255, 254]));
const empty = join(s, "empty.json");
writeFileSync(empty, "");
const truncated = join(s, "truncated.json");
writeFileSync(truncated, '{"version":1,"keys":[');
const dir = join(s, "a-dir");
mkdirSync(dir);
const loop = join(s, "loop");
symlinkSync(loop, loop);
const noread = join(s, "noread.json");
writeFileSync(noread, "{}");
chmodSync(noread, 0);
const packWithJunk = join(s, "pack-junk");
mkdirSync(packWithJunk);
writeFileSync(join(packWithJunk, "reach.json"), "{not json");
const missing = join(s, "missing", "nowhere");

const PATHS = [missing, dir, junk, empty, truncated, loop, noread, "/dev/null", packWithJunk, "", "-"];
const SAFE: Record<string, string[][]> = {
  run: [...PATHS.map((p) => [p, "--json"]), ["packs/hello", "--input", truncated], ["packs/hello", "--input", "{bad"], ["packs/hello", "--seed", "-1"], ["packs/hello", "--out", junk], ["packs/hello", "--out", "packs/hello/inside"], ["packs/hello", "--trust", dir], ["packs/hello", "--key", junk], ["packs/hello", "--approval", junk], ["packs/hello", "--max-steps"], ["packs/hello", "--bogus"], ["packs/hello", "--on", "x"]],
  replay: [...PATHS.map((p) => [p, "--json"]), ["--bogus"]],
  verify: [...PATHS.map((p) => [p, "--json"]), ["packs/hello", "--trust", junk], ["packs/hello", "--attestation", junk], [junk, "--key", junk], ...PATHS.map((p) => ["conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz", "--attestation", p, "--json"]), ["conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz", "--attestation", empty, "--key", "zz"]],
  attest: [[], ...PATHS.map((p) => [p, "--key", junk, "--json"]), ["conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz"], ...PATHS.map((p) => ["conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz", "--key", p]), ["conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz", "--key", junk, "--out", dir]],
  show: [...PATHS.map((p) => [p, "--json"])],
  report: [...PATHS.map((p) => [p]), ["packs/hello", "--out", dir]],
  diff: [[junk, junk], [missing], [dir, dir, "--json"]],
  wasi: [...PATHS.map((p) => [p]), [junk, "--dir", missing], [junk, "--env", "NOEQUALS"], [junk, "--seed", "x"]],
  pack: [[], ["bogus"], ["init"], ["init", junk], ["validate", ...[missing]], ["validate", junk, "--json"], ["build", dir, "--out", dir], ["sign", "packs/hello"], ["sign", "packs/hello", "--key", junk], ["test", missing], ["init", join(s, "t"), "--template", "cobol"]],
  trust: [[], ["add"], ["add", junk], ["add", "zz"], ["list", "--trust", dir], ["remove"], ["bogus"]],
  approve: [[], ["abc", "--key", junk], ["0".repeat(64)], ["0".repeat(64), "--key", missing]],
  keygen: [["--out", dir], ["--out", join(missing, "k")], ["--bogus"]],
  serve: [["--listen", "not-an-address"], ["--db", "not-a-url"], ["--workers", "-3"], ["--bogus"]],
  worker: [["--concurrency", "0"], ["--db", "mysql://x"], ["--bogus"]],
  submit: [[missing], [junk, "--server", "ftp://x"], ["packs/hello", "--server", "not a url"], ["packs/hello", "--seed", "x", "--server", "http://127.0.0.1:9"]],
  runs: [[], ["bogus"], ["show"], ["list", "--server", "ftp://x"], ["cancel", "--server", "not a url"]],
  tokens: [[], ["create"], ["create", "--tenant", ""], ["bogus"]],
  node: [[], ["bogus"], ["init"], ["init", "--dir", junk, "--endpoint", "x"], ["serve", "--dir", missing], ["trust", "--dir", missing, junk], ["list", "--dir", junk]],
  delegate: [[], ["--dir", missing], ["--dir", dir, "--to", "x", "--scope", "", "--expires", "never", "--out", dir]],
  revoke: [[], ["--dir", missing, junk]],
  doctor: [["--bogus"]],
  conformance: [["--category", "nonsense"], ["--impl"], ["--bogus"]],
};

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string; thrown: unknown }> {
  let stdout = "";
  let stderr = "";
  try {
    const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr, thrown: null };
  } catch (err) {
    return { code: -1, stdout, stderr, thrown: err };
  }
}

const STACK = /\n\s+at \S+ \(|node:internal|^\s*at async /m;

describe("bad input never ends in a stack trace", () => {
  process.env["REACH_WASM_CONNECT_WAIT"] = "0";
  for (const [command, cases] of Object.entries(SAFE)) {
    it.each(cases.map((c) => [c.join(" ")]))(`${command} %s`, async (joined) => {
      const args = [command, ...cases.find((c) => c.join(" ") === joined)!];
      const r = await cli(args);
      expect(r.thrown, `threw: ${String(r.thrown)}`).toBeNull();
      expect([0, 1, 2], `exit ${r.code}: ${r.stderr}`).toContain(r.code);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stdout).not.toMatch(STACK);
      if (args.includes("--json") && r.stdout.trim() !== "") {
        const lines = r.stdout.trim().split("\n");
        expect(lines.length, "--json prints one object").toBe(1);
        expect(() => JSON.parse(lines[0]!)).not.toThrow();
      }
    }, 60_000);
  }
});

describe("a full disk", () => {
  it("run still says what happened: exit 1, one JSON object with the status, the run hash and the write error; no partial file", async () => {
    const { spawnSync } = await import("node:child_process");
    const { readdirSync } = await import("node:fs");
    const mnt = join(s, "full");
    mkdirSync(mnt);
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=12k", "tmpfs", mnt]).status === 0;
    if (!mounted) {
      console.warn("a full disk: cannot mount a small tmpfs here (not root?); skipped");
      return;
    }
    try {
      const r = await cli(["run", "packs/hello", "--out", mnt, "--json"]);
      expect(r.code, r.stderr).toBe(1);
      const line = JSON.parse(r.stdout) as { status: string; runHash: string; writeError: { code: string; message: string } };
      expect(line.status).toBe("COMPLETED");
      expect(line.runHash).toMatch(/^[0-9a-f]{64}$/);
      expect(line.writeError.message).toMatch(/ENOSPC|no space/i);
      expect(readdirSync(mnt, { recursive: true }).map(String).filter((n) => n.includes(".tmp-"))).toEqual([]);
    } finally {
      spawnSync("umount", [mnt]);
    }
  }, 60_000);
});
