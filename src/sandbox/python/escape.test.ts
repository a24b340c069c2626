/**
 * The escape and determinism corpus (`_test-corpus.ts`): every payload ends contained, with the expected code, or
 * with a result that shows it reached nothing but virtual, seeded values.
 */
import { describe, expect, it } from "vitest";
import type { ToolOutcome } from "../types.ts";
import { DETERMINISM_CORPUS, ESCAPE_CORPUS } from "./_test-corpus.ts";
import type { Payload } from "./_test-corpus.ts";
import { pythonRunner, runSnippet, testHost } from "../../../tests/support/python.ts";

const shared = pythonRunner();

async function run(p: Payload, runner = shared, seed = "7"): Promise<ToolOutcome> {
  return runSnippet(runner, p.code, undefined, { host: testHost(seed), ...(p.fuel === undefined ? {} : { fuel: p.fuel }) });
}

function check(p: Payload, out: ToolOutcome): void {
  if ("result" in p.expect) {
    expect(out.status === "error" ? `${out.error.code}: ${out.error.message}` : out.output).toEqual({ stdout: "", result: p.expect.result });
    return;
  }
  expect(out.status === "error" ? out.error.code : `success: ${JSON.stringify(out.output)}`).toBe(p.expect.code);
  if (out.status !== "error") return;
  const details = out.error.details ?? {};
  if (p.expect.reason !== undefined) expect(details["reason"]).toBe(p.expect.reason);
  if (p.expect.errorName !== undefined) expect(details["errorName"]).toBe(p.expect.errorName);
  expect(JSON.stringify(out.error.toJSON())).not.toMatch(/node_modules|file:|\.ts\b|\.mjs\b|wasm-function|<stdin>/);
}

describe("python escape corpus", () => {
  it("has at least 15 payloads", () => {
    expect(ESCAPE_CORPUS.length + DETERMINISM_CORPUS.length).toBeGreaterThanOrEqual(15);
  });

  it.each(ESCAPE_CORPUS.map((p) => [p.name, p] as const))("%s ends contained", async (_name, p) => {
    check(p, await run(p));
  });

  it("after the whole corpus, a kept interpreter still answers like a fresh one", async () => {
    const probe: Payload = { name: "probe", code: "import sys\nresult = [sorted(sys.modules.keys()), id(object()) % 100000, hash('x')]", expect: { result: null } };
    const fresh = await run(probe, pythonRunner());
    const kept = await run(probe);
    expect(kept).toEqual(fresh);
  });
});

describe("python determinism corpus", () => {
  it.each(DETERMINISM_CORPUS.map((p) => [p.name, p] as const))("%s", async (_name, p) => {
    const first = await run(p, pythonRunner());
    const again = await run(p);
    const unkept = await run(p, pythonRunner({ reuseInterpreters: false }));
    check(p, first);
    expect(again).toEqual(first);
    expect(unkept).toEqual(first);
  });

  it("randomness follows the seed", async () => {
    const p = DETERMINISM_CORPUS.find((x) => x.name.startsWith("random"))!;
    const a = await run(p, shared, "7");
    const b = await run(p, shared, "8");
    expect(a.status === "success" && b.status === "success").toBe(true);
    expect(a.status === "success" && b.status === "success" && JSON.stringify(a.output) !== JSON.stringify(b.output)).toBe(true);
  });
});
