// Project-level invariants: package.json and deno.json name the same entry points, the runtime boundary holds
// (only src/platform/ and src/cli/ touch node: or Deno), and versions agree.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { VERSION } from "../src/cli/version.ts";

const root = new URL("..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe("entry points", () => {
  it("deno.json exports map the same entry points as package.json exports (dist/X.js ↔ src/X.ts)", () => {
    const fromPkg = Object.fromEntries(
      Object.entries(pkg.exports as Record<string, string>).map(([k, v]) => [k, v.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts")]),
    );
    expect(deno.exports).toEqual(fromPkg);
    for (const target of Object.values(deno.exports as Record<string, string>)) expect(statSync(join(root, target)).isFile()).toBe(true);
  });

  it("the bin is the built CLI entry and deno's cli task runs the same source", () => {
    expect(pkg.bin["reach-wasm"]).toBe("./dist/cli/main.js");
    expect(deno.tasks.cli).toContain("src/cli/main.ts");
    expect(pkg.type).toBe("module");
    expect(pkg.engines.node).toBe(">=20");
  });

  it("the built bin runs the CLI bundle with the code cache the build made for it (start-up: README \"Benchmarks\")", () => {
    const r = spawnSync(process.execPath, [join(root, "dist/cli/main.js"), "--version"], { env: { ...process.env, REACH_WASM_DEBUG: "1" }, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`reach-wasm ${pkg.version}\n`);
    expect(r.stderr).toContain("reach-wasm: code cache accepted");
  });

  it("the CLI reports package.json's version", () => {
    expect(VERSION).toBe(pkg.version);
  });
});

describe("runtime boundary (ARCHITECTURE.md: only src/platform/ and src/cli/ touch node: or Deno)", () => {
  // Tests and test helpers (`*.test.ts`, `_test-*.ts`) are not built into dist/ and may use node:.
  const files = walk(join(root, "src")).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !/\/_test-[^/]*\.ts$/.test(f));
  const outside = files.filter((f) => !/^src\/(platform|cli)\//.test(relative(root, f)));

  it("checks some files", () => {
    expect(outside.length).toBeGreaterThan(10);
  });

  for (const f of outside) {
    it(`${relative(root, f)} has no node: import and no Deno/process/Buffer use`, () => {
      const code = readFileSync(f, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      const valueImports = code
        .split("\n")
        .filter((line) => /["']node:/.test(line) && !/^\s*(import|export)\s+type\s/.test(line));
      expect(valueImports).toEqual([]);
      expect(code).not.toMatch(/\bDeno\s*\./);
      expect(code).not.toMatch(/\bprocess\s*\.\s*(env|argv|exit|stdout|stderr|on)\b/);
      expect(code).not.toMatch(/\bBuffer\s*\./);
    });
  }
});
