// Every command of the README works when pasted (README: "Every other README command works when pasted"): each
// ```sh block runs, in order, in a scratch copy of the repository (its packs copied, everything else linked), with a
// fresh HOME, under bash -e. A line whose comment says "exit N" must exit N. The first block's `npm ci &&` is what
// CI already did, and `npm test` is this very test's runner, so those two are the only parts not run here. A block
// preceded by <!-- readme-test: needs DB --> runs against the test PostgreSQL server ($REACH_WASM_TEST_PG_URL) and
// is skipped, loudly, where there is none; Deno commands run on Deno.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");
const work = mkdtempSync(join(tmpdir(), "reach-readme-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

for (const name of ["node_modules", "dist", "src", "docs", "templates", "conformance", "wasm-tools", "scripts", "tsconfig.json", "LICENSE"]) symlinkSync(join(root, name), join(work, name));
for (const name of ["packs", "package.json", "deno.json", "README.md"]) cpSync(join(root, name), join(work, name), { recursive: true });
mkdirSync(join(work, "home"));

type Block = { index: number; needs: string | null; script: string };
const blocks: Block[] = [...readme.matchAll(/(?:<!-- readme-test: ([^>]*?) -->\n)?```sh\n([\s\S]*?)```/g)].map((m, index) => ({ index, needs: m[1] ?? null, script: m[2]! }));

/** The block as bash runs it: `exit N` comments become checks; the first block's CI parts are dropped. */
function prepare(b: Block): string {
  const lines = b.script.split("\n").flatMap((line) => {
    let l = line;
    if (b.index === 0) {
      if (/^npm test\b/.test(l)) return [];
      l = l.replace(/^npm ci && /, "");
    }
    const exit = /#.*\bexit (\d)\b/.exec(l);
    if (exit !== null) return [`set +e; ${l.replace(/\s+#.*$/, "")}; rc=$?; set -e; [ "$rc" -eq ${exit[1]} ] || { echo "expected exit ${exit[1]}, got $rc: ${l.replace(/[`"$\\]/g, "")}" >&2; exit 1; }`];
    return [l];
  });
  // Run as its own process group (setsid): on exit, everything the block started in the background (a server and
  // the node process under npx) is stopped, and the block's own status is kept.
  return ["set -euxo pipefail", "cleanup() { rc=$?; trap '' TERM; kill -TERM -- -$$ 2>/dev/null || true; exit $rc; }", "trap cleanup EXIT", ...lines].join("\n");
}

/**
 * Run a block without blocking this worker (a spawnSync of a minute-long block starves vitest's worker RPC, whose
 * fixed 60 s timeout then fails the whole run with "Timeout calling onTaskUpdate"); killed after 600 s.
 */
function runBlock(file: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("setsid", ["bash", file], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => void (stdout += t));
    child.stderr.setEncoding("utf8").on("data", (t: string) => void (stderr += t));
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe("the README's commands, in order", () => {
  expect(blocks.length).toBeGreaterThan(3);
  for (const b of blocks) {
    const first = b.script.trim().split("\n")[0]!.slice(0, 70);
    const pg = process.env["REACH_WASM_TEST_PG_URL"];
    const skip = b.needs === "needs DB" && pg === undefined;
    it.skipIf(skip)(`block ${b.index + 1}: ${first}`, async () => {
      const file = join(work, `.block-${b.index}.sh`);
      writeFileSync(file, prepare(b));
      const r = await runBlock(file, { ...process.env, HOME: join(work, "home"), REACH_WASM_CACHE: process.env["REACH_WASM_CACHE"] ?? join(homedir(), ".cache", "reach-wasm"), ...(pg === undefined ? {} : { DB: pg }), REACH_WASM_TRUST_STORE: "", CI: "" });
      expect(r.status, `block ${b.index + 1} failed:\n${r.stdout.slice(-1500)}\n${r.stderr.slice(-3000)}`).toBe(0);
    }, 620_000);
  }
});

describe("the README's MCP client configuration", () => {
  const configs = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { mcpServers?: Record<string, { command: string; args: string[] }> }).filter((c) => c.mcpServers !== undefined);
  it("is there, and each server it names starts and lists the pack's tools to the SDK's client", async () => {
    expect(configs.length).toBeGreaterThan(0);
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    for (const server of configs.flatMap((c) => Object.values(c.mcpServers!))) {
      const client = new Client({ name: "readme", version: "1" });
      await client.connect(new StdioClientTransport({ command: server.command, args: server.args, cwd: work, stderr: "ignore", env: { ...process.env, HOME: join(work, "home") } as Record<string, string> }));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("write_memory");
      expect(tools.length).toBeGreaterThan(5);
      await client.close();
    }
  }, 120_000);
});
