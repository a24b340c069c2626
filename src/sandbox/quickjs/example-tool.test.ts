import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm } from "../../../tests/support/platform.ts";
import { QuickJsRunner } from "./runner.ts";
import { invocation, testHost } from "./_test-host.ts";

const code = new Uint8Array(readFileSync(new URL("../../../wasm-tools/js-slugify/tool.js", import.meta.url)));
const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });

describe("wasm-tools/js-slugify", () => {
  it("slugifies, strips diacritics and cuts at a word boundary", async () => {
    const run = (input: unknown) => runner.run({ ...invocation("", input as null), code, toolName: "js-slugify" });
    expect(await run({ text: "Héllo, Wörld — Straße 42!" })).toMatchObject({ status: "success", output: { slug: "hello-world-strasse-42", length: 22 } });
    expect(await run({ text: "one two three", maxLength: 8, separator: "_" })).toMatchObject({ output: { slug: "one_two" } });
    expect(await run({ text: "supercalifragilistic", maxLength: 5 })).toMatchObject({ output: { slug: "super" } });
    const bad = await run({ text: 1 });
    expect(bad.status === "error" && bad.error.code).toBe("EXEC_TOOL_FAILED");
  }, 60_000);

  it("gives byte-identical output, log and tape twice", async () => {
    const once = async () => {
      const host = testHost("3", "inv-s");
      const out = await runner.run({ ...invocation("", { text: "Ünïcödé   Slugs" }), code, host, toolName: "js-slugify" });
      return JSON.stringify({ out, calls: host.calls }, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    };
    const a = await once();
    expect(a).toContain('"slug":"unicode-slugs"');
    expect(await once()).toBe(a);
  });
});
