import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ReachError } from "./errors.ts";
import { PackSchema } from "./pack.ts";
import type { PackInput } from "./pack.ts";
import { parseOrThrow } from "./parse.ts";

const example = (name: string): PackInput =>
  JSON.parse(readFileSync(new URL(`../../conformance/examples/pack/${name}.json`, import.meta.url), "utf8")) as PackInput;
const messages = (v: unknown): string[] => {
  const r = PackSchema().safeParse(v);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("PackSchema", () => {
  it("fills upstream defaults (seed 003 §4.1; upstream pack.schema.json)", () => {
    const pack = PackSchema().parse(example("minimal"));
    expect(pack.manifest.policies).toEqual({
      maxExecutionTime: 300000,
      maxToolCalls: 100,
      allowedHosts: [],
      sandbox: { enabled: true, network: "restricted", filesystem: "isolated" },
    });
    expect(pack.manifest.capabilities).toEqual({ tools: [], resources: [], permissions: [] });
    expect(pack.tools).toEqual({});
    expect(pack.run).toBeUndefined();
  });

  it("rejects an unknown field and names the allowed ones", () => {
    const m = messages({ ...example("minimal"), entrypiont: "x.js" });
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(/reach\.json: unknown field "entrypiont"; remove it or use one of: .*entrypoint/);
  });

  it("rejects tool code for a tool that is not declared (seed 003 §4.1)", () => {
    const pack = example("hello");
    pack.tools = { ...pack.tools, "net.fetch": { kind: "js", module: "tools/fetch.js" } };
    expect(messages(pack)).toEqual([
      'tools.net.fetch: tool "net.fetch" has code but is not declared; add {"name": "net.fetch"} to manifest.capabilities.tools',
    ]);
  });

  it.each([
    ["/abs/main.js", false],
    ["../main.js", false],
    ["tools/../../x.wasm", false],
    ["tools\\x.wasm", false],
    ["tools//x.wasm", false],
    ["", false],
    ["main.js", true],
    ["./main.js", true],
    ["tools/x.y.wasm", true],
  ])("entrypoint %j accepted: %s", (entrypoint, ok) => {
    expect(PackSchema().safeParse({ ...example("minimal"), entrypoint }).success).toBe(ok);
  });

  it.each([
    ["workspace:///data/", true],
    ["memory://notes/", true],
    ["https://api.example.com/", true],
    ["data/", false],
    ["/data/", false],
  ])("resource uri %j accepted: %s", (uri, ok) => {
    const pack = example("minimal");
    pack.manifest.capabilities = { resources: [{ uri, access: "read" }] };
    expect(PackSchema().safeParse(pack).success).toBe(ok);
  });

  it("rejects duplicate permissions, run.maxSteps > 100, maxExecutionTime < 1000", () => {
    const a = example("minimal");
    a.manifest.capabilities = { permissions: ["network", "network"] };
    expect(PackSchema().safeParse(a).success).toBe(false);
    expect(PackSchema().safeParse({ ...example("minimal"), run: { maxSteps: 101 } }).success).toBe(false);
    const b = example("minimal");
    b.manifest.policies = { maxExecutionTime: 999 };
    expect(PackSchema().safeParse(b).success).toBe(false);
  });

  it("parseOrThrow gives a ReachError listing paths", () => {
    let caught: unknown;
    try {
      parseOrThrow(PackSchema(), { ...example("minimal"), id: "bad id", version: "1" }, "PACK_INVALID_MANIFEST", "reach.json");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ReachError);
    const err = caught as ReachError;
    expect(err.code).toBe("PACK_INVALID_MANIFEST");
    expect(err.message).toMatch(/^reach\.json is invalid:\n- at id: expected 1-128 characters/);
    expect(err.message).toMatch(/- at version: expected a version MAJOR\.MINOR\.PATCH/);
    expect(err.details.issues).toHaveLength(2);
  });

  it("names a refused record key and what a name must be (a tool called ../evil)", () => {
    const minimal = example("minimal");
    const tool = { kind: "wasm", module: "tools/echo.wasm" };
    let caught: unknown;
    try {
      parseOrThrow(PackSchema(), { ...minimal, tools: { "../evil": tool } }, "PACK_INVALID_MANIFEST", "reach.json");
    } catch (e) {
      caught = e;
    }
    const err = caught as ReachError;
    expect(err.code).toBe("PACK_INVALID_MANIFEST");
    expect(err.message).toContain(`- at tools["../evil"]: the name "../evil" is not allowed: expected a tool name such as fs.read`);
    expect(err.message).not.toMatch(/Invalid key in record/);
  });

  it("says a required member is missing, not \"received undefined\"", () => {
    const { id: _, ...noId } = example("minimal");
    const err = (() => {
      try {
        parseOrThrow(PackSchema(), noId, "PACK_INVALID_MANIFEST", "reach.json");
      } catch (e) {
        return e as ReachError;
      }
      return null;
    })();
    expect(err?.message).toMatch(/^reach\.json is invalid:\n- at id: missing: add it \(expected string\)$/);
  });
});

describe("allowedHosts patterns", () => {
  it("refuses a port in a host pattern (ports are not part of host matching, src/policy/hosts.ts)", async () => {
    const { PoliciesSchema } = await import("./pack.ts");
    expect(PoliciesSchema().safeParse({ allowedHosts: ["api.example.com:8080"] }).success).toBe(false);
    expect(PoliciesSchema().safeParse({ allowedHosts: ["api.example.com", "*.example.com"] }).success).toBe(true);
  });
});
