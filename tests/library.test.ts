// The library face (README "As a library"): the README's program runs on Node (the built package, imported by its
// own name) and on Deno (deno.json maps the same names to src/); importing reach-wasm changes nothing; the two
// manifests name the same entry points.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");
const program = /## As a library[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)![1]!;

describe("the library face", () => {
  it("package.json and deno.json export the same entry points", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string> };
    const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")) as { exports: Record<string, string>; imports: Record<string, string> };
    expect(Object.keys(pkg.exports).sort()).toEqual(Object.keys(deno.exports).sort());
    for (const [k, v] of Object.entries(pkg.exports)) expect(v.replace("./dist/", "./src/").replace(/\.js$/, ".ts")).toBe(deno.exports[k]);
    for (const k of Object.keys(pkg.exports)) expect(deno.imports[k === "." ? "reach-wasm" : `reach-wasm/${k.slice(2)}`]).toBe(deno.exports[k]);
  });

  it("deno.check.json (type-checking only) is deno.json plus declaration paths for the MCP SDK", () => {
    const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")) as Record<string, unknown> & { imports: Record<string, string> };
    const check = JSON.parse(readFileSync(join(root, "deno.check.json"), "utf8")) as Record<string, unknown> & { imports: Record<string, string> };
    for (const key of ["nodeModulesDir", "exports", "compilerOptions"]) expect(check[key]).toEqual(deno[key]);
    for (const [k, v] of Object.entries(deno.imports)) expect(check.imports[k]).toBe(v);
    for (const [k, v] of Object.entries(check.imports).filter(([k]) => !(k in deno.imports))) {
      expect(k).toMatch(/^@modelcontextprotocol\/sdk\//);
      expect(existsSync(join(root, v)), v).toBe(true);
    }
  });

  it("the README's program runs on Node from the built package, and verifies its capsule", () => {
    const file = join(root, ".reach-readme-library.mjs");
    writeFileSync(file, program);
    try {
      const r = spawnSync(process.execPath, [file], { cwd: root, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^COMPLETED [0-9a-f]{64} verified\n$/);
    } finally {
      spawnSync("rm", ["-f", file]);
    }
  }, 120_000);

  it("the README's program runs on Deno from src/ with the same run hash", () => {
    const file = join(root, ".reach-readme-library.ts");
    writeFileSync(file, program);
    try {
      const node = spawnSync(process.execPath, ["--input-type=module", "-e", program], { cwd: root, encoding: "utf8" });
      const deno = spawnSync(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", file], { cwd: root, encoding: "utf8" });
      expect(deno.status, deno.stderr).toBe(0);
      expect(deno.stdout).toBe(node.stdout);
    } finally {
      spawnSync("rm", ["-f", file]);
    }
  }, 120_000);

  it("importing reach-wasm has no side effects (the hashing backend stays the portable one)", () => {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", `
      const { getSha256Backend, nobleBackend } = await import("./dist/canonical/sha256.js");
      await import("reach-wasm");
      console.log(getSha256Backend() === nobleBackend ? "unchanged" : "changed");`], { cwd: root, encoding: "utf8" });
    expect(r.stdout.trim(), r.stderr).toBe("unchanged");
  });
});
