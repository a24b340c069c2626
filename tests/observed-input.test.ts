// What a tool observes live is what replay gives it (conformance/HASHING.md "What a tool sees"), through the CLI on
// Node (the bundle of src/) and on Deno (src/ directly): the same input text gives the same run hash on both runtimes,
// and so does the same value spelled differently (key order, number spellings, escapes, "__proto__", non-BMP and
// unnormalised names); each capsule replays (on the other runtime's CLI where it counts) and verifies; JSON the run refuses (a name twice, nesting too deep) exits 2
// with PROTO_INVALID_ARGUMENT on both. The many-case property test runs in process (src/engine/observed-input.test.ts).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalize } from "../src/canonical/jcs.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { observerPack } from "./support/pack.ts";
import { readPythonWasm } from "../src/platform/python-engine.ts";
import { readQuickJsEngineWasm } from "../src/platform/quickjs-engine.ts";
import { MAX_JSON_DEPTH, parseJsonText } from "../src/protocol/json-text.ts";
import { genObject, rng, spell } from "../src/protocol/_test-json.ts";
import { cliRuntimes } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-observed-"));
const cli = cliRuntimes(scratch);
beforeAll(() => cli.setup(), 120_000);
afterAll(() => {
  cli.remove();
  rmSync(scratch, { recursive: true, force: true });
});
const [node, deno] = cli.runtimes.map(([, cmd]) => cmd) as [string[], string[]];

// The pack on disk, and an environment of the test's own: no trust store, keys or caches of the user's.
const pack = join(scratch, "pack");
for (const [path, bytes] of await observerPack()) {
  mkdirSync(dirname(join(pack, path)), { recursive: true });
  writeFileSync(join(pack, path), bytes);
}
const env = { ...process.env, HOME: join(scratch, "home"), XDG_CONFIG_HOME: "", XDG_CACHE_HOME: "", REACH_WASM_TRUST_STORE: join(scratch, "no-trust.json"), REACH_WASM_CACHE: join(scratch, "cache"), NO_COLOR: "1" };

function reach(cmd: string[], args: string[]): { code: number | null; json: Record<string, unknown>; stderr: string } {
  const r = spawnSync(cmd[0]!, [...cmd.slice(1), ...args], { cwd: root, env, encoding: "utf8", timeout: 180_000 });
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    // no JSON on stdout: the assertions below say what was printed
  }
  return { code: r.status, json, stderr: r.stderr };
}

let n = 0;
function inputFile(text: string): string {
  const file = join(scratch, `input-${n++}.json`);
  writeFileSync(file, text);
  return file;
}

function run(cmd: string[], text: string): { runHash: string; capsule: string } {
  const r = reach(cmd, ["run", pack, "--unrestricted", "--input", inputFile(text), "--json", "--out", join(scratch, `out-${n}`)]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.json["status"], r.stderr).toBe("COMPLETED");
  return { runHash: r.json["runHash"] as string, capsule: r.json["capsule"] as string };
}

describe("the CLI on Node and Deno: every spelling of an input gives one run hash, and every capsule replays", () => {
  const value = genObject(rng(22), 3, 10);
  const texts = [spell(value, rng(1)), spell(value, rng(2)), '{"zeta":1,"alpha":2}', '{"alpha":2.0,"zeta":1e0}'];

  it("the same text gives one run hash on Node and Deno, and so does every other spelling; each capsule replays and verifies", async () => {
    expect(canonicalize(parseJsonText(texts[0]!, { what: "t", code: "PROTO_INVALID_ARGUMENT" }))).toBe(canonicalize(parseJsonText(texts[1]!, { what: "t", code: "PROTO_INVALID_ARGUMENT" })));
    expect(texts[0]).not.toBe(texts[1]);
    const a = run(node, texts[0]!);
    const aDeno = run(deno, texts[0]!);
    const b = run(deno, texts[1]!);
    expect([aDeno.runHash, b.runHash]).toEqual([a.runHash, a.runHash]);
    const c = run(node, texts[2]!);
    const d = run(deno, texts[3]!);
    expect(d.runHash).toBe(c.runHash);
    // each capsule replays on the other runtime's CLI (two in process, to keep the test short) and verifies
    for (const [cmd, capsule] of [[deno, a.capsule], [node, b.capsule], [deno, c.capsule], [null, aDeno.capsule], [null, d.capsule]] as [string[] | null, string][]) {
      const file = readRunCapsule(readFileSync(capsule));
      expect(verifyRunCapsule(file).checks.filter((x) => !x.ok)).toEqual([]);
      if (cmd === null) {
        const replay = await replayCapsule(file, { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm });
        expect(replay.matches, replay.divergence?.message).toBe(true);
        continue;
      }
      const r = reach(cmd, ["replay", capsule, "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ matches: true, runHash: r.json["expectedRunHash"] });
    }
  }, 300_000);

  it("a name twice in one object, or nesting past the limit, exits 2 with PROTO_INVALID_ARGUMENT and writes no capsule", () => {
    const refused: [string[], string, string][] = [
      [node, '{"zeta":1,"alpha":2,"zeta":3}', "duplicate-key"],
      [deno, '{"a":{"\\u00e9":1,"\u00e9":2}}', "duplicate-key"],
      [deno, "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1), "depth"],
    ];
    for (const [cmd, text, reason] of refused) {
      const out = join(scratch, `refused-${n}`);
      const r = reach(cmd, ["run", pack, "--unrestricted", "--input", inputFile(text), "--json", "--out", out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.json["error"], r.stderr).toMatchObject({ code: "PROTO_INVALID_ARGUMENT", details: { reason } });
      expect(r.stderr).toMatch(/run: the input "[^"]+" is refused: .* at \$.* \(line 1, column \d+\); /);
      expect(existsSync(out)).toBe(false);
    }
  }, 120_000);
});
