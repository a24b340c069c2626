// The JSR package (deno.json): its entry points are the npm package's, it leaves out the CLI, and CI's
// `deno publish --dry-run` runs without `--allow-slow-types` and fails on any warning, so an exported symbol of the
// public API without an explicit type (JSR "slow types") fails CI. The dry run itself is .ci/run's (it takes ~10 s, too
// slow for the suite); this file checks, in milliseconds, that nothing switched it off.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const read = (path: string): string => readFileSync(join(root, path), "utf8");
const deno = JSON.parse(read("deno.json")) as { exports: Record<string, string>; tasks: Record<string, string>; publish: { include: string[]; exclude: string[] } };
const pkg = JSON.parse(read("package.json")) as { exports: Record<string, string>; scripts: Record<string, string> };

describe("the JSR package", () => {
  it("exports the npm package's entry points, from their sources", () => {
    expect(Object.keys(deno.exports).sort()).toEqual(Object.keys(pkg.exports).sort());
    for (const [entry, source] of Object.entries(deno.exports)) {
      expect(source, entry).toBe(pkg.exports[entry]!.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts"));
      expect(existsSync(join(root, source)), source).toBe(true);
    }
  });

  it("leaves out the CLI, which no entry point imports (it runs from the npm package)", () => {
    expect(deno.publish.exclude).toContain("src/cli/");
    const imports = (dir: string): string[] => readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts") && !f.startsWith("cli/") && !/\.test\.ts$|(^|\/)_test-/.test(f))
      .filter((f) => /from "(?:\.\.\/)+cli\/|import\("(?:\.\.\/)+cli\//.test(read(join(dir, f))));
    expect(imports("src")).toEqual([]);
  });

  it("is checked by CI's dry run with slow types refused and warnings fatal", () => {
    const ci = read(".ci/run");
    const line = ci.split("\n").find((l) => /deno publish --dry-run/.test(l) && !l.trimStart().startsWith("#"));
    expect(line).toBeDefined();
    expect(line).not.toContain("--allow-slow-types");
    expect(ci).toMatch(/grep -qE '\^\(warning\|error\)' <<<"\$publish_log"/);
  });

  it("is published nowhere with --allow-slow-types (scripts, tasks, README, docs)", () => {
    const places = { scripts: JSON.stringify(pkg.scripts), tasks: JSON.stringify(deno.tasks), "README.md": read("README.md"), ...Object.fromEntries(readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => [f, read(join("docs", f))])) };
    for (const [where, text] of Object.entries(places)) expect(text, where).not.toContain("--allow-slow-types");
  });
});
