// ARCHITECTURE.md is kept current with the tree and the whiteboard: every folder under src/ is in its layout, every
// folder it names exists, and its table of parts and arrows says what docs/whiteboard.json says.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const text = readFileSync(`${root}ARCHITECTURE.md`, "utf8");
const board = JSON.parse(readFileSync(`${root}docs/whiteboard.json`, "utf8")) as {
  parts: Record<string, { is: string[]; says: string }>;
  arrows: [string, string][];
  never: [string, string, string][];
};

/** The folder names of the layout block (`  name/  what it is`, under `src/`). */
function layoutFolders(): string[] {
  const block = text.slice(text.indexOf("## Layout"), text.indexOf("### The whiteboard in words"));
  return [...block.matchAll(/^ {2}([a-z]+)\/ /gm)].map((m) => m[1]!);
}

/** The whiteboard table's rows: part → [folders, arrows]. */
function tableRows(): Map<string, { is: string[]; to: string[] }> {
  const rows = new Map<string, { is: string[]; to: string[] }>();
  for (const m of text.matchAll(/^\| ([A-Z][A-Za-z]*) \| ([^|]+) \| [^|]+ \| ([^|]+) \|$/gm)) {
    const is = [...m[2]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
    const to = m[3]!.trim() === "—" ? [] : m[3]!.split(",").map((s) => s.trim());
    rows.set(m[1]!, { is, to });
  }
  return rows;
}

describe("ARCHITECTURE.md is current", () => {
  it("names every folder under src/ in its layout, and every folder it names exists", () => {
    const actual = readdirSync(`${root}src`).filter((n) => statSync(`${root}src/${n}`).isDirectory()).sort();
    expect(layoutFolders().sort()).toEqual(actual);
  });

  it("its table holds the whiteboard's parts, their folders and arrows", () => {
    const rows = tableRows();
    expect([...rows.keys()].sort()).toEqual(Object.keys(board.parts).sort());
    for (const [name, part] of Object.entries(board.parts)) {
      expect(rows.get(name)!.is).toEqual(part.is);
      const to = board.arrows.filter(([a]) => a === name).map(([, b]) => b).sort();
      expect(rows.get(name)!.to).toEqual(to);
      for (const folder of part.is) expect(existsSync(`${root}${folder}`)).toBe(true);
    }
  });

  it("says every never of the whiteboard", () => {
    for (const [a, b, why] of board.never) expect(text).toContain(`${a} never imports ${b}: ${why}.`);
  });
});
