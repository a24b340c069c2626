// The house's arrows (ARCHITECTURE "Proposed layout", CONVENTIONS "Layout and boundaries"): every face is a thin
// room over the engine call. Static imports are read from the source; a new arrow that breaks a rule fails here.
//  - src/cli/ imports only src/engine, src/platform, src/protocol and the faces it starts (federation, service,
//    report, mcp, conformance) — never the layers below the engine — and no command module imports another;
//  - src/capsule/ imports neither src/trust/ nor src/record/ (it is the archive codec and the capsule layout only);
//  - the engine and everything below it never import a face, the CLI or the platform;
//  - no face imports another face.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../src/", import.meta.url).pathname;
const FACES = ["federation", "service", "report", "mcp", "conformance"];
const BELOW = ["sandbox", "record", "ledger", "capsule", "trust", "canonical", "determinism", "policy"];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") && !/\/_test-[^/]*\.ts$/.test(p) ? [p] : [];
  });
}

/** Static imports (`import … from "x"`, `export … from "x"`) resolved to src-relative paths. */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gm)) {
    out.push(relative(src, join(file, "..", m[1]!)));
  }
  return out;
}

const folderOf = (p: string): string => p.split("/")[0]!;
const all = files(src).map((f) => ({ file: relative(src, f), imports: imports(f) }));

describe("the house's arrows", () => {
  it("src/cli/ imports only the engine, the platform, the protocol and the faces it starts", () => {
    const bad = all.filter((f) => f.file.startsWith("cli/")).flatMap((f) => f.imports.filter((i) => BELOW.includes(folderOf(i))).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });

  it("no command module imports another command module (cli.ts dispatches them lazily)", () => {
    const handlers = readFileSync(join(src, "cli/cli.ts"), "utf8");
    const commands = new Set([...handlers.matchAll(/import\("\.\/([a-z-]+\.ts)"\)/g)].map((m) => `cli/${m[1]!}`));
    expect(commands.size).toBeGreaterThan(10);
    const bad = all.filter((f) => commands.has(f.file)).flatMap((f) => f.imports.filter((i) => commands.has(i)).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });

  it("src/capsule/ imports neither src/trust/ nor src/record/", () => {
    const bad = all.filter((f) => f.file.startsWith("capsule/")).flatMap((f) => f.imports.filter((i) => ["trust", "record"].includes(folderOf(i))).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });

  it("the engine and the layers below it never import a face, the CLI or the platform", () => {
    const inner = ["engine", ...BELOW, "protocol"];
    const bad = all.filter((f) => inner.includes(folderOf(f.file))).flatMap((f) => f.imports.filter((i) => [...FACES, "cli", "platform"].includes(folderOf(i))).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });

  it("no face imports another face", () => {
    const bad = all.filter((f) => FACES.includes(folderOf(f.file))).flatMap((f) => f.imports.filter((i) => FACES.includes(folderOf(i)) && folderOf(i) !== folderOf(f.file)).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });
});
