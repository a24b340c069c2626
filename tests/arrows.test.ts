// The house's arrows (ARCHITECTURE.md "Layout", CONVENTIONS "Layout and boundaries"): every face is a thin
// room over the engine call. Static imports are read from the source; a new arrow that breaks a rule fails here.
//  - src/cli/ imports only src/engine, src/platform, src/protocol and the faces it starts (federation, service,
//    report, mcp, conformance) — never the layers below the engine — and no command module imports another;
//  - src/capsule/ imports neither src/trust/ nor src/record/ (it is the archive codec and the capsule layout only);
//  - the engine and everything below it never import a face, the CLI, the host or the platform;
//  - the platform (runtime adapters) imports no engine, host, face or CLI;
//  - a face imports no platform: the ports it needs are declared by the face and implemented by the platform, handed
//    in by the CLI; src/host/ and src/cli/ are the only rooms that join platform and engine;
//  - the tests of the engine, the rooms below it and the faces import no platform either (they take it from
//    tests/support/platform.ts);
//  - no face imports another face;
//  - nothing outside the tests imports a test runner: no source file, and no script or anything a script imports.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../src/", import.meta.url).pathname;
const FACES = ["federation", "service", "report", "mcp", "conformance"];
const BELOW = ["sandbox", "record", "ledger", "capsule", "trust", "canonical", "determinism", "policy"];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

const isTest = (p: string): boolean => p.endsWith(".test.ts") || /\/_test-[^/]*\.ts$/.test(p);
const files = (dir: string): string[] => tsFiles(dir).filter((p) => !isTest(p));

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
const withTests = tsFiles(src).map((f) => ({ file: relative(src, f), imports: imports(f) }));
const INNER = ["engine", ...BELOW, "protocol"];

/** `from → to` for each import of a file in `rooms` into a folder in `banned`. */
function crossings(list: typeof all, rooms: string[], banned: string[]): string[] {
  return list.filter((f) => rooms.includes(folderOf(f.file))).flatMap((f) => f.imports.filter((i) => banned.includes(folderOf(i))).map((i) => `${f.file} → ${i}`));
}

/** Every file a script reaches through relative imports (static and `import("…")`), the scripts included. */
function reachedFromScripts(): string[] {
  const scripts = new URL("../scripts/", import.meta.url).pathname;
  const todo = readdirSync(scripts).filter((n) => /\.(ts|mjs)$/.test(n)).map((n) => join(scripts, n));
  todo.push(...tsFiles(join(scripts, "bench")));
  const seen = new Set<string>();
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)"(\.{1,2}\/[^"]+\.(?:ts|mjs|js))"/g)) todo.push(join(file, "..", m[1]!));
  }
  return [...seen];
}

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

  it("the engine and the layers below it never import a face, the CLI, the host or the platform", () => {
    expect(crossings(all, INNER, [...FACES, "cli", "host", "platform"])).toEqual([]);
    // their tests may drive a face end to end, but take the platform from tests/support/platform.ts
    expect(crossings(withTests, INNER, ["host", "platform"])).toEqual([]);
  });

  it("the platform adapts the runtime: it imports no engine, host, face or CLI", () => {
    expect(crossings(all, ["platform"], ["engine", "host", "cli", ...FACES])).toEqual([]);
  });

  it("a face imports no platform (its tests neither): the platform is handed in", () => {
    expect(crossings(withTests, FACES, ["platform"])).toEqual([]);
  });

  it("only the CLI and the host join platform and engine; nothing but the CLI imports the host", () => {
    const both = all.filter((f) => f.imports.some((i) => folderOf(i) === "platform") && f.imports.some((i) => folderOf(i) === "engine"));
    expect(both.map((f) => folderOf(f.file)).filter((r) => r !== "cli" && r !== "host")).toEqual([]);
    expect(crossings(all, [...INNER, ...FACES, "platform"], ["host"])).toEqual([]);
  });

  it("nothing outside the tests imports a test runner (no source file; no script, nor anything a script imports)", () => {
    const runner = /from\s+"(vitest|@vitest\/[^"]*)"/;
    const bad = [...all.map((f) => join(src, f.file)), ...reachedFromScripts()].filter((f) => runner.test(readFileSync(f, "utf8")));
    expect(bad.map((f) => relative(src, f))).toEqual([]);
  });

  it("an import from another folder names that folder's mod.ts (the platform's adapters are taken one by one)", () => {
    // scripts/route-through-mod.mjs routes them (and says why the platform is not routed)
    const inFolder = (p: string): boolean => p.includes("/");
    const bad = all.filter((f) => inFolder(f.file)).flatMap((f) =>
      f.imports.filter((i) => inFolder(i) && folderOf(i) !== folderOf(f.file) && folderOf(i) !== "platform" && !i.endsWith("/mod.ts")).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });

  it("no face imports another face", () => {
    const bad = all.filter((f) => FACES.includes(folderOf(f.file))).flatMap((f) => f.imports.filter((i) => FACES.includes(folderOf(i)) && folderOf(i) !== folderOf(f.file)).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });
});
