// The component glue cache decides what JavaScript runs in our realm, so it is attacked here as an attacker with
// write access to it would: every planted entry must be transpiled again, never evaluated.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { C_WORDCOUNT_CODE, C_WORDCOUNT_GLUE } from "../sandbox/component/_test-components.ts";
import { encodeGlueDocument, parseGlueDocument } from "../sandbox/component/glue.ts";
import { clearLoadedComponents, loadComponent as loadWith } from "../sandbox/component/load.ts";
import type { ComponentGlueStore } from "../sandbox/component/load.ts";
import { diskComponentStore } from "./component-store.ts";

let base: string;
let dir: string;
const warnings: string[] = [];

// The store an environment hands the engine (`EngineEnvironment.componentGlue`), as each load below is given it.
let current: ComponentGlueStore | null = null;
const setComponentGlueStore = (s: ComponentGlueStore | null): void => void (current = s);
const loadComponent = (code: Uint8Array) => loadWith(code, current);

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "reach-components-"));
  chmodSync(base, 0o700);
  dir = join(base, "components");
  warnings.length = 0;
  clearLoadedComponents();
});
afterEach(() => {
  setComponentGlueStore(null);
  clearLoadedComponents();
  rmSync(base, { recursive: true, force: true });
});

describe("the component cache on disk", () => {
  it("keeps glue between processes, authenticated, and an honest entry is used without jco", async () => {
    setComponentGlueStore(diskComponentStore(dir, (w) => warnings.push(w)));
    const first = await loadComponent(C_WORDCOUNT_CODE);
    const [entry] = readdirSync(dir);
    expect(entry).toMatch(/^glue-1\.17\.0-[0-9a-f]{64}\.json$/);
    const raw = readFileSync(join(dir, entry!));
    expect(new TextDecoder().decode(raw.subarray(0, 8))).toBe("reachgl1");
    expect(readdirSync(base).sort()).toEqual(["components", "components.key"]);
    clearLoadedComponents();
    expect((await loadComponent(C_WORDCOUNT_CODE)).glueSha256).toBe(first.glueSha256);
    expect(warnings).toEqual([]);
  });

  it("a planted entry (no MAC, a forged MAC, another entry's MAC) is transpiled again and overwritten", async () => {
    setComponentGlueStore(diskComponentStore(dir));
    const honest = await loadComponent(C_WORDCOUNT_CODE);
    const [entry] = readdirSync(dir);
    const path = join(dir, entry!);
    const good = readFileSync(path);
    const doc = parseGlueDocument(C_WORDCOUNT_GLUE);
    const evil = encodeGlueDocument({ ...doc, source: doc.source.replace("const _debugLog", "const stolen = 1;\n  const _debugLog") });
    for (const planted of [evil, new Uint8Array([...new TextEncoder().encode("reachgl1"), ...new Uint8Array(32), ...evil]), new Uint8Array([...good.subarray(0, 40), ...evil])]) {
      writeFileSync(path, planted);
      clearLoadedComponents();
      const got = await loadComponent(C_WORDCOUNT_CODE);
      expect(got.glueSha256).toBe(honest.glueSha256);
      expect(readFileSync(path)).toEqual(good);
    }
  });

  it("a directory writable by others is not used at all", async () => {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    setComponentGlueStore(diskComponentStore(dir, (w) => warnings.push(w)));
    await loadComponent(C_WORDCOUNT_CODE);
    expect(warnings.join("")).toMatch(/component cache .* writable by its group or others/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
