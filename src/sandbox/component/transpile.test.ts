// The load-time transpile (jco 1.17.0 in-process): any component becomes runnable, the committed glue fixtures are
// what it makes of the example components, and a glue store is a cache that is never trusted more than jco.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { C_WORDCOUNT_CODE, C_WORDCOUNT_GLUE, TEXT_STATS_CODE, TEXT_STATS_GLUE } from "./_test-components.ts";
import { encodeGlueDocument, JCO_VERSION, parseGlueDocument } from "./glue.ts";
import { clearLoadedComponents, glueStoreKey, loadComponent as loadWith } from "./load.ts";
import type { ComponentGlueStore } from "./load.ts";
import { ComponentRunner } from "./runner.ts";
import { transpileComponent } from "./transpile.ts";
import { sha256Hex } from "../../canonical/sha256.ts";

// The glue store an environment hands the engine (`EngineEnvironment.componentGlue`), as each load below is given it.
let current: ComponentGlueStore | null = null;
const setComponentGlueStore = (s: ComponentGlueStore | null): void => void (current = s);
const loadComponent = (code: Uint8Array) => loadWith(code, current);
import { invokeOnce, newWorkspace } from "../../../conformance/lib/tool-harness.ts";

afterEach(() => {
  setComponentGlueStore(null);
  clearLoadedComponents();
});

/** A store in memory that records what it was asked. */
function memoryStore() {
  const entries = new Map<string, Uint8Array>();
  const log: string[] = [];
  const store: ComponentGlueStore = {
    get: (key) => (log.push(`get ${key}`), Promise.resolve(entries.get(key) ?? null)),
    set: (key, bytes) => (log.push(`set ${key}`), entries.set(key, bytes), Promise.resolve()),
  };
  return { store, entries, log };
}

describe("transpileComponent", () => {
  it("pins the jco release the glue format depends on", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../node_modules/@bytecodealliance/jco/package.json", import.meta.url), "utf8")) as { version: string };
    const ours = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { dependencies: Record<string, string> };
    expect(pkg.version).toBe(JCO_VERSION);
    expect(ours.dependencies["@bytecodealliance/jco"]).toBe(JCO_VERSION);
  });

  it("makes the committed glue fixture of the C component, byte for byte", async () => {
    const glue = await transpileComponent(C_WORDCOUNT_CODE);
    expect(glue.componentSha256).toBe(sha256Hex(C_WORDCOUNT_CODE));
    expect(encodeGlueDocument(glue)).toEqual(C_WORDCOUNT_GLUE);
  });

  it("makes the committed glue fixture of the componentize-js component, byte for byte", async () => {
    expect(encodeGlueDocument(await transpileComponent(TEXT_STATS_CODE))).toEqual(TEXT_STATS_GLUE);
  }, 120_000);

  it("refuses bytes that are not a component, and a core module", async () => {
    await expect(transpileComponent(new Uint8Array([1, 2, 3]))).rejects.toMatchObject({ code: "PACK_MALFORMED" });
    await expect(transpileComponent(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))).rejects.toThrow(/not a WebAssembly component/);
    const broken = C_WORDCOUNT_CODE.slice(0, 200);
    await expect(transpileComponent(broken)).rejects.toMatchObject({ code: "PACK_MALFORMED" });
  });
});

describe("loadComponent", () => {
  it("runs a component no one registered: transpiled on first use, then from memory", async () => {
    const runner = new ComponentRunner();
    const spec = { code: C_WORDCOUNT_CODE, input: { text: "one two three" }, seed: "7", runner: () => runner };
    const { outcome } = await invokeOnce(newWorkspace(), spec);
    if (outcome.status !== "success") throw outcome.error;
    expect(outcome.output).toMatchObject({ words: 3 });
    expect(outcome.module?.sha256).toBe(sha256Hex(C_WORDCOUNT_CODE));
    expect(outcome.module?.metered).toMatch(/^[0-9a-f]{64}$/);
    expect(await loadComponent(C_WORDCOUNT_CODE)).toBe(await loadComponent(C_WORDCOUNT_CODE));
  });

  it("keeps the glue in the store under its content address and uses an honest entry", async () => {
    const { store, entries, log } = memoryStore();
    setComponentGlueStore(store);
    const first = await loadComponent(C_WORDCOUNT_CODE);
    const key = glueStoreKey(sha256Hex(C_WORDCOUNT_CODE));
    expect(key).toBe(`glue-${JCO_VERSION}-${sha256Hex(C_WORDCOUNT_CODE)}`);
    expect(log).toEqual([`get ${key}`, `set ${key}`]);
    expect(parseGlueDocument(entries.get(key)!)).toEqual(parseGlueDocument(C_WORDCOUNT_GLUE));
    clearLoadedComponents();
    const second = await loadComponent(C_WORDCOUNT_CODE);
    expect(log).toEqual([`get ${key}`, `set ${key}`, `get ${key}`]);
    expect(second.glueSha256).toBe(first.glueSha256);
  });

  it("never evaluates a stored entry that fails: damaged, for another component, or with refused glue", async () => {
    const { store, entries, log } = memoryStore();
    setComponentGlueStore(store);
    const key = glueStoreKey(sha256Hex(C_WORDCOUNT_CODE));
    const honest = parseGlueDocument(C_WORDCOUNT_GLUE);
    const g = globalThis as Record<string, unknown>;
    for (const planted of [
      new TextEncoder().encode("not json"),
      encodeGlueDocument({ ...honest, componentSha256: "0".repeat(64) }),
      encodeGlueDocument({ ...honest, source: honest.source.replace("export function instantiate", "globalThis.pwned = 1;\nexport function instantiate") }),
      encodeGlueDocument({ ...honest, source: honest.source.replace("const _debugLog", "process.exit(3);\n  const _debugLog") }),
    ]) {
      entries.set(key, planted);
      log.length = 0;
      clearLoadedComponents();
      const component = await loadComponent(C_WORDCOUNT_CODE);
      expect(log).toEqual([`get ${key}`, `set ${key}`]); // transpiled again and overwritten
      expect(entries.get(key)).toEqual(encodeGlueDocument(honest));
      expect(component.componentSha256).toBe(sha256Hex(C_WORDCOUNT_CODE));
      expect(g["pwned"]).toBeUndefined();
    }
  });
});
