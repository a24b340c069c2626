// Secrets through every face (docs/authoring.md "Secrets"): `run --secret` (environment and file; the Deno CLI once),
// the HTML report, the MCP face (answers and capsules), and `submit` through the run service (PGlite in process): not
// one byte of the value, nor its base64 or percent forms, in stdout/stderr, the --events stream, the run files, the
// capsule (decompressed), MCP answers, any database row, or the report. Every capsule replays without the value.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive, writeArchive } from "../src/capsule/archive.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { main } from "../src/cli/cli.ts";
import type { EngineRun } from "../src/engine/engine.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { SESSION_START } from "../src/engine/session-chain.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { openIsolatedSession } from "../src/host/engine-thread.ts";
import { createMcpServer } from "../src/mcp/server.ts";
import { McpSessionRun } from "../src/mcp/session-run.ts";
import type { McpEngine } from "../src/mcp/session-run.ts";
import { ServiceClient } from "../src/service/client.ts";
import { packDigest } from "../src/trust/pack-signature.ts";
import { signPack } from "../src/trust/pack-signature.ts";
import { generateKeyPair } from "../src/trust/keys.ts";
import { parseTrustStore } from "../src/trust/trust-store.ts";
import { bytesToHex } from "../src/canonical/hex.ts";
import { packFromDisk } from "./support/pack.ts";
import { leaksIn, startEchoServer } from "./support/secret-server.ts";
import type { EchoServer } from "./support/secret-server.ts";
import { startTestService } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-secrets-"));
const T1 = "tok/en+One=42&x~s3cr3t";
const ENV = "REACH_TEST_API_TOKEN";
let server: EchoServer;
beforeAll(async () => {
  server = await startEchoServer([T1]);
});
afterAll(async () => {
  await server?.close();
  delete process.env[ENV];
  rmSync(scratch, { recursive: true, force: true });
});

/** Every file under a folder, and the entries of every capsule in it (decompressed). */
function filesUnder(dir: string): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (!statSync(p).isFile()) continue;
    const bytes = new Uint8Array(readFileSync(p));
    out.push([p, bytes]);
    if (p.endsWith(".capsule.tar.gz")) for (const [entry, b] of readArchive(bytes)) out.push([`${p}:${entry}`, b]);
  }
  return out;
}

function expectNoLeak(where: Iterable<[string, Uint8Array | string]>): void {
  for (const [name, bytes] of where) expect(leaksIn(bytes, T1), `${name} holds the secret`).toEqual([]);
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** The echo API in its own process: the CLI runs in this one hold its thread while their events stream. */
async function serverProcess(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", join(root, "tests/support/secret-server-main.ts"), T1], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(Number(out.trim()));
    });
    child.on("exit", (code) => reject(new Error(`the echo server exited (${code})`)));
  });
  return { port, child };
}

