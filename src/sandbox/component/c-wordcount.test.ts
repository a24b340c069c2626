// The C example component (wasm-tools/c-component/: a few KB of C, canonical ABI by hand, no JS engine) through
// ComponentRunner with the real recording host (conformance/lib/tool-harness.ts) and, by default, fuel metering.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { invokeOnce, newWorkspace, runTool } from "../../../conformance/lib/tool-harness.ts";
import type { ToolRunSpec } from "../../../conformance/lib/tool-harness.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import type { ToolOutcome } from "../types.ts";
import { coreModulesOf } from "../wasm-binary.ts";
import { C_WORDCOUNT, C_WORDCOUNT_GLUE } from "./_test-components.ts";
import { parseGlueDocument } from "./glue.ts";
import { ComponentRunner } from "./runner.ts";
import { HOST_INTERFACE } from "./transpiled.ts";

const buildDir = new URL("../../../wasm-tools/c-component/build/", import.meta.url);
const COMPONENT = new Uint8Array(readFileSync(new URL("wordcount.component.wasm", buildDir)));
const CORE = new Uint8Array(readFileSync(new URL("wordcount.core.wasm", buildDir)));
const GLUE = parseGlueDocument(C_WORDCOUNT_GLUE).source;
const GLUE_CODE = GLUE.replace(/^\s*\/\/.*$/gm, "");

const metered = new ComponentRunner({ components: [C_WORDCOUNT] });
const plain = new ComponentRunner({ components: [C_WORDCOUNT], meterFuel: false });
const spec = (input: unknown, extra: Partial<ToolRunSpec> = {}): ToolRunSpec => ({
  code: COMPONENT,
  input: input as ToolRunSpec["input"],
  seed: "7",
  runner: () => metered,
  ...extra,
});
const run = async (input: unknown, extra: Partial<ToolRunSpec> = {}) => {
  const { outcome, tape, step } = await invokeOnce(newWorkspace(), spec(input, extra));
  step.rollback();
  return { outcome, tape };
};

function expectError(outcome: ToolOutcome) {
  if (outcome.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

/** The non-custom sections of a core module, as [id, bytes] pairs. */
function sections(module: Uint8Array): [number, string][] {
  const out: [number, string][] = [];
  let p = 8;
  const leb = (): number => {
    let r = 0;
    let s = 0;
    let b: number;
    do {
      b = module[p++]!;
      r += (b & 0x7f) * 2 ** s;
      s += 7;
    } while (b & 0x80);
    return r;
  };
  while (p < module.length) {
    const id = module[p++]!;
    const len = leb();
    if (id !== 0) out.push([id, sha256Hex(module.subarray(p, p + len))]);
    p += len;
  }
  return out;
}

describe("committed C component", () => {
  it("matches build/SHA256SUMS, the glue, and embeds the committed core module", () => {
    const sums = readFileSync(new URL("SHA256SUMS", buildDir), "utf8");
    expect(sums).toBe(`${sha256Hex(CORE)}  wordcount.core.wasm\n${sha256Hex(COMPONENT)}  wordcount.component.wasm\n`);
    expect(C_WORDCOUNT.componentSha256).toBe(sha256Hex(COMPONENT));
    // wit-component adds a producers section; every other section is the clang output (checked by CI's rebuild).
    const guest = coreModulesOf(COMPONENT)[0]!;
    expect(sections(guest)).toEqual(sections(CORE));
    expect(sections(CORE).length).toBeGreaterThan(5);
    expect(COMPONENT.length).toBeLessThan(16 * 1024);
  });

  it("imports only the host API; the glue imports nothing", () => {
    expect([...C_WORDCOUNT.importNames]).toEqual([HOST_INTERFACE]);
    expect(GLUE_CODE).not.toMatch(/^\s*import\s/m);
    expect(GLUE_CODE).not.toMatch(/\bimport\s*\(|\brequire\s*\(|\bprocess\b|\bDeno\b|node:/);
  });
});

describe("c-wordcount through ComponentRunner", () => {
  it("counts words, lines, code points and UTF-8 bytes, with the host clock on the tape (metered)", async () => {
    const text = "the cat and the hat\nthe end\n";
    const { outcome, tape } = await run({ text, other: [1, { "}": "]" }], n: null });
    if (outcome.status !== "success") throw outcome.error;
    expect(outcome.output).toEqual({ words: 7, lines: 2, chars: 28, bytes: 28, at: "2026-01-01T00:00:00.000Z" });
    expect(tape.records.map((r) => r.op)).toEqual(["clock.now"]);
    expect(outcome.fuelUsed).toBeGreaterThan(0n);
    expect(outcome.log).toBe("");
    const unicode = "héllo 😀 \ud800 wörld\t\u0001 \"q\" \\ /";
    const u = await run({ text: unicode });
    if (u.outcome.status !== "success") throw u.outcome.error;
    expect(u.outcome.output).toMatchObject({
      words: 8,
      lines: 0,
      chars: [...unicode].length,
      bytes: new TextEncoder().encode(unicode).length, // the lone surrogate as U+FFFD
    });
  });

  it("gives byte-identical output and tape twice, metered or not, fresh or on a reused instance", async () => {
    const input = { text: "one two\nthree" };
    const a = await runTool(spec(input));
    const b = await runTool(spec(input));
    const c = await runTool(spec(input, { runner: () => plain }));
    const d = await runTool(spec(input, { runner: () => new ComponentRunner({ components: [C_WORDCOUNT], reuseInstances: false }) }));
    expect(a.status).toBe("success");
    expect(a.tape).not.toBe("");
    for (const x of [b, c, d]) expect(x).toEqual(a);
    const first = (await run(input)).outcome;
    const second = (await run(input)).outcome;
    expect(second.fuelUsed).toBe(first.fuelUsed);
  });

  it("reports input that is not an object with a string text as EXEC_TOOL_FAILED, and recovers", async () => {
    for (const [input, message] of [
      ["just text", 'input must be a JSON object {"text": string}'],
      [[1, 2], 'input must be a JSON object {"text": string}'],
      [{ text: 5 }, '"text" must be a string'],
      [{ words: "x" }, 'input must have a string "text"'],
    ] as const) {
      const { outcome, tape } = await run(input);
      const err = expectError(outcome);
      expect(err.code).toBe("EXEC_TOOL_FAILED");
      expect(err.details["toolError"]).toEqual({ message });
      expect(tape.records).toEqual([]); // it failed before its host call
    }
    expect((await run({ text: "ok" })).outcome.status).toBe("success");
  });

  it("runs out of fuel on a large input with a small budget, at the same count every time", async () => {
    const text = "word ".repeat(50_000);
    const a = expectError((await run({ text }, { fuel: 10_000n })).outcome);
    expect(a.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(a.details["reason"]).toBe("fuel");
    const ok = (await run({ text })).outcome;
    if (ok.status !== "success") throw ok.error;
    expect(ok.output).toMatchObject({ words: 50_000, bytes: 250_000 });
    expect(ok.fuelUsed).toBeGreaterThan(10_000n);
  });

  it("grows its memory for a large input, and the next (small) run starts from the initial state", async () => {
    const big = await run({ text: "ab\n".repeat(400_000) });
    if (big.outcome.status !== "success") throw big.outcome.error;
    expect(big.outcome.output).toMatchObject({ words: 400_000, lines: 400_000, bytes: 1_200_000 });
    const small = await run({ text: "x" });
    if (small.outcome.status !== "success") throw small.outcome.error;
    expect(small.outcome.output).toMatchObject({ words: 1, bytes: 1 });
  });
});
