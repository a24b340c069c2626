// Files and paths, and file modes (docs/security.md): what the command line writes never follows a planted link nor
// leaves the folder it was given, and what holds keys, stores, runs and capsules is 0600 in 0700 folders whatever the
// umask (this file runs under umask 000), checked again when opened. Node in process; Deno once, spawned.
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../src/cli/cli.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-files-"));
const at = (...p: string[]): string => join(scratch, ...p);
let umask = 0;
const saved = { ...process.env };
beforeAll(() => {
  umask = process.umask(0);
  process.env["REACH_WASM_TRUST_STORE"] = at("no-trust.json"); // never the user's own trust store or caches
  process.env["REACH_WASM_CACHE"] = at("cache");
});
afterAll(() => {
  process.umask(umask);
  process.env = saved;
  rmSync(scratch, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
async function cli(...args: string[]): Promise<{ code: number; json: Json | null; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, json: stdout.trim() === "" ? null : (JSON.parse(stdout) as Json), stderr };
}

const mode = (p: string): number => lstatSync(p).mode & 0o777;

/** Every file and folder under `dir` (links left out), relative path → mode. */
function modes(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isSymbolicLink()) out[join(e.parentPath, e.name).slice(dir.length + 1)] = mode(join(e.parentPath, e.name));
  }
  return out;
}

/** A folder outside every --out, with files that no planted link may let reach-wasm touch. */
function victim(name: string): { dir: string; intact: () => void } {
  const dir = at(name);
  mkdirSync(join(dir, "sub"), { recursive: true });
  writeFileSync(join(dir, "precious.txt"), "keep me");
  writeFileSync(join(dir, "sub", "also.txt"), "me too");
  return {
    dir,
    intact: () => {
      expect(readdirSync(dir, { recursive: true }).sort()).toEqual(["precious.txt", "sub", "sub/also.txt"]);
      expect(readFileSync(join(dir, "precious.txt"), "utf8")).toBe("keep me");
    },
  };
}

/** Verify and replay a capsule (every test that writes one does). */
async function verifiesAndReplays(capsule: string): Promise<void> {
  for (const command of ["verify", "replay"]) {
    const r = await cli(command, capsule, "--json");
    expect(r.code, `${command}: ${r.stderr}`).toBe(0);
  }
}