describe("run --secret, report, replay (Node in process) and the Deno CLI", () => {
  let api: { port: number; child: ChildProcess };
  beforeAll(async () => {
    api = await serverProcess();
  }, 60_000);
  afterAll(() => {
    api?.child.kill();
  });

  it("the environment and a file give the same run; no output, file or event holds the value; Deno agrees", async () => {
    const url = `http://127.0.0.1:${api.port}/bounce`;
    process.env[ENV] = T1;
    const out = join(scratch, "run");
    const events = join(scratch, "events.jsonl");
    const a = await cli(["run", "packs/secret-api", "--unrestricted", "--secret", `API_TOKEN=env:${ENV}`, "--input", JSON.stringify({ url }), "--events", events, "--json", "--out", out]);
    expect(a.code, a.stderr).toBe(0);
    const ran = JSON.parse(a.stdout) as { runHash: string; capsule: string; out: string };
    const report = join(scratch, "report.html");
    const r = await cli(["report", ran.capsule, "--out", report]);
    expect(r.code, r.stderr).toBe(0);
    const replay = await cli(["replay", ran.capsule, "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout).matches).toBe(true);
    const file = join(scratch, "token.txt");
    writeFileSync(file, `${T1}\n`, { mode: 0o600 });
    const b = await cli(["run", "packs/secret-api", "--unrestricted", "--secret", `API_TOKEN=file:${file}`, "--input", JSON.stringify({ url }), "--json", "--out", out]);
    expect(b.code, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).runHash).toBe(ran.runHash);
    expectNoLeak([["stdout", a.stdout + b.stdout + r.stdout + replay.stdout], ["stderr", a.stderr + b.stderr + r.stderr + replay.stderr], ...filesUnder(scratch).filter(([p]) => p !== file)]);
    expect(readFileSync(events, "utf8")).toContain("run_completed");
    // Deno, once: the same run hash from the same file, nothing on its outputs
    const d = spawnSync(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", join(root, "src/cli/main.ts"), "run", "packs/secret-api", "--unrestricted", "--secret", `API_TOKEN=file:${file}`, "--input", JSON.stringify({ url }), "--json", "--out", join(scratch, "deno")], { cwd: root, encoding: "utf8", timeout: 120_000, env: { ...process.env, [ENV]: "" } });
    expect(d.status, d.stderr).toBe(0);
    expect(JSON.parse(d.stdout).runHash).toBe(ran.runHash);
    expectNoLeak([["deno stdout", d.stdout], ["deno stderr", d.stderr], ...filesUnder(join(scratch, "deno"))]);
  }, 180_000);

  it("refuses a value on the command line, an unset variable, a link and a missing secret (exit 2), without echoing", async () => {
    const url = `http://127.0.0.1:${api.port}/echo`;
    const base = ["run", "packs/secret-api", "--unrestricted", "--input", JSON.stringify({ url }), "--out", join(scratch, "refused")];
    const inline = await cli([...base, "--secret", `API_TOKEN=${T1}`]);
    expect(inline.code).toBe(2);
    expect(inline.stderr).toMatch(/never goes on the command line/);
    const unset = await cli([...base, "--secret", "API_TOKEN=env:REACH_TEST_UNSET_VARIABLE"]);
    expect(unset.stderr).toMatch(/REACH_TEST_UNSET_VARIABLE is not set/);
    const link = join(scratch, "link.txt");
    writeFileSync(join(scratch, "target.txt"), T1);
    symlinkSync(join(scratch, "target.txt"), link);
    const linked = await cli([...base, "--secret", `API_TOKEN=file:${link}`]);
    expect(linked.code).toBe(2);
    expect(linked.stderr).toMatch(/symbolic link/);
    const missing = await cli(base);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/needs secret API_TOKEN/);
    expectNoLeak([["stderr", inline.stderr + unset.stderr + linked.stderr + missing.stderr], ["stdout", inline.stdout + unset.stdout + linked.stdout + missing.stdout]]);
  });
});

describe("the MCP face", () => {
  it("answers and capsules hold placeholders only; the capsule replays without the value", async () => {
    const files = packFromDisk("secret-api");
    const runs: EngineRun[] = [];
    const request = { pack: { files }, trust: { unrestricted: true }, network: true, secrets: { API_TOKEN: T1 } };
    const engine: McpEngine = { openSession: ({ session }) => openIsolatedSession({ ...request, session }) };
    const first = await engine.openSession({ session: SESSION_START });
    const run = new McpSessionRun(first, async (r) => (runs.push(r), `mem/${r.capsule.name}`), { engine });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(run, { name: "reach-wasm", version: "test" }).connect(a);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(b);
    const answer = await client.callTool({ name: "call-api", arguments: { url: `http://127.0.0.1:${server.port}/bounce` } });
    expect(answer.isError ?? false, JSON.stringify(answer)).toBe(false);
    expect(JSON.stringify(answer)).toContain("{{secret:API_TOKEN}}");
    const leak = await client.callTool({ name: "call-api", arguments: { url: `http://localhost:${server.port}/echo` } });
    expect(leak.isError).toBe(true);
    expect(JSON.stringify(leak)).toContain("POLICY_VIOLATION");
    await client.close();
    await run.end();
    expect(runs.length).toBeGreaterThan(0);
    expectNoLeak([["answers", JSON.stringify([answer, leak])], ...runs.flatMap((r) => [["capsule", r.capsule.bytes] as [string, Uint8Array], ...[...readArchive(r.capsule.bytes)].map(([n, x]) => [`capsule:${n}`, x] as [string, Uint8Array]), ...[...r.files].map(([n, x]) => [`files:${n}`, x] as [string, Uint8Array])])]);
    for (const r of runs) expect((await replayCapsule(readRunCapsule(r.capsule.bytes), defaultEnvironment())).matches).toBe(true);
  }, 60_000);
});

describe("submit through the run service", () => {
  it("the value is sent once, used for the run, and is in no database row, record or capsule", async () => {
    const signer = generateKeyPair();
    const files = packFromDisk("secret-api");
    files.set(".reach/signature", new TextEncoder().encode(JSON.stringify(signPack(files, signer.privateKey))));
    const trust = parseTrustStore(JSON.stringify({ version: 1, keys: [{ publicKey: bytesToHex(signer.publicKey), name: "test" }] }));
    const t = await startTestService({ trust, fetch: (u, i) => fetch(u, i) });
    try {
      const client = new ServiceClient({ server: t.url });
      const archive = writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));
      const accepted = await client.submit(packDigest(files), archive, { input: { url: `http://127.0.0.1:${server.port}/bounce` } }, { API_TOKEN: T1 });
      const record = await client.waitForEnd(accepted.runId);
      expect(record.status, JSON.stringify(record.error)).toBe("COMPLETED");
      const { bytes } = await client.capsule(record.runId);
      expect((await replayCapsule(readRunCapsule(bytes), defaultEnvironment())).matches).toBe(true);
      const rows: [string, string][] = [];
      const tables = await t.db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'reach_wasm'");
      expect(tables.length).toBeGreaterThan(0);
      for (const { table_name } of tables) {
        for (const row of await t.db.query(`SELECT * FROM reach_wasm."${table_name}"`)) {
          const text = JSON.stringify(row, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : typeof v === "bigint" ? String(v) : v));
          rows.push([`row of ${table_name}`, text]);
        }
      }
      expectNoLeak([...rows, ["record", JSON.stringify(record)], ...[...readArchive(bytes)].map(([n, x]) => [`capsule:${n}`, x] as [string, Uint8Array])]);
    } finally {
      await t.close();
    }
  }, 120_000);
});
