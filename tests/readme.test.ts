// Every command of the README works when pasted (README: "Every other README command works when pasted"): each
// ```sh block runs, in order, in a scratch copy of the repository (its packs copied, everything else linked), with a
// fresh HOME, under bash -e, as if pasted into one terminal: the shell variables a block sets (the scratch folder $W,
// a capsule's path, exported tokens) are there for the blocks after it. A line whose comment says "exit N" must exit
// N. The first block's `npm ci && npm run build &&` is what CI already did, and `npm test` is this very test's runner, so those two are
// the only parts not run here. A block preceded by <!-- readme-test: needs DB --> runs against a fresh database on the
// test PostgreSQL server ($REACH_WASM_TEST_PG_URL) and is skipped, loudly, where there is none; Deno commands run on
// Deno. After the last block, the repository is as it was: the examples wrote their keys and results into their
// scratch folder, never into the repository (the test suite, run after them, reads nothing they left).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultTrustStorePath } from "../src/platform/config.ts";
import { freshPostgres } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");
const work = mkdtempSync(join(tmpdir(), "reach-readme-"));
// The test's own files (each block's script, the shell's variables between blocks, the HOME) live beside the copy.
const meta = mkdtempSync(join(tmpdir(), "reach-readme-meta-"));
const home = join(meta, "home");
const state = join(meta, "variables.sh");
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(meta, { recursive: true, force: true });
});

for (const name of ["node_modules", "dist", "src", "docs", "templates", "conformance", "wasm-tools", "scripts", "tsconfig.json", "LICENSE"]) symlinkSync(join(root, name), join(work, name));
for (const name of ["packs", "package.json", "deno.json", "README.md"]) cpSync(join(root, name), join(work, name), { recursive: true });
mkdirSync(home);

/** The copy as it is: every path under it (links not followed) with a digest of each file. */
function snapshot(): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const at = rel === "" ? name : `${rel}/${name}`;
      const st = lstatSync(path);
      if (st.isDirectory()) walk(path, at);
      else out.push(st.isFile() ? `${at} ${createHash("sha256").update(readFileSync(path)).digest("hex")}` : `${at} (link)`);
    }
  };
  walk(work, "");
  return out;
}
const before = snapshot();

type Block = { index: number; needs: string | null; script: string };
const blocks: Block[] = [...readme.matchAll(/(?:<!-- readme-test: ([^>]*?) -->\n)?```sh\n([\s\S]*?)```/g)].map((m, index) => ({ index, needs: m[1] ?? null, script: m[2]! }));

