// Every command's --json refusal is the upstream error document (seed 003 §7.2, upstream error.schema.json):
// {specVersion: "1.0.0", error: {code, message, details, category, severity, recoverable, retryable}}, one object on
// stdout, exit 2. Each command is refused twice: for an unknown option, and for input it cannot use.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "./cli.ts";
import { COMMANDS } from "./commands.ts";

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const schema = await import("../../conformance/upstream-schemas/error.schema.json", { with: { type: "json" } });
const validate = ajv.compile(schema.default as object);

const scratch = mkdtempSync(join(tmpdir(), "reach-errdoc-"));
const garbage = join(scratch, "garbage.capsule.tar.gz");
writeFileSync(garbage, "not a capsule");
const missing = join(scratch, "missing");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A bad input per command (besides the unknown option every command refuses). */
const BAD_INPUT: Record<string, string[]> = {
  run: ["run", missing],
  replay: ["replay", garbage],
  verify: ["verify", missing],
  show: ["show", missing],
  report: ["report", garbage],
  diff: ["diff", garbage, garbage],
  wasi: ["wasi", missing],
  pack: ["pack", "validate", missing],
  plan: ["plan", "validate", missing],
  approve: ["approve", "not-a-hash"],
  attest: ["attest", garbage, "--key", missing],
  keygen: ["keygen", "--out", garbage],
  submit: ["submit", missing],
  runs: ["runs", "show"],
  tokens: ["tokens", "create"],
  node: ["node", "init", "--dir", join(scratch, "n")],
  delegate: ["delegate", "--dir", missing],
  revoke: ["revoke", "--dir", missing, garbage],
  conformance: ["conformance", "--category", "nonsense"],
};

async function refusal(argv: string[]): Promise<{ code: number; doc: unknown }> {
  let stdout = "";
  const code = await main([...argv, "--json"], { stdout: (t) => void (stdout += t), stderr: () => {} });
  const lines = stdout.trim().split("\n");
  expect(lines, argv.join(" ")).toHaveLength(1);
  return { code, doc: JSON.parse(lines[0]!) as unknown };
}

describe("--json refusals are upstream error documents (seed 003 §7.2)", () => {
  for (const c of COMMANDS) {
    it(`${c.name}: an unknown option`, async () => {
      const { code, doc } = await refusal([c.name, "--no-such-option"]);
      expect(code).toBe(2);
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      expect(doc).toMatchObject({ specVersion: "1.0.0", error: { code: "PROTO_INVALID_ARGUMENT", category: "PROTOCOL" } });
    });
    const bad = BAD_INPUT[c.name];
    if (bad !== undefined) {
      it(`${c.name}: input it cannot use`, async () => {
        const { code, doc } = await refusal(bad);
        expect(code).toBe(2);
        expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      });
    }
  }

  it("--json misspelt --json=… still gets its refusal as the document; a --json after -- is the guest's", async () => {
    for (const command of ["verify", "run", "show"]) {
      let stdout = "";
      const code = await main([command, missing, "--json=1"], { stdout: (t) => void (stdout += t), stderr: () => {} });
      expect(code).toBe(2);
      const doc = JSON.parse(stdout) as unknown;
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      expect(doc).toMatchObject({ error: { code: "PROTO_INVALID_ARGUMENT", message: expect.stringMatching(/--json takes no value/) } });
    }
    let stdout = "";
    let stderr = "";
    expect(await main(["wasi", missing, "--", "--json"], { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) })).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^reach-wasm: /);
  });

  it("an unknown command", async () => {
    const { code, doc } = await refusal(["frobnicate"]);
    expect(code).toBe(2);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
  });
});
