// docs/security.md names, for each line of each face's threat model, the tests that hold it as `path/to/x.test.ts`
// "test title", "another title" (a title cut short ends with " …"). Every named test must exist, so that the page
// cannot drift from the suite.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const doc = readFileSync(join(root, "docs/security.md"), "utf8").replace(/\s+/g, " ");
const squash = (text: string): string => text.replace(/\s+/g, " ");

/** Each (test file, title) the page names. */
function named(): [string, string][] {
  const out: [string, string][] = [];
  const parts = doc.split(/`([A-Za-z0-9_./-]+\.test\.ts)`/);
  for (let i = 1; i < parts.length; i += 2) {
    const file = parts[i]!;
    const after = parts[i + 1]!;
    for (const m of after.matchAll(/"([^"]+)"/g)) out.push([file, m[1]!]);
  }
  return out;
}

describe("docs/security.md", () => {
  const pairs = named();
  it("names tests", () => {
    expect(pairs.length).toBeGreaterThan(10);
  });
  it.each(pairs)("%s has a test %j", (file, title) => {
    expect(existsSync(join(root, file)), `${file} does not exist`).toBe(true);
    const source = squash(readFileSync(join(root, file), "utf8"));
    const wanted = title.endsWith(" …") ? title.slice(0, -2) : title;
    expect(source.includes(`"${wanted}`) || source.includes(`\`${wanted}`), `${file} has no test titled ${JSON.stringify(title)}`).toBe(true);
  });
});