/** The block as bash runs it: `exit N` comments become checks; the first block's CI parts are dropped. */
function prepare(b: Block): string {
  const lines = b.script.split("\n").flatMap((line) => {
    let l = line;
    if (b.index === 0) {
      if (/^npm test\b/.test(l)) return [];
      l = l.replace(/^npm ci && npm run build && /, "");
    }
    const exit = /#.*\bexit (\d)\b/.exec(l);
    if (exit !== null) return [`set +e; ${l.replace(/\s+#.*$/, "")}; rc=$?; set -e; [ "$rc" -eq ${exit[1]} ] || { echo "expected exit ${exit[1]}, got $rc: ${l.replace(/[`"$\\]/g, "")}" >&2; exit 1; }`];
    return [l];
  });
  // Run as its own process group (setsid): on exit, everything the block started in the background (a server and
  // the node process under npx) is stopped, and the block's own status is kept. The variables the blocks before it
  // set are read first, and those this one sets are kept for the next (one terminal).
  const keep = `for v in $(compgen -v); do case " $__base " in *" $v "*) continue;; esac; case "$v" in rc|__base|BASH*|FUNCNAME|PIPESTATUS|_) continue;; esac; declare -p "$v" 2>/dev/null | grep -v '^declare -[a-zA-Z]*r' || true; done > ${JSON.stringify(state)}`;
  return [
    `__base="$(compgen -v | tr '\\n' ' ')"`,
    `[ -f ${JSON.stringify(state)} ] && source ${JSON.stringify(state)}`,
    "set -euxo pipefail",
    `cleanup() { rc=$?; trap '' TERM; { set +x; ${keep}; } 2>/dev/null; kill -TERM -- -$$ 2>/dev/null || true; exit $rc; }`,
    "trap cleanup EXIT",
    ...lines,
  ].join("\n");
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

/** The environment of a pasted block: a fresh HOME (the README's trust store and service data go there). */
const blockEnv = (db: string | null): NodeJS.ProcessEnv => ({
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  ...(db === null ? {} : { DB: db }),
  CI: "",
});

describe("the README's commands, in order", () => {
  expect(blocks.length).toBeGreaterThan(3);
  const pg = process.env["REACH_WASM_TEST_PG_URL"];
  let db: string | null = null;
  beforeAll(async () => {
    // A database of its own: another test's workers on the same server must not take the README's runs.
    if (pg !== undefined && blocks.some((b) => b.needs === "needs DB")) db = await freshPostgres(pg, `readme_${process.pid}`);
  }, 60_000);
  for (const b of blocks) {
    const first = b.script.trim().split("\n")[0]!.slice(0, 70);
    const skip = b.needs === "needs DB" && pg === undefined;
    it.skipIf(skip)(`block ${b.index + 1}: ${first}`, async () => {
      const file = join(meta, `block-${b.index}.sh`);
      writeFileSync(file, prepare(b));
      const r = await runBlock(file, blockEnv(db));
      expect(r.status, `block ${b.index + 1} failed:\n${r.stdout.slice(-1500)}\n${r.stderr.slice(-3000)}`).toBe(0);
    }, 620_000);
  }

});

describe("the tests' own home", () => {
  it("is not the user's: no test reads the user's trust store, keys, caches or service data", () => {
    expect(process.env["HOME"]).not.toBe(userInfo().homedir);
    expect(defaultTrustStorePath().startsWith(process.env["HOME"]!)).toBe(true);
    expect(process.env["XDG_CACHE_HOME"]).toContain(join("node_modules", ".cache"));
    expect(Object.keys(process.env).filter((k) => k.startsWith("REACH_WASM_") && !/^REACH_WASM_(TEST_|DEBUG$)/.test(k))).toEqual([]);
  });
});

// The configuration is for a project that installed the package: tests/package.test.ts installs the packed tarball
// into an empty project and starts every server it names with the SDK's client there. Here: it is there, runs the
// project's own bin (never a download), and each path it names inside the package is one the package ships.
describe("the README's MCP client configuration", () => {
  const configs = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { mcpServers?: Record<string, { command: string; args: string[] }> }).filter((c) => c.mcpServers !== undefined);
  it("is there, runs the installed package's bin, and names packs the package ships", () => {
    expect(configs.length).toBeGreaterThan(0);
    const files = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] }).files;
    for (const server of configs.flatMap((c) => Object.values(c.mcpServers!))) {
      expect(server.command).toBe("npx");
      expect(server.args.slice(0, 3)).toEqual(["--no", "reach-wasm", "mcp"]);
      const inside = server.args.filter((a) => a.startsWith("node_modules/reach-wasm/")).map((a) => a.slice("node_modules/reach-wasm/".length));
      expect(inside.length).toBeGreaterThan(0);
      for (const path of inside) {
        expect(existsSync(join(root, path)), path).toBe(true);
        expect(files.some((f) => path === f || path.startsWith(`${f}/`)), `${path} is not in package.json "files"`).toBe(true);
      }
    }
  });
});

describe("after every README block and the MCP configuration", () => {
  it("leaves the repository as it was: keys, capsules, reports and signatures went to the scratch folder", () => {
    expect(snapshot()).toEqual(before);
    const variables = readFileSync(state, "utf8");
    const scratch = /^declare -- W="([^"]+)"$/m.exec(variables)?.[1];
    expect(scratch, variables).toMatch(/^\/.+/);
    expect(readdirSync(scratch!)).toEqual(expect.arrayContaining(["me.key", "me.key.pub", "notes"]));
    expect(existsSync(join(home, ".config", "reach-wasm", "trust.json"))).toBe(true); // `trust add` wrote the test's HOME
  });
});
