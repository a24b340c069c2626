// Installed as users install packages: `npm pack` of this checkout (its dist/ as `npm run build` made it — `prepack`
// builds it when a user packs) installs into an empty project with npm, and from a folder outside the repository the
// installed bin runs a pack, verifies and replays the capsule, attests it, serves MCP through the README's client
// configuration (initialize + tools/list with the SDK's client), and the installed Deno entry verifies. The packed
// manifest carries no script npm would run at install time. npm's cache is the one `npm test` gives (npm_config_cache),
// else the tests' own under node_modules/.cache; HOME is the tests' own (tests/_setup-home.ts).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-package-"));
const project = join(scratch, "project"); // the empty project the package is installed into
const outside = join(scratch, "outside"); // where the commands run: neither the repository nor the project
mkdirSync(project);
mkdirSync(outside);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const cache = process.env["npm_config_cache"] ?? join(root, "node_modules/.cache/reach-wasm-tests/npm");
const env = { ...process.env, npm_config_cache: cache, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", NO_COLOR: "1" };
/** The run hash the repository's own bin gives packs/hello (what the installed package must give too). */
function helloRunHash(): string {
  const out = execFileSync(process.execPath, [join(root, "dist/cli/main.js"), "run", join(root, "packs/hello"), "--out", join(scratch, "repo-out"), "--json", "--quiet"], { cwd: scratch, env, encoding: "utf8" });
  return (JSON.parse(out) as { runHash: string }).runHash;
}

/** Run a command without blocking this worker (a spawnSync of half a minute starves vitest's worker RPC). */
function sh(cmd: string, args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => void (stdout += t));
    child.stderr.setEncoding("utf8").on("data", (t: string) => void (stderr += t));
    const timer = setTimeout(() => child.kill("SIGKILL"), 170_000);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The newest modification time of the .ts files under src/ (what dist/ is built from). */
function newestSource(dir = join(root, "src")): number {
  return Math.max(...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newestSource(join(dir, e.name)) : e.name.endsWith(".ts") ? statSync(join(dir, e.name)).mtimeMs : 0)));
}

let tarball = "";
let files: string[] = [];
const bin = join(project, "node_modules/.bin/reach-wasm");
const installed = join(project, "node_modules/reach-wasm");

beforeAll(async () => {
  const built = join(root, "dist/cli/main.cjs");
  if (!existsSync(built) || statSync(built).mtimeMs < newestSource()) throw new Error("dist/ is missing or older than src/: run `npm run build` (what `npm pack` runs through prepack)");
  const pack = await sh("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", scratch], root);
  expect(pack.status, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
  tarball = join(scratch, info.filename);
  files = info.files.map((f) => f.path);
  const install = await sh("npm", ["install", "--prefix", project, tarball, "--prefer-offline", "--no-audit", "--no-fund"], outside);
  expect(install.status, install.stderr.slice(-3000)).toBe(0);
}, 180_000);

describe("the npm package", () => {
  it("ships the built CLI, both entries, the example packs and the conformance material, and no sources or tests", () => {
    for (const f of ["package.json", "dist/cli/main.js", "dist/cli/deno.mjs", "dist/mod.js", "packs/hello/reach.json", "conformance/ATTESTATION.md", "README.md", "LICENSE"]) expect(files, f).toContain(f);
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("tests/") || f.startsWith("scripts/") || /\.test\.(js|ts)$/.test(f))).toEqual([]);
  });

  it("has the version deno.json publishes to JSR, which publishes only the library's sources", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; license: string };
    const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")) as { name: string; version: string; license: string; publish: { include: string[]; exclude: string[] } };
    expect([deno.version, deno.license]).toEqual([pkg.version, pkg.license]);
    expect(deno.name).toMatch(/^@[a-z0-9-]+\/[a-z0-9-]+$/);
    expect(deno.publish.include).toContain("src/**/*.ts");
    expect(deno.publish.exclude).toEqual(expect.arrayContaining(["src/**/*.test.ts", "src/**/_test-*.ts"]));
  });

  it("carries no script npm runs when the package is installed (the build is prepack's, run when packing)", () => {
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { scripts?: Record<string, string>; bin: Record<string, string> };
    const atInstall = ["preinstall", "install", "postinstall", "prepare"].filter((s) => manifest.scripts?.[s] !== undefined);
    expect(atInstall).toEqual([]);
    expect(manifest.scripts?.["prepack"]).toMatch(/tsc/);
    expect(manifest.bin["reach-wasm"]).toBe("./dist/cli/main.js");
    expect(existsSync(bin)).toBe(true);
  });

  it("from outside the repository: run, verify, replay and attest with the installed bin; the Deno entry verifies", async () => {
    const r = await sh(bin, ["run", join(installed, "packs/hello"), "--out", join(outside, "out"), "--json"], outside);
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { status: string; runHash: string; capsule: string };
    expect(result.status).toBe("COMPLETED");
    expect(result.runHash).toBe(helloRunHash()); // the same run as the repository's own bin gives
    for (const command of ["verify", "replay"]) {
      const v = await sh(bin, [command, result.capsule], outside);
      expect(v.status, `${command}: ${v.stderr}`).toBe(0);
    }
    expect((await sh(bin, ["keygen", "--out", join(outside, "k.key")], outside)).status).toBe(0);
    expect((await sh(bin, ["attest", result.capsule, "--key", join(outside, "k.key"), "--out", join(outside, "a.intoto.json")], outside)).status).toBe(0);
    const deno = await sh(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", join(installed, "dist/cli/deno.mjs"), "verify", result.capsule, "--attestation", join(outside, "a.intoto.json"), "--key", join(outside, "k.key.pub"), "--json"], outside);
    expect(deno.status, deno.stderr).toBe(0);
    expect((JSON.parse(deno.stdout) as { valid: boolean }).valid).toBe(true);
  }, 60_000);

  it("the README's MCP client configuration starts the installed server in the project: initialize, tools/list", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const servers = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { mcpServers?: Record<string, { command: string; args: string[] }> })
      .flatMap((c) => Object.values(c.mcpServers ?? {}));
    expect(servers.length).toBeGreaterThan(0);
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    for (const [i, server] of servers.entries()) {
      const out = join(outside, `mcp-${i}`);
      const args = server.args.map((a, k) => (server.args[k - 1] === "--out" ? out : a)); // its capsules go to the test's folder
      const client = new Client({ name: "package-test", version: "1" });
      await client.connect(new StdioClientTransport({ command: server.command, args, cwd: project, stderr: "ignore", env: env as Record<string, string> }));
      expect(client.getServerVersion()?.name).toBe("reach-wasm");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["wordcount", "write_memory"]));
      await client.callTool({ name: "wordcount", arguments: { text: "one two three" } });
      await client.close();
      const capsules = readdirSync(out).filter((f) => f.endsWith(".capsule.tar.gz"));
      expect(capsules.length).toBeGreaterThan(0); // the session's run, written when the client went away
      for (const c of capsules) {
        for (const command of ["verify", "replay"]) expect((await sh(bin, [command, join(out, c)], outside)).status, `${command} ${c}`).toBe(0);
      }
    }
  }, 60_000);
});
