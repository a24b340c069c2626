// The Deno entry (`dist/cli/deno.mjs`, built by `npm run build` beside Node's bin): built JavaScript, not the
// TypeScript sources, so that Deno does not load ~hundreds of source modules at each start (README "Benchmarks":
// `scripts/bench-deno-start.ts`); and the same run as Node's bin, byte for byte. It takes the CLI as one script with the
// code cache the build trained on this Deno's V8 (as Node's bin does), and the ES modules where there is none (another
// Deno). Both come from the bundle the build makes (`cliBundle`), so what is tested is what ships.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachError } from "../src/protocol/mod.ts";
import { cliBundle } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-deno-entry-"));
let bundle: { main: string; deno: string; remove(): void } | undefined;
beforeAll(async () => {
  bundle = await cliBundle();
}, 120_000);
afterAll(() => {
  bundle?.remove();
  rmSync(scratch, { recursive: true, force: true });
});

type RunJson = { status: string; runHash: string; out: string };

/** Every module the entry loads before it runs a command: the static imports, followed from file to file. */
function staticGraph(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(/(?:^|[;}\s])import\s*(?:[^"'();]*?from\s*)?["']([^"']+)["']/g)) {
      if (m[1]!.startsWith(".")) visit(join(dirname(file), m[1]!));
    }
  };
  visit(entry);
  return [...seen];
}

const deno = join(root, "node_modules/.bin/deno");

/** `run packs/hello --json` by `entry` on Deno, with REACH_WASM_DEBUG=1 (the loader says which code it took). */
function denoHello(entry: string, out: string): { json: RunJson; stderr: string } {
  const r = spawnSync(deno, ["run", "-A", "--quiet", entry, "run", "packs/hello", "--json", "--out", out], { cwd: root, encoding: "utf8", env: { ...process.env, REACH_WASM_DEBUG: "1" } });
  expect(r.status, r.stderr).toBe(0);
  return { json: JSON.parse(r.stdout) as RunJson, stderr: r.stderr };
}

