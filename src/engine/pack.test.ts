// Loading a pack: reach.json checks, specVersion, tools present and loadable, workspace seed files, the lock.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { readFileSync } from "node:fs";
import { jsPack, packFromDisk, planOf, runFiles } from "../../tests/support/pack.ts";
import { checkSpecVersion, loadPack } from "./pack.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
// deno-lint-ignore no-explicit-any
type PackDoc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const base = () => jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "a", tool: "echo" }]) });
function edit(files: Map<string, Uint8Array>, change: (doc: PackDoc) => void): Map<string, Uint8Array> {
  const doc = JSON.parse(dec.decode(files.get("reach.json")!));
  change(doc);
  const out = new Map(files);
  out.set("reach.json", enc.encode(JSON.stringify(doc)));
  return out;
}
async function codeOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ReachError) return err.code;
    throw err;
  }
  return "loaded";
}

describe("loadPack", () => {
  it("loads the example packs and locks the manifest (frozen, hashed)", async () => {
    for (const name of ["hello", "notes", "http"]) {
      const loaded = await loadPack(packFromDisk(name));
      expect(loaded.manifestHash).toMatch(/^[0-9a-f]{64}$/);
      expect(Object.isFrozen(loaded.pack.manifest.capabilities.tools)).toBe(true);
      expect(() => {
        (loaded.pack.manifest.policies as { maxToolCalls: number }).maxToolCalls = 1e9;
      }).toThrow(TypeError);
    }
    expect((await loadPack(packFromDisk("notes"))).workspaceFiles["data"]).toHaveProperty("input.txt");
  });

  it("specVersion: another major is PROTO_VERSION_MISMATCH, a newer minor loads with a warning", async () => {
    expect(await codeOf(() => loadPack(edit(base(), (d) => (d.specVersion = "2.0.0"))))).toBe("PROTO_VERSION_MISMATCH");
    expect(await codeOf(() => loadPack(edit(base(), (d) => (d.specVersion = "0.9.0"))))).toBe("PROTO_VERSION_MISMATCH");
    expect(await codeOf(() => loadPack(edit(base(), (d) => (d.specVersion = "one"))))).toBe("PROTO_VERSION_MISMATCH");
    const newer = await loadPack(edit(base(), (d) => (d.specVersion = "1.7.0")));
    expect(newer.warnings[0]).toMatch(/newer/);
    expect(checkSpecVersion("1.0.9")).toBeNull();
  });

  const refusals: [string, () => Map<string, Uint8Array>, string][] = [
    ["no reach.json", () => new Map(), "PACK_NOT_FOUND"],
    ["reach.json that is not JSON", () => new Map([["reach.json", enc.encode("{")]]), "PACK_MALFORMED"],
    ["reach.json that is an array", () => new Map([["reach.json", enc.encode("[]")]]), "PACK_MALFORMED"],
    ["an unknown field", () => edit(base(), (d) => (d.extra = 1)), "PACK_INVALID_MANIFEST"],
    ["a tool with code but undeclared", () => edit(base(), (d) => (d.tools.ghost = { kind: "js", module: "tools/echo.js" })), "PACK_INVALID_MANIFEST"],
    ["a declared tool without code", () => edit(base(), (d) => d.manifest.capabilities.tools.push({ name: "missing" })), "EXEC_TOOL_NOT_FOUND"],
    ["a module that is not in the pack", () => edit(base(), (d) => (d.tools.echo.module = "tools/nope.js")), "EXEC_TOOL_NOT_FOUND"],
    ["a wasm tool that is not WebAssembly", () => edit(base(), (d) => (d.tools.echo.kind = "wasm")), "PACK_MALFORMED"],
    ["a component tool that is not a component", () => edit(base(), (d) => (d.tools.echo.kind = "component")), "PACK_MALFORMED"],
    ["an inputSchema that does not compile", () => edit(base(), (d) => (d.tools.echo.inputSchema = { type: 12 })), "PACK_INVALID_MANIFEST"],
    ["a missing entrypoint", () => edit(base(), (d) => (d.entrypoint = "other.json")), "PACK_MALFORMED"],
    ["an entrypoint that is neither .json nor .js", () => edit(base(), (d) => (d.entrypoint = "reach.json.txt")), "PACK_MALFORMED"],
    ["a module path with ..", () => edit(base(), (d) => (d.tools.echo.module = "../echo.js")), "PACK_INVALID_MANIFEST"],
    ["workspace files outside declared roots", () => new Map([...base(), ["workspace/secret/a.txt", enc.encode("x")]]), "PACK_MALFORMED"],
    ["a malformed resource URI", () => edit(base(), (d) => (d.manifest.capabilities.resources = [{ uri: "workspace://x/", access: "read" }])), "PACK_INVALID_MANIFEST"],
  ];
  for (const [name, files, code] of refusals) {
    it(`refuses ${name} with ${code}`, async () => {
      expect(await codeOf(() => loadPack(files()))).toBe(code);
    });
  }

  describe("component tools", () => {
    const component = new Uint8Array(readFileSync(new URL("../../wasm-tools/c-component/build/wordcount.component.wasm", import.meta.url)));
    const withComponent = () => {
      const files = edit(base(), (d) => Object.assign(d.tools.echo, { kind: "component", module: "tools/echo.wasm" }));
      files.set("tools/echo.wasm", component);
      return files;
    };

    it("loads and runs any component: its glue is made with jco when the pack loads", async () => {
      const record = await runFiles(withComponent(), {});
      expect(record.status).toBe("FAILED"); // the plan passes {} and the tool wants {"text"}: the tool's own err
      expect(record.error?.code).toBe("EXEC_TOOL_FAILED");
      const files = withComponent();
      files.set("plan.json", enc.encode(JSON.stringify(planOf([{ id: "a", tool: "echo", arguments: { text: "a b c" } }]))));
      const ok = await runFiles(files, {});
      expect(ok.status).toBe("COMPLETED");
      expect(ok.outputs).toMatchObject({ a: { words: 3 } });
    });

    it("refuses a component whose glue cannot run here as PACK_MALFORMED, naming the tool and what is missing", async () => {
      const refused = new ReachError("EXEC_SANDBOX_VIOLATION", "component imports wasi:sockets/tcp, which reach-wasm does not supply", {
        details: { missingImports: ["wasi:sockets/tcp"] },
      });
      const err = (await loadPack(withComponent(), { prepareComponent: () => Promise.reject(refused) }).catch((e: unknown) => e)) as ReachError;
      expect(err).toBeInstanceOf(ReachError);
      expect(err.code).toBe("PACK_MALFORMED");
      expect(err.message).toMatch(/tool "echo".*wasi:sockets\/tcp/);
      expect(err.details).toMatchObject({ tool: "echo", missingImports: ["wasi:sockets/tcp"] });
    });
  });
});
