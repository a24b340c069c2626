// Dependency resolution (seed 003 §4.1): offline, against packs vendored under deps/<id>/; everything else is
// PACK_DEPENDENCY_UNRESOLVED saying how to vendor it, or a warning for an optional dependency.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { packDigest } from "../trust/pack-signature.ts";
import { jsPack, planOf } from "../../tests/support/pack.ts";
import { resolveDependencies, satisfies } from "./dependencies.ts";
import { loadPack } from "./pack.ts";

const enc = new TextEncoder();

/** A pack document for deps/<id>/reach.json. */
function depDoc(id: string, version: string, dependencies?: unknown[]): Uint8Array {
  return enc.encode(JSON.stringify({ specVersion: "1.0.0", id, version, manifest: { manifestVersion: "1.0.0", capabilities: { tools: [] } }, entrypoint: "plan.json", ...(dependencies === undefined ? {} : { dependencies }) }));
}

/** A runnable pack declaring `dependencies`, with extra files (the vendored packs). */
function packWith(dependencies: unknown[], extra: Record<string, Uint8Array> = {}): Map<string, Uint8Array> {
  const files = jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "s1", tool: "echo" }]) });
  const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json"))) as Record<string, unknown>;
  files.set("reach.json", enc.encode(JSON.stringify({ ...doc, dependencies })));
  for (const [p, b] of Object.entries(extra)) files.set(p, b);
  return files;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "loaded";
  } catch (err) {
    if (err instanceof ReachError) return err.code;
    throw err;
  }
}

describe("satisfies (SemVer ranges)", () => {
  const cases: [string, string, boolean][] = [
    ["1.2.3", "1.2.3", true], ["1.2.4", "1.2.3", false], ["1.2.3", "=1.2.3", true], ["1.9.0", "^1.2.3", true], ["2.0.0", "^1.2.3", false],
    ["1.2.2", "^1.2.3", false], ["0.2.9", "^0.2.3", true], ["0.3.0", "^0.2.3", false], ["0.0.3", "^0.0.3", true], ["0.0.4", "^0.0.3", false],
    ["1.2.9", "~1.2.3", true], ["1.3.0", "~1.2.3", false], ["1.5.0", "~1", true], ["1.0.0", ">=1.0.0 <2.0.0", true], ["2.0.0", ">=1.0.0 <2.0.0", false],
    ["1.7.1", "1.x", true], ["2.0.0", "1.x", false], ["1.2.7", "1.2.x", true], ["5.5.5", "*", true], ["3.0.0", "1.x || >=3", true], ["2.5.0", "1.x || >=3", false],
    ["2.0.0", ">1", true], ["1.9.9", ">1", false], ["1.2.9", "<=1.2", true], ["1.3.0", "<=1.2", false], ["1.0.0", ">= 1.0.0", true],
  ];
  for (const [v, r, want] of cases) it(`${v} ${want ? "satisfies" : "does not satisfy"} ${r}`, () => expect(satisfies(v, r)).toBe(want));
  it("a range it does not understand is null, not a guess", () => {
    expect(satisfies("1.0.0", "1.0.0-beta")).toBeNull();
    expect(satisfies("1.0.0", "latest")).toBeNull();
    expect(satisfies("1.0.0", "1.x.3")).toBeNull();
  });
});

describe("resolveDependencies", () => {
  it("resolves a vendored pack whose id and version match, pinned or not, nested ones too", async () => {
    const util = { "deps/util/reach.json": depDoc("util", "1.4.0", [{ id: "base", version: "~2.0.0" }]), "deps/util/plan.json": enc.encode("{}"), "deps/util/deps/base/reach.json": depDoc("base", "2.0.5") };
    const digest = packDigest(new Map(Object.entries(util).map(([p, b]) => [p.slice("deps/util/".length), b])));
    const loaded = await loadPack(packWith([{ id: "util", version: "^1.2.0", source: `sha256:${digest}` }], util));
    expect(loaded.dependencies).toEqual([
      { id: "util", version: "1.4.0", digest, path: "deps/util" },
      { id: "base", version: "2.0.5", digest: expect.stringMatching(/^[0-9a-f]{64}$/), path: "deps/util/deps/base" },
    ]);
    expect(loaded.warnings).toEqual([]);
  });

  it("refuses what cannot be resolved offline with PACK_DEPENDENCY_UNRESOLVED and how to vendor it", async () => {
    const util = { "deps/util/reach.json": depDoc("util", "1.4.0") };
    const refusals: [string, unknown[], Record<string, Uint8Array>][] = [
      ["missing", [{ id: "util", version: "1.0.0" }], {}],
      ["wrong version", [{ id: "util", version: "^2.0.0" }], util],
      ["wrong id inside", [{ id: "util", version: "*" }], { "deps/util/reach.json": depDoc("other", "1.0.0") }],
      ["a source to fetch", [{ id: "util", version: "*", source: "https://registry.example.com/util-1.4.0.tgz" }], util],
      ["a pinned digest that differs", [{ id: "util", version: "*", source: `sha256:${"0".repeat(64)}` }], util],
      ["an unresolved nested dependency", [{ id: "util", version: "*" }], { "deps/util/reach.json": depDoc("util", "1.4.0", [{ id: "base", version: "1.0.0" }]) }],
      ["an unknown range", [{ id: "util", version: "latest" }], util],
    ];
    for (const [what, deps, extra] of refusals) expect(await codeOf(loadPack(packWith(deps, extra))), what).toBe("PACK_DEPENDENCY_UNRESOLVED");
    try {
      resolveDependencies([{ id: "util", version: "1.0.0" }], new Map());
    } catch (err) {
      expect((err as Error).message).toContain("copy the pack into deps/util/");
      expect((err as ReachError).details).toMatchObject({ dependency: "util", version: "1.0.0" });
    }
  });

  it("an unresolved optional dependency is a warning, and the pack loads", async () => {
    const loaded = await loadPack(packWith([{ id: "extra", version: "1.0.0", optional: true }]));
    expect(loaded.dependencies).toEqual([]);
    expect(loaded.warnings).toEqual([expect.stringContaining("dependency extra@1.0.0 is unresolved")]);
  });
});