let runHash = "";
describe("run: no write follows a planted link", () => {
  it("writes its capsule 0600 and run folder 0700/0600 under umask 000; the capsule replays and verifies", async () => {
    const r = await cli("run", "packs/hello", "--out", at("out1"), "--json");
    expect(r.code, r.stderr).toBe(0);
    runHash = r.json!["runHash"] as string;
    const capsule = r.json!["capsule"] as string;
    await verifiesAndReplays(capsule);
    expect([mode(at("out1")), mode(capsule), mode(at("out1", "runs")), mode(at("out1", "runs", runHash))]).toEqual([0o700, 0o600, 0o700, 0o700]);
    const inside = modes(at("out1", "runs", runHash));
    expect(Object.keys(inside).length).toBeGreaterThan(2);
    for (const [path, m] of Object.entries(inside)) expect(m & 0o077, path).toBe(0);
  });

  it("a link planted at OUT/runs/<runHash> is refused with a ReachError: nothing under its target is removed", async () => {
    const v = victim("victim-runs");
    mkdirSync(at("out2", "runs"), { recursive: true });
    symlinkSync(v.dir, at("out2", "runs", runHash));
    const r = await cli("run", "packs/hello", "--out", at("out2"), "--json");
    expect(r.code).toBe(1);
    expect(r.json!["runHash"]).toBe(runHash);
    expect(r.json!["writeError"]).toMatchObject({ code: "PROTO_INVALID_ARGUMENT", message: expect.stringMatching(/is a symbolic link; reach-wasm never writes or removes through a link/) as unknown });
    v.intact();
    expect(lstatSync(at("out2", "runs", runHash)).isSymbolicLink()).toBe(true);
    await verifiesAndReplays(r.json!["capsule"] as string); // the capsule, written before, is whole
  });

  it("a link planted at the capsule's path is refused; the file it points to keeps its bytes", async () => {
    const v = victim("victim-capsule");
    mkdirSync(at("out3"));
    symlinkSync(join(v.dir, "precious.txt"), at("out3", `${runHash}.capsule.tar.gz`));
    const r = await cli("run", "packs/hello", "--out", at("out3"), "--json");
    expect(r.code).toBe(1);
    expect((r.json!["writeError"] as Json)["message"]).toMatch(/capsule\.tar\.gz" is a symbolic link/);
    v.intact();
  });

  it("--out files (report, keygen --force, pack build, --events) are never written through a link", async () => {
    const v = victim("victim-outs");
    const link = (name: string): string => {
      symlinkSync(join(v.dir, "precious.txt"), at(name));
      return at(name);
    };
    const capsule = join(at("out1"), `${runHash}.capsule.tar.gz`);
    const report = await cli("report", capsule, "--out", link("r.html"));
    expect([report.code, report.stderr]).toEqual([2, expect.stringMatching(/r\.html" is a symbolic link/)]);
    expect((await cli("keygen", "--out", link("k.key"), "--force")).stderr).toMatch(/k\.key" is a symbolic link/);
    expect((await cli("pack", "build", "packs/hello", "--out", link("p.tar.gz"))).stderr).toMatch(/is a symbolic link/);
    const events = await cli("run", "packs/hello", "--out", at("out4"), "--events", link("e.jsonl"));
    expect([events.code, events.stderr]).toEqual([2, expect.stringMatching(/--events .* cannot be written \(it is a symbolic link/)]);
    v.intact();
  });
});

describe("keys, trust stores and reports: private, and checked when opened", () => {
  it("keygen, trust add and report write 0600 files in new 0700 folders under umask 000", async () => {
    expect((await cli("keygen", "--out", at("keys", "a.key"))).code).toBe(0);
    expect([mode(at("keys")), mode(at("keys", "a.key")), mode(at("keys", "a.key.pub"))]).toEqual([0o700, 0o600, 0o644]);
    expect((await cli("trust", "add", at("keys", "a.key.pub"), "--trust", at("conf", "trust.json"))).code).toBe(0);
    expect([mode(at("conf")), mode(at("conf", "trust.json"))]).toEqual([0o700, 0o600]);
    const report = await cli("report", join(at("out1"), `${runHash}.capsule.tar.gz`), "--out", at("reports", "r.html"));
    expect(report.code, report.stderr).toBe(0);
    expect([mode(at("reports")), mode(at("reports", "r.html"))]).toEqual([0o700, 0o600]);
  });

  it("a private key others can read, or a trust store others can write, is refused with how to fix it", async () => {
    chmodSync(at("keys", "a.key"), 0o644);
    const key = await cli("run", "packs/hello", "--out", at("out5"), "--key", at("keys", "a.key"));
    expect([key.code, key.stderr]).toEqual([2, expect.stringMatching(/is open to other users \(mode 0644\).*chmod 600/)]);
    chmodSync(at("keys", "a.key"), 0o600);
    chmodSync(at("conf", "trust.json"), 0o666);
    const trust = await cli("run", "packs/hello", "--out", at("out5"), "--trust", at("conf", "trust.json"));
    expect([trust.code, trust.stderr]).toEqual([2, expect.stringMatching(/is writable by other users \(mode 0666\).*chmod 600/)]);
  });
});

describe("stores: the node directory and the embedded service store (PGlite)", () => {
  it("node init makes a 0700 directory of 0600 files; an existing one open to others is narrowed, with a warning", async () => {
    expect((await cli("node", "init", "--dir", at("node-a"), "--endpoint", "https://127.0.0.1:9443")).code).toBe(0);
    expect(modes(at("node-a"))).toEqual({ "node.json": 0o600, "node.key": 0o600 });
    expect(mode(at("node-a"))).toBe(0o700);
    mkdirSync(at("node-b"), { mode: 0o755 });
    const warn = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      expect((await cli("node", "init", "--dir", at("node-b"), "--endpoint", "https://127.0.0.1:9443")).code).toBe(0);
      expect(warn.mock.calls.map((c) => String(c[0])).join("")).toMatch(/the node directory .*node-b" was readable by other users; it is 0700 now/);
    } finally {
      warn.mockRestore();
    }
    expect(mode(at("node-b"))).toBe(0o700);
  });

  it("tokens create leaves --data 0700 with every file in it 0600, narrowing one open to others (with a warning); a link is refused", async () => {
    const data = at("svc", "data"); // an existing store folder, world-readable, holding a file others could read
    mkdirSync(data, { recursive: true, mode: 0o755 });
    writeFileSync(join(data, "stray-wal"), "a tenant's input");
    chmodSync(join(data, "stray-wal"), 0o644);
    symlinkSync(data, at("svc", "link"));
    const link = await cli("tokens", "create", "--tenant", "v", "--data", at("svc", "link"), "--json");
    expect([link.code, link.stderr]).toEqual([2, expect.stringMatching(/link" is a symbolic link/)]);
    const warn = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const r = await cli("tokens", "create", "--tenant", "t", "--data", data, "--json");
      expect(r.code, r.stderr).toBe(0);
      expect(warn.mock.calls.map((c) => String(c[0])).join("")).toMatch(/the embedded store \(--data\) .* was readable by other users; it is 0700 now/);
    } finally {
      warn.mockRestore();
    }
    expect(mode(data)).toBe(0o700);
    const all = modes(data);
    expect(Object.keys(all).length).toBeGreaterThan(100); // PGlite's cluster: tables, the write-ahead log, …
    for (const [path, m] of Object.entries(all)) expect(m & 0o077, path).toBe(0);
  }, 60_000);
});

describe("on Deno", () => {
  it("keygen and run under umask 000 write 0600/0700, and a link at OUT/runs/<runHash> is refused, its target untouched", async () => {
    const v = victim("victim-deno");
    mkdirSync(at("deno", "runs"), { recursive: true });
    symlinkSync(v.dir, at("deno", "runs", runHash));
    const deno = `${join(root, "node_modules/.bin/deno")} run -A --quiet ${join(root, "src/cli/main.ts")}`;
    const script = `umask 000; ${deno} keygen --out ${at("deno-keys", "k.key")} >/dev/null 2>&1 && ${deno} run packs/hello --out ${at("deno")} --json`;
    const r = spawnSync("sh", ["-c", script], { cwd: root, encoding: "utf8", env: { ...process.env } });
    const json = JSON.parse(r.stdout) as Json;
    expect([r.status, json["runHash"]], r.stderr).toEqual([1, runHash]);
    expect((json["writeError"] as Json)["message"]).toMatch(/is a symbolic link; reach-wasm never writes or removes through a link/);
    v.intact();
    expect([mode(at("deno-keys")), mode(at("deno-keys", "k.key")), mode(json["capsule"] as string)]).toEqual([0o700, 0o600, 0o600]);
    await verifiesAndReplays(json["capsule"] as string);
  }, 60_000);
});
