// The Deno entry (`dist/cli/deno.mjs`, built by `npm run build` beside Node's bin): built JavaScript, not the
// TypeScript sources, so that Deno does not load ~hundreds of source modules at each start (README "Benchmarks":
// `scripts/bench-deno-start.ts`); and the same run as Node's bin, byte for byte. Both entries come from the bundle the
// build makes (`cliBundle`), so what is tested is what ships.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("the Deno entry", () => {
  it("is a built ES module beside Node's bin, and neither it nor a chunk it loads imports the TypeScript sources", () => {
    const entry = bundle!.deno;
    expect(dirname(entry)).toBe(dirname(bundle!.main));
    const text = readFileSync(entry, "utf8");
    expect(text.startsWith("#!/usr/bin/env -S deno run -A\n")).toBe(true);
    const graph = staticGraph(entry);
    expect(graph.length).toBeGreaterThan(1); // it does import its chunks
    for (const file of graph) {
      expect(file.endsWith(".mjs"), file).toBe(true);
      expect(readFileSync(file, "utf8"), file).not.toMatch(/["'][^"']*\.ts["']|\/src\//);
    }
    // the engine and step threads it starts are built modules beside it, as are the chunks every import names
    for (const worker of ["engine-worker.mjs", "step-worker.mjs"]) expect(existsSync(join(dirname(entry), worker))).toBe(true);
    const chunks = readdirSync(join(dirname(entry), "chunks"));
    for (const m of text.matchAll(/["']\.\/chunks\/([^"']+)["']/g)) expect(chunks).toContain(m[1]);
  });

  it("runs packs/hello with the same run hash and the same run files as Node's bin", () => {
    const node = spawnSync(process.execPath, [bundle!.main, "run", "packs/hello", "--json", "--out", join(scratch, "node")], { cwd: root, encoding: "utf8" });
    const deno = spawnSync(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", bundle!.deno, "run", "packs/hello", "--json", "--out", join(scratch, "deno")], { cwd: root, encoding: "utf8" });
    expect(node.status, node.stderr).toBe(0);
    expect(deno.status, deno.stderr).toBe(0);
    const [n, d] = [JSON.parse(node.stdout) as RunJson, JSON.parse(deno.stdout) as RunJson];
    expect(d.status).toBe("COMPLETED");
    expect(d.runHash).toBe(n.runHash);
    for (const f of ["events.jsonl", "tape.jsonl", "plan.json", "EXECUTION_HEADER.json", "result.json"]) {
      expect(readFileSync(join(d.out, f), "utf8"), f).toBe(readFileSync(join(n.out, f), "utf8"));
    }
    // and the capsule the Deno entry wrote replays and verifies (on Node's bin)
    const replay = spawnSync(process.execPath, [bundle!.main, "replay", join(scratch, "deno", `${d.runHash}.capsule.tar.gz`), "--quiet"], { cwd: root, encoding: "utf8" });
    expect(replay.status, replay.stderr).toBe(0);
  }, 60_000);
});
