// An input that is not a regular file (a symbolic link, a directory, a FIFO) is refused with what it is and what to
// give instead — a link is not read through, and the message says to give the file it points to — never the bare
// "is not a regular file" or "does not exist or is not a file or directory" of a link that plainly exists.
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";

const HELLO = "conformance/capsules/hello/667db0133bf084dea310ae6252e6d48adfc044939a9dd36a2d91613858ceed82.capsule.tar.gz";
const s = mkdtempSync(join(tmpdir(), "reach-not-a-file-"));
afterAll(() => rmSync(s, { recursive: true, force: true }));
const capsule = join(s, "run.capsule.tar.gz");
copyFileSync(HELLO, capsule);
const link = join(s, "latest.capsule.tar.gz");
symlinkSync(capsule, link);
const fifo = join(s, "pipe");
const hasFifo = spawnSync("mkfifo", [fifo]).status === 0;

async function refusal(args: string[]): Promise<string> {
  let stdout = "";
  const code = await main([...args, "--json"], { stdout: (t) => void (stdout += t), stderr: () => {} });
  expect(code).toBe(2);
  const doc = JSON.parse(stdout) as { error: { code: string; message: string } };
  expect(doc.error.code).toBe("PROTO_INVALID_ARGUMENT");
  return doc.error.message;
}

describe("an input that is not a regular file", () => {
  for (const command of ["replay", "verify", "show", "diff"]) {
    it(`${command}: a link is refused with what it is and what to give instead`, async () => {
      const args = command === "diff" ? [command, capsule, link] : [command, link];
      expect(await refusal(args)).toMatch(/latest\.capsule\.tar\.gz" is a symbolic link; reach-wasm reads no file through a link: give the path of the file it points to/);
    });
  }

  it.runIf(hasFifo)("replay and show: a FIFO is named as such (and not waited on)", async () => {
    expect(await refusal(["replay", fifo])).toMatch(/"[^"]*pipe" is not a regular file \(a FIFO, socket or device\); give a file/);
    expect(await refusal(["show", fifo])).toMatch(/"[^"]*pipe" is not a regular file \(a FIFO, socket or device\); give a file/);
  });

  it("a missing file says so without the system call's wording; a missing --key names the option and the fix", async () => {
    const missing = join(s, "missing.capsule.tar.gz");
    for (const command of ["replay", "verify", "show"]) {
      const message = await refusal([command, missing]);
      expect(message).toMatch(/missing\.capsule\.tar\.gz" does not exist; (check the path|a run is a capsule)/);
      expect(message).not.toMatch(/lstat|ENOENT/);
    }
    expect(await refusal(["attest", capsule, "--key", join(s, "none.key")])).toMatch(/^--key "[^"]*none\.key" does not exist; give the private key file `reach-wasm keygen` wrote$/);
  });

  it("a run directory given where a capsule is read names the capsule beside it", async () => {
    const out = join(s, "out");
    let stdout = "";
    expect(await main(["run", "packs/hello", "--out", out, "--json"], { stdout: (t) => void (stdout += t), stderr: () => {} })).toBe(0);
    const { capsule: written, out: runDir } = JSON.parse(stdout) as { capsule: string; out: string };
    expect((await main(["verify", written], { stdout: () => {}, stderr: () => {} }))).toBe(0);
    expect((await main(["replay", written], { stdout: () => {}, stderr: () => {} }))).toBe(0);
    const key = join(s, "rd.key");
    expect(await main(["keygen", "--out", key], { stdout: () => {}, stderr: () => {} })).toBe(0);
    for (const args of [["replay", runDir], ["verify", runDir], ["attest", runDir, "--key", key], ["redact", runDir, "--step", "count", "--out", join(s, "r.tgz")], ["fork", runDir, "--at", "1", "--seed", "1"], ["resume", runDir]]) {
      const message = await refusal(args);
      expect(message, args[0]).toBe(`${JSON.stringify(runDir)} is a run directory (a run's readable files); ${args[0]} reads a run's capsule: give ${written}`);
    }
  }, 60_000);

  it("replay: a directory is named as such", async () => {
    expect(await refusal(["replay", s])).toMatch(/is a directory; give a file/);
  });
});
