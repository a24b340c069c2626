// Every function and class of the library face (reach-wasm and reach-wasm/node) documents itself with an @example
// that is real, fenced TypeScript; `deno task check` type-checks those examples (`deno check --doc` over the files
// listed in deno.json), so an example that no longer compiles fails CI.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const entries = ["src/mod.ts", "src/platform/node.ts"];
const checked = (JSON.parse(readFileSync(join(root, "deno.json"), "utf8")) as { tasks: { check: string } }).tasks.check;

/** Value exports of an entry (`export { a, b as c } from "./x.ts"`), with the file each comes from. */
function valueExports(entry: string): { name: string; file: string }[] {
  const text = readFileSync(join(root, entry), "utf8");
  const out: { name: string; file: string }[] = [];
  for (const m of text.matchAll(/^export \{([^}]*)\} from "([^"]+)";/gm)) {
    const from = join(entry, "..", m[2]!);
    for (const raw of m[1]!.split(",")) {
      const name = raw.trim().split(/\s+as\s+/)[0]!;
      if (name !== "") out.push({ name, file: from });
    }
  }
  return out;
}

/** Follow re-export files (host-api.ts) to the file that declares `name`. */
function declaring(name: string, file: string): string | null {
  const text = readFileSync(join(root, file), "utf8");
  if (new RegExp(`^export (async )?(function|class|const) ${name}\\b`, "m").test(text)) return file;
  for (const m of text.matchAll(/^export \{([^}]*)\} from "([^"]+)";/gm)) {
    if (m[1]!.split(",").map((s) => s.trim()).includes(name)) return declaring(name, join(file, "..", m[2]!));
  }
  return null;
}

describe("the library's documentation", () => {
  const all = entries.flatMap(valueExports);
  const documented = all.filter((e) => !/^[A-Z][A-Z0-9_]+$/.test(e.name)); // CONSTANTS document themselves by their value
  it.each(documented.map((e) => [e.name, e.file]))("%s has a fenced @example that deno check --doc type-checks", (name, file) => {
    const at = declaring(name, file);
    expect(at, `${name} is not declared under ${file}`).not.toBeNull();
    const text = readFileSync(join(root, at!), "utf8");
    const decl = new RegExp(`^export (async )?(function|class|const) ${name}\\b`, "m").exec(text)!;
    if (decl[2] === "const") return; // a constant documents itself by its value
    const doc = text.slice(text.lastIndexOf("/**", decl.index), decl.index);
    expect(doc, `${name}: no @example`).toMatch(/@example\s*\n\s*\*\s*```ts/);
    expect(checked, `${at} is not in deno.json's check --doc list`).toContain(at);
  });
});
