// The run service's commands: submit (exit codes as for `run`, --wait --json prints the run record), runs
// list|show|cancel|capsule, tokens create, and `serve` as a process on Node and on Deno (start, auth, SIGTERM).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../platform/postgres.ts";
import { cliBundle, localRunHash, root, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import { main } from "./cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-svc-cli-"));
let t: TestService;
let bundle: { main: string; remove(): void };
beforeAll(async () => {
  t = await startTestService();
  bundle = await cliBundle();
}, 120_000);
afterAll(async () => {
  await t?.close();
  bundle?.remove();
  rmSync(scratch, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
async function cli(...args: string[]): Promise<{ code: number; json: Json | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
  const lines = stdout.trim().split("\n").filter((l) => l !== "");
  return { code, json: lines.length === 1 && lines[0]!.startsWith("{") ? (JSON.parse(lines[0]!) as Json) : null, stdout, stderr };
}
const pack = (name: string) => join(root, "packs", name);

describe("submit", () => {
  it("--wait --json prints the run record with the local run hash and exits 0; progress goes to stderr", async () => {
    const r = await cli("submit", pack("hello"), "--server", t.url, "--seed", "4", "--wait", "--json", "--out", scratch);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.json).toMatchObject({ status: "COMPLETED", runHash: await localRunHash("hello", { seed: "4" }) });
    expect(typeof r.json!["runId"]).toBe("string");
    expect(r.stderr).toMatch(/step count \(wordcount\) completed/);
    expect(readdirSync(scratch)).toContain(`${r.json!["runHash"]}.capsule.tar.gz`);
  });

  it("exits as `run` does for every example pack (expected.json), and 2 for an unreachable server or bad options", async () => {
    for (const name of ["return_spec_fail", "undeclared_tool_fail", "too_many_steps_fail", "spec_version_fail"]) {
      const expected = JSON.parse(readFileSync(join(pack(name), "expected.json"), "utf8")) as { exitCode: number; code: string };
      const r = await cli("submit", pack(name), "--server", t.url, "--wait", "--json");
      expect(r.code, `${name}: ${r.stderr}`).toBe(expected.exitCode);
      const code = (r.json!["error"] as Json)["code"]; // a FAILED record and a refusal both carry error.code
      expect(code, name).toBe(expected.code);
    }
    process.env["REACH_WASM_CONNECT_WAIT"] = "0"; // no waiting for a service that is not coming
    const down = await cli("submit", pack("hello"), "--server", "http://127.0.0.1:9", "--json");
    delete process.env["REACH_WASM_CONNECT_WAIT"];
    expect([down.code, (down.json!["error"] as Json)["code"]]).toEqual([2, "EXEC_RESOURCE_UNAVAILABLE"]);
    expect((await cli("submit", pack("hello"), "--server", t.url, "--seed", "x")).code).toBe(2);
    expect((await cli("submit", pack("hello"), "--server", "ftp://x")).code).toBe(2);
    expect((await cli("submit", join(scratch, "missing"), "--server", t.url)).code).toBe(2);
  });

  it("without --wait prints {runId, status}; runs list|show|capsule|cancel find it", async () => {
    const s = await cli("submit", pack("hello"), "--server", t.url, "--seed", "9", "--input", '{"k":1}', "--json");
    expect(s.code, s.stderr).toBe(0);
    const runId = s.json!["runId"] as string;
    const show = await cli("runs", "show", runId, "--wait", "--server", t.url, "--json");
    expect([show.code, show.json!["status"]]).toEqual([0, "COMPLETED"]);
    const list = await cli("runs", "list", "--server", t.url, "--limit", "1", "--json");
    expect((list.json!["runs"] as Json[]).map((r) => r["runId"])).toEqual([runId]);
    // Without --json the table is the result: on stdout, one run a line; the count is a note on stderr.
    const table = await cli("runs", "list", "--server", t.url, "--limit", "1");
    expect([table.code, table.stdout.trim().split("\n").map((l) => l.split(/\s+/)[0])]).toEqual([0, [runId]]);
    expect(table.stderr).toMatch(/\(1 run\(s\)/);
    const one = await cli("runs", "show", runId, "--server", t.url);
    expect([one.code, one.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^${runId}\\s+COMPLETED`))]);
    const cap = await cli("runs", "capsule", runId, "--server", t.url, "--out", scratch, "--json");
    expect(cap.code, cap.stderr).toBe(0);
    expect(readFileSync(cap.json!["capsule"] as string).length).toBe(cap.json!["bytes"]);
    const cancel = await cli("runs", "cancel", runId, "--server", t.url, "--json");
    expect([cancel.code, (cancel.json!["error"] as Json)["code"]]).toEqual([2, "PROTO_SEQUENCE_ERROR"]);
    expect((await cli("runs", "frobnicate", "--server", t.url)).code).toBe(2);
  });
});

function startServe(cmd: string[], args: string[]): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = spawn(cmd[0]!, [...cmd.slice(1), "serve", ...args, "--listen", "127.0.0.1:0", "--json"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => void (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) {
        const { url } = JSON.parse(out) as { url: string };
        resolve({ url, stop: () => new Promise((done) => (child.once("exit", (code) => done(code)), child.kill("SIGTERM"))) });
      }
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

describe("tokens create and serve", () => {
  it("serve --auth requires the token made by tokens create; SIGTERM stops it cleanly and frees the store", async () => {
    const data = join(scratch, "store");
    const made = await cli("tokens", "create", "--tenant", "ci", "--data", data, "--json");
    expect(made.code, made.stderr).toBe(0);
    expect(made.json!["token"]).toMatch(/^rwt_[A-Za-z0-9_-]{43}$/);
    const svc = await startServe([process.execPath, bundle.main], ["--data", data, "--auth"]);
    const locked = await cli("tokens", "create", "--tenant", "other", "--data", data);
    expect([locked.code, locked.stderr]).toEqual([2, expect.stringMatching(/in use by process/)]);
    const anonymous = await cli("submit", pack("hello"), "--server", svc.url, "--json");
    expect([anonymous.code, (anonymous.json!["error"] as Json)["code"]]).toEqual([2, "POLICY_PERMISSION_DENIED"]);
    const ok = await cli("submit", pack("hello"), "--server", svc.url, "--token", made.json!["token"] as string, "--wait", "--json");
    expect([ok.code, ok.json!["status"], ok.json!["tenant"]]).toEqual([0, "COMPLETED", "ci"]);
    expect(await svc.stop()).toBe(0);
    const reopened = await openDatabase({ dataDir: data }); // the lock is gone
    expect((await reopened.query<{ n: number }>("SELECT count(*)::int AS n FROM reach_wasm.runs"))[0]!.n).toBe(1);
    await reopened.close();
  }, 120_000);

  it("serves on Deno too, with the run hash of a Node run", async () => {
    const deno = [join(root, "node_modules/.bin/deno"), "run", "--allow-read", "--allow-write", "--allow-env", "--allow-net", join(root, "src/cli/main.ts")];
    const svc = await startServe(deno, ["--data", join(scratch, "deno-store")]);
    const r = await cli("submit", pack("hello"), "--server", svc.url, "--seed", "12", "--wait", "--json");
    expect([r.code, r.json!["runHash"]]).toEqual([0, await localRunHash("hello", { seed: "12" })]);
    expect(await svc.stop()).toBe(0);
  }, 180_000);
});
