import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeDirAtomic } from "./write.ts";

let base: string;
beforeEach(() => (base = mkdtempSync(join(tmpdir(), "reach-write-"))));
afterEach(() => rmSync(base, { recursive: true, force: true }));

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Every file under `dir`, relative path → text. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out[join(e.parentPath, e.name).slice(dir.length + 1)] = readFileSync(join(e.parentPath, e.name), "utf8");
  }
  return out;
}

describe("writeDirAtomic", () => {
  it("replaces a directory whole: the old files and folders go, nothing is left beside it", async () => {
    const dir = join(base, "runs", "r");
    await writeDirAtomic(dir, new Map([["a.json", enc("1")], ["deep/x/y.txt", enc("old")], ["gone.txt", enc("x")]]));
    await writeDirAtomic(dir, new Map([["a.json", enc("2")], ["deep/z.txt", enc("new")]]));
    expect(tree(dir)).toEqual({ "a.json": "2", "deep/z.txt": "new" });
    expect(readdirSync(join(base, "runs"))).toEqual(["r"]);
  });
});
