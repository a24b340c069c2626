// The glue check and evaluation (`_glue-check.ts`, `glue.ts`): what jco's output may touch in our realm.
import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { C_WORDCOUNT_GLUE, TEXT_STATS_GLUE } from "./_test-components.ts";
import { checkGlue, GLUE_GLOBALS, GLUE_UNBOUND } from "./_glue-check.ts";
import { encodeGlueDocument, glueToComponent, parseGlueDocument, SUPPLIED_INTERFACES } from "./glue.ts";
import type { ComponentGlue } from "./glue.ts";

const C_GLUE = parseGlueDocument(C_WORDCOUNT_GLUE);
const HEAD = "export function instantiate(getCoreModule, imports, instantiateCore = WebAssembly.instantiate) {\n";
const glue = (body: string): string => `"use jco";\n${HEAD}${body}\n}\n`;
const refusal = (source: string): ReachError => {
  try {
    checkGlue(source, SUPPLIED_INTERFACES);
  } catch (err) {
    if (err instanceof ReachError) return err;
    throw err;
  }
  throw new Error("expected the glue to be refused");
};

describe("checkGlue", () => {
  it("accepts the glue of both example components, with only allowed globals and supplied imports", () => {
    for (const bytes of [C_WORDCOUNT_GLUE, TEXT_STATS_GLUE]) {
      const facts = checkGlue(parseGlueDocument(bytes).source, SUPPLIED_INTERFACES);
      expect(facts.importNames.length).toBeGreaterThan(0);
      expect(facts.importNames.every((i) => SUPPLIED_INTERFACES.has(i))).toBe(true);
      expect(facts.globals.every((g) => GLUE_GLOBALS.has(g) || GLUE_UNBOUND.has(g))).toBe(true);
      expect(facts.globals).toContain("WebAssembly");
      expect(facts.globals).not.toContain("process");
    }
  });

  it.each([
    ["a static import", `import fs from "node:fs";\n${glue("return {};")}`, /ImportDeclaration/],
    ["a dynamic import", glue(`return import("node:fs");`), /dynamic import/],
    ["another export", `${glue("")}export const x = 1;\n`, /besides/],
    ["process", glue("process.exit(1);"), /process/],
    ["globalThis", glue("return globalThis.fetch;"), /globalThis/],
    ["eval", glue(`return eval("1");`), /eval/],
    ["Function", glue(`return Function("return 1")();`), /Function/],
    ["require", glue(`return require("fs");`), /require/],
    ["a constructor read", glue(`return [].map.constructor("return 1")();`), /constructor/],
    ["a computed constructor read", glue(`return [].map["constructor"];`), /constructor/],
    ["__proto__", glue(`return { __proto__: null };`), /__proto__/],
    ["imports by a computed name", glue(`const k = "wasi:cli/stdin"; return imports[k];`), /imports/],
    ["imports passed on", glue(`return Object.keys(imports);`), /imports/],
    ["imports redeclared", glue(`{ const imports = {}; return imports; }`), /redeclares/],
    ["an unsupplied interface", glue(`const { connect } = imports['wasi:sockets/tcp'];`), /wasi:sockets\/tcp/],
    ["a global hidden behind a block-scoped name", glue(`{ let process = 1; } return process;`), /process/],
    ["a syntax error", glue(`return (`), /does not parse/],
    ["wrong parameters", `export function instantiate(a, b, c) { return {}; }\n`, /instantiate\(getCoreModule/],
  ])("refuses %s", (_name, source, message) => {
    const err = refusal(source);
    expect(err.code).toBe("EXEC_SANDBOX_VIOLATION");
    expect(err.details["reason"]).toBe("glue");
    expect(err.message).toMatch(message);
  });

  it("names the missing interfaces and globals in the details", () => {
    expect(refusal(glue(`const { x } = imports['wasi:http/types'];`)).details["missingImports"]).toEqual(["wasi:http/types"]);
    expect(refusal(glue(`return [Deno, Bun];`)).details["globals"]).toEqual(["Bun", "Deno"]);
  });

  it("resolves scopes: parameters, closures, classes, catch, destructuring and hoisted vars are not globals", () => {
    const facts = checkGlue(
      glue(`
        class A { m(x) { return x; } static s = 1; }
        const f = function g(a, { b, c: [d] = [] }, ...rest) { return g && a + b + d + rest.length + arguments.length; };
        try { f(); } catch ({ message }) { message; }
        for (const [k, v] of new Map()) { k; v; }
        label: for (var i = 0; i < 1; i++) { break label; }
        let y; [y] = [i];
        return { invoke: (input) => new A().m(input) + y };`),
      SUPPLIED_INTERFACES,
    );
    expect(facts.globals).toEqual(["Map", "WebAssembly"]);
  });
});

describe("glueToComponent", () => {
  it("evaluates checked glue into a runnable component with the glue's digest", () => {
    const component = glueToComponent(C_GLUE);
    expect(component.componentSha256).toBe(C_GLUE.componentSha256);
    expect(component.glueSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(component.importNames).toEqual(["reach:tool/host"]);
    expect(typeof component.instantiate).toBe("function");
  });

  it("binds the names jco leaves undefined, the timers and fetch to stand-ins, never to real globals", async () => {
    const g = globalThis as Record<string, unknown>;
    g["memory"] = "the real global";
    try {
      const source = glue(`return { memory: typeof memory, timer: (() => { try { setTimeout(() => {}, 0); return "ran"; } catch (e) { return e.code; } })(), quiet: console.log("x") };`);
      const probe: ComponentGlue = { ...C_GLUE, source };
      const out = await glueToComponent(probe).instantiate(() => new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])), {});
      expect(out).toEqual({ memory: "undefined", timer: "EXEC_SANDBOX_VIOLATION", quiet: undefined });
    } finally {
      delete g["memory"];
    }
  });

  it("refuses a malformed document and does not evaluate refused glue", () => {
    expect(() => parseGlueDocument(new TextEncoder().encode("{}"))).toThrow(/not a component glue document/);
    const before = (globalThis as Record<string, unknown>)["pwned"];
    const evil: ComponentGlue = { ...C_GLUE, source: `globalThis.pwned = 1;\n${glue("return {};")}` };
    expect(() => glueToComponent(evil)).toThrow(/besides|globalThis/);
    expect((globalThis as Record<string, unknown>)["pwned"]).toBe(before);
  });

  it("round-trips through its encoding", () => {
    expect(parseGlueDocument(encodeGlueDocument(C_GLUE))).toEqual(C_GLUE);
  });
});