describe("the Deno entry", () => {
  it("is a built module beside Node's bin, and neither it nor a module it loads imports the TypeScript sources", () => {
    const entry = bundle!.deno;
    const dir = dirname(entry);
    expect(dir).toBe(dirname(bundle!.main));
    const text = readFileSync(entry, "utf8");
    expect(text.startsWith("#!/usr/bin/env -S deno run -A\n")).toBe(true);
    // it takes one of two built forms of the CLI, both beside it
    expect(text).toContain('"./main.js"');
    expect(text).toContain('"./deno-modules.mjs"');
    const graph = staticGraph(join(dir, "deno-modules.mjs"));
    expect(graph.length).toBeGreaterThan(1); // it does import its chunks
    for (const file of [...graph, entry]) {
      expect(file.endsWith(".mjs"), file).toBe(true);
      expect(readFileSync(file, "utf8"), file).not.toMatch(/["'][^"']*\.ts["']|["']\.{0,2}\/src\//);
    }
    // the engine and step threads it starts are built modules beside it, as are the chunks every import names
    for (const worker of ["engine-worker.mjs", "step-worker.mjs"]) expect(existsSync(join(dir, worker))).toBe(true);
    const chunks = readdirSync(join(dir, "chunks"));
    for (const m of readFileSync(join(dir, "deno-modules.mjs"), "utf8").matchAll(/["']\.\/chunks\/([^"']+)["']/g)) expect(chunks).toContain(m[1]);
  });

  it("runs packs/hello from the script with the code cache trained on this Deno, with the same run hash and run files as Node's bin", () => {
    const node = spawnSync(process.execPath, [bundle!.main, "run", "packs/hello", "--json", "--out", join(scratch, "node")], { cwd: root, encoding: "utf8" });
    expect(node.status, node.stderr).toBe(0);
    const n = JSON.parse(node.stdout) as RunJson;
    const { json: d, stderr } = denoHello(bundle!.deno, join(scratch, "deno"));
    // the build trained a cache for this Deno's V8, and V8 took it
    expect(readdirSync(dirname(bundle!.deno)).filter((f) => /^main\.cjs\.deno-.+\.cache$/.test(f))).toHaveLength(1);
    expect(stderr).toContain("reach-wasm: code cache accepted");
    expect(d.status).toBe("COMPLETED");
    expect(d.runHash).toBe(n.runHash);
    for (const f of ["events.jsonl", "tape.jsonl", "plan.json", "EXECUTION_HEADER.json", "result.json"]) {
      expect(readFileSync(join(d.out, f), "utf8"), f).toBe(readFileSync(join(n.out, f), "utf8"));
    }
    // and the capsule the Deno entry wrote replays and verifies (on Node's bin)
    const replay = spawnSync(process.execPath, [bundle!.main, "replay", join(scratch, "deno", `${d.runHash}.capsule.tar.gz`), "--quiet"], { cwd: root, encoding: "utf8" });
    expect(replay.status, replay.stderr).toBe(0);
  }, 60_000);

  it("without read or env access it says which flags to give (exit 2, one line, no stack trace; the CLI's error document for --json)", () => {
    const bare = (flags: string[], args: string[]) => spawnSync(deno, ["run", "--quiet", "--no-prompt", ...flags, bundle!.deno, ...args], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const envless = bare(["--allow-read"], ["--version"]);
    expect(envless.status, envless.stderr).toBe(2);
    expect(envless.stderr).toMatch(/^reach-wasm: PROTO_INVALID_ARGUMENT: Deno did not grant --allow-env, which every reach-wasm command needs; run it with -A \(deno run -A .*deno\.mjs …\)/);
    expect(envless.stderr.trim().split("\n")).toHaveLength(1);
    expect(envless.stdout).toBe("");
    const none = bare([], ["verify", "x.capsule.tar.gz", "--json"]);
    expect(none.status, none.stderr).toBe(2);
    expect(none.stderr).not.toMatch(/\n\s+at /);
    const doc = JSON.parse(none.stdout) as { error: { message: string } };
    expect(doc.error.message).toMatch(/^Deno did not grant --allow-read and --allow-env,/);
    expect(doc).toEqual(new ReachError("PROTO_INVALID_ARGUMENT", doc.error.message, { details: { missing: ["--allow-read", "--allow-env"] } }).toJSON());
    // given both, a command that needs no more runs
    const enough = bare(["--allow-read", "--allow-env"], ["--version"]);
    expect(enough.status, enough.stderr).toBe(0);
    expect(enough.stdout).toMatch(/^reach-wasm \d+\.\d+\.\d+/);
  }, 60_000);

  it("runs the ES modules where the build trained no cache for this Deno's V8 (another Deno), with the same run hash", () => {
    // a copy of the bundle without Deno's cache, beside the original (under node_modules: its packages resolve)
    const copy = join(dirname(dirname(bundle!.deno)), `cli-untrained-${process.pid}`);
    cpSync(dirname(bundle!.deno), copy, { recursive: true });
    try {
      for (const f of readdirSync(copy)) if (/^main\.cjs\.deno-.+\.cache$/.test(f)) rmSync(join(copy, f));
      const { json: d, stderr } = denoHello(join(copy, "deno.mjs"), join(scratch, "untrained"));
      expect(stderr).toMatch(/reach-wasm: no code cache for V8 [^:]+: the ES modules/);
      expect(stderr).not.toContain("code cache accepted");
      const { json: trained } = denoHello(bundle!.deno, join(scratch, "trained"));
      expect(d.runHash).toBe(trained.runHash);
      const replay = spawnSync(process.execPath, [bundle!.main, "replay", join(scratch, "untrained", `${d.runHash}.capsule.tar.gz`), "--quiet"], { cwd: root, encoding: "utf8" });
      expect(replay.status, replay.stderr).toBe(0);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
