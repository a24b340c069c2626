// `pack init --template` and `pack test`: exit codes, the table, --json, and every way a test file can be wrong.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parsePackTestCase } from "../protocol/pack-test.ts";
import { main } from "./cli.ts";
import { firstDifference } from "./pack-test.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-pack-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}
const enc = (v: unknown) => JSON.stringify(v, null, 2);

describe("pack init --template", () => {
  it("writes the js template by default: build.sh executable, tests included, pack id from the directory", async () => {
    const dir = join(scratch, "my pack");
    const r = await cli("pack", "init", dir, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: "my-pack", template: "js" });
    expect(readdirSync(join(dir, "tests")).sort()).toEqual(["hello.json", "not-text_fail.json"]);
    expect(statSync(join(dir, "build.sh")).mode & 0o111).not.toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "reach.json"), "utf8"))).toMatchObject({ id: "my-pack", tools: { count: { kind: "js" } } });
    expect(readFileSync(join(dir, "plan.json"), "utf8")).toContain('"plan_id": "my-pack-1"');
  });

  it("refuses an unknown template, a non-empty directory and a second directory (exit 2, nothing written)", async () => {
    const unknown = await cli("pack", "init", join(scratch, "x"), "--template", "cobol");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown template "cobol".*js, python, c, rust, as, wat, component/);
    expect(() => statSync(join(scratch, "x"))).toThrow();
    const full = join(scratch, "full");
    mkdirSync(full);
    writeFileSync(join(full, "a"), "");
    expect((await cli("pack", "init", full, "--template", "c")).code).toBe(2);
    expect((await cli("pack", "init", join(scratch, "a"), join(scratch, "b"))).code).toBe(2);
  });
});

describe("pack test", () => {
  const dir = join(scratch, "tested");
  const write = (name: string, doc: unknown) => writeFileSync(join(dir, "tests", name), typeof doc === "string" ? doc : enc(doc));

  it("runs every case and exits 0 with a table; --json is one object on stdout", async () => {
    expect((await cli("pack", "init", dir, "--template", "wat")).code).toBe(0);
    const r = await cli("pack", "test", dir, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^NAME +RESULT +DURATION +RUN +DETAIL$/m);
    expect(r.stderr).toMatch(/^hello +pass +\d+ ms +COMPLETED /m);
    expect(r.stderr).toMatch(/^not-text_fail +pass +\d+ ms +FAILED PROTO_SCHEMA_VIOLATION /m);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ pack: { id: "tested", signed: false, trusted: false }, passed: 2, failed: 0 });
  });

  it("exits 1 and says what differed when an output or an error does not match", async () => {
    write("wrong-count.json", { input: { text: "a b c" }, seed: "7", expect: { output: { count: { words: 4 } } } });
    write("wrong-error.json", { input: { text: "a b" }, expect: { error: "EXEC_TOOL_FAILED" } });
    const r = await cli("pack", "test", dir, "--json");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^wrong-count +FAIL .*outputs\.count\.words: expected 4, got 3$/m);
    expect(r.stderr).toMatch(/^wrong-error +FAIL .*expected error EXEC_TOOL_FAILED, got COMPLETED$/m);
    expect(JSON.parse(r.stdout)).toMatchObject({ passed: 2, failed: 2 });
    rmSync(join(dir, "tests", "wrong-count.json"));
    rmSync(join(dir, "tests", "wrong-error.json"));
  });

  it.each([
    ["not JSON", "{", /the test case is not valid JSON: the text ends early at line 1, column 2/],
    ["a name twice", '{"input":{"a":1,"a":2},"expect":{"output":{}}}', /the test case is refused: the name "a" twice in one object at \$\.input\.a/],
    ["an unknown field", { input: {}, expect: { output: {} }, extra: 1 }, /extra|Unrecognized/],
    ["a typo in expect", { input: {}, expect: { outptu: {} } }, /expect/],
    ["an unknown error code", { input: {}, expect: { error: "EXEC_NOPE" } }, /error code/],
    ["a seed out of range", { input: {}, seed: "18446744073709551616", expect: { output: {} } }, /2\^64-1/],
    ["no input", { expect: { output: {} } }, /input/],
  ])("exits 2 before running anything for a test file with %s", async (_name, doc, message) => {
    write("bad.json", doc);
    try {
      const r = await cli("pack", "test", dir, "--json");
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).error.code).toBe("PROTO_SCHEMA_VIOLATION");
      expect(r.stderr).toContain("tests/bad.json");
      expect(r.stderr).toMatch(message);
    } finally {
      rmSync(join(dir, "tests", "bad.json"));
    }
  });

  it("exits 2 for a pack without test cases and for a pack that does not load", async () => {
    const bare = join(scratch, "bare");
    expect((await cli("pack", "init", bare)).code).toBe(0);
    rmSync(join(bare, "tests"), { recursive: true });
    const none = await cli("pack", "test", bare);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/declares no test cases/);
    expect((await cli("pack", "test", join(scratch, "no-such-pack"))).code).toBe(2);
  });
});

describe("the test case schema and the difference", () => {
  it("accepts a seed as a decimal string or an integer, and normalises it", () => {
    const parsed = parsePackTestCase(new TextEncoder().encode(enc({ input: null, seed: 42, expect: { error: "EXEC_TOOL_FAILED" } })));
    expect(parsed).toEqual({ ok: true, value: { input: null, seed: "42", expect: { error: "EXEC_TOOL_FAILED" } } });
  });

  it("names the first differing path; key order and number spelling do not matter", () => {
    expect(firstDifference({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1.0 })).toBeNull();
    expect(firstDifference({ a: [1, 2] }, { a: [1, 3] })).toBe("$.a[1]: expected 2, got 3");
    expect(firstDifference({ a: 1 }, { a: 1, b: 2 })).toBe("$.b: expected nothing, got 2");
    expect(firstDifference("x", { x: 1 })).toBe('$: expected "x", got {"x":1}');
  });
});
