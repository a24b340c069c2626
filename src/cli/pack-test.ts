/**
 * `reach-wasm pack test [dir] [--trust FILE] [--json]`: run the pack's declared test cases (`tests/*.json`, schema in
 * `src/protocol/pack-test.ts`), each as one run through the engine call (`runEngine`), exactly as `reach-wasm run`
 * would run it with that input and seed, and print a table: name, status, duration, what differed.
 * Exit 0 all passed, 1 a case failed, 2 a malformed test file, no test cases, or a pack that does not load.
 * Nothing is written: the runs' capsules and files are dropped.
 * @module
 */
import { canonicalize } from "../engine/mod.ts";
import { loadPackFrom, runEngine } from "../engine/mod.ts";
import { packTrust } from "../engine/mod.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { readPackFiles } from "../host/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { packTestFiles, parsePackTestCase } from "../protocol/mod.ts";
import type { PackTestCase } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { parseCommand, usageError } from "./options.ts";
import { PACK_TEST } from "./specs-pack.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { progressSignals } from "../host/mod.ts";

/** One case's result. */
export type PackTestResult = { name: string; passed: boolean; durationMs: number; status: string; detail: string };

/**
 * The first place two JSON values differ (objects key by key in sorted order, arrays index by index).
 * @param expected the expected value
 * @param actual the actual value
 * @param path where the values sit (`$` at the top)
 * @returns `path: expected X, got Y`, or null when they are equal as JSON
 * @example firstDifference({ a: [1, 2] }, { a: [1, 3] }) // "$.a[1]: expected 2, got 3"
 */
export function firstDifference(expected: unknown, actual: unknown, path = "$"): string | null {
  const show = (v: unknown): string => {
    const text = v === undefined ? "nothing" : canonicalize(v as JsonValue);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const d = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (isObject(expected) && isObject(actual)) {
    for (const key of [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()) {
      const d = firstDifference(expected[key], actual[key], `${path}.${key}`);
      if (d !== null) return d;
    }
    return null;
  }
  if (expected === undefined || actual === undefined || canonicalize(expected as JsonValue) !== canonicalize(actual as JsonValue)) {
    return `${path}: expected ${show(expected)}, got ${show(actual)}`;
  }
  return null;
}

/** The test cases, all parsed before any runs; a malformed one is a bad invocation (exit 2). */
function readCases(files: ReadonlyMap<string, Uint8Array>, dir: string): Array<[string, PackTestCase]> {
  const listed = packTestFiles(files.keys());
  if (listed.length === 0) throw usageError(PACK_TEST, `${JSON.stringify(dir)} declares no test cases; add tests/NAME.json: {"input": …, "expect": {"output": …} | {"error": "CODE"}}`);
  return listed.map(([name, path]) => {
    const parsed = parsePackTestCase(files.get(path)!);
    if (!parsed.ok) throw new ReachError("PROTO_SCHEMA_VIOLATION", `${path}: ${parsed.problem}`, { details: { path } });
    return [name, parsed.value];
  });
}

/** Run one case and compare. */
async function runCase(files: ReadonlyMap<string, Uint8Array>, name: string, c: PackTestCase, trust: Parameters<typeof runEngine>[1]["trust"]): Promise<PackTestResult> {
  const started = performance.now();
  const run = await runEngine(defaultEnvironment(), {
    pack: { files },
    input: c.input as JsonValue,
    ...(c.seed === undefined ? {} : { seed: c.seed }),
    ...(trust === undefined ? {} : { trust }),
    onProgress: progressSignals(() => {}), // a test hook (REACH_WASM_TEST_SIGNAL); nothing without it
  });
  const durationMs = performance.now() - started;
  const got = run.error === null ? run.status : `${run.status} ${run.error.code}`;
  let detail: string | null;
  if ("output" in c.expect) {
    detail = run.status !== "COMPLETED"
      ? `expected COMPLETED, got ${got}${run.error === null ? "" : `: ${run.error.message}`}`
      : firstDifference(c.expect.output, run.result["outputs"], "outputs");
  } else {
    detail = run.error?.code === c.expect.error ? null : `expected error ${c.expect.error}, got ${got}${run.error === null ? "" : `: ${run.error.message}`}`;
  }
  return { name, passed: detail === null, durationMs, status: got, detail: detail ?? (c.description ?? "") };
}

function table(results: readonly PackTestResult[]): string {
  const rows = [["NAME", "RESULT", "DURATION", "RUN", "DETAIL"], ...results.map((r) => [r.name, r.passed ? "pass" : "FAIL", `${r.durationMs.toFixed(0)} ms`, r.status, r.detail])];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join("  ").trimEnd()).join("\n") + "\n";
}

/**
 * The `pack test` subcommand.
 * @param argv the arguments after `pack test` (`[dir]`, `--trust`, `--json`)
 * @param io output streams
 * @returns 0 when every case passed, 1 when one failed
 * @throws ReachError (exit 2) for a malformed test file, no test cases, or a pack that does not load
 * @example process.exitCode = await packTest(["packs/hello"], io);
 */
export async function packTest(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(PACK_TEST, argv);
  const [dir = "."] = positionals;
  const files = await readPackFiles(dir);
  const cases = readCases(files, dir);
  const loaded = await loadPackFrom(defaultEnvironment(), { files }); // a pack that does not load: exit 2
  const store = await loadTrustStore(values.trust);
  const trust = packTrust(loaded, store);
  const who = `${loaded.pack.id}@${loaded.pack.version}`;
  io.stderr(`reach-wasm: testing ${who} (${trust.trusted ? `signed by trusted key ${trust.keyName ?? trust.publicKey}` : trust.signed ? "signed by a key that is not in the trust store: restricted executor" : "not signed: restricted executor"}), ${cases.length} case(s)\n`);
  const results: PackTestResult[] = [];
  for (const [name, c] of cases) results.push(await runCase(files, name, c, { store }));
  const failed = results.filter((r) => !r.passed).length;
  io.stderr(table(results));
  io.stderr(`reach-wasm: ${results.length - failed} passed, ${failed} failed\n`);
  if (values.json) {
    io.stdout(JSON.stringify({
      pack: { id: loaded.pack.id, version: loaded.pack.version, digest: loaded.packDigest, signed: trust.signed, trusted: trust.trusted },
      passed: results.length - failed,
      failed,
      cases: results.map((r) => ({ name: r.name, result: r.passed ? "pass" : "fail", durationMs: Math.round(r.durationMs), run: r.status, ...(r.passed ? {} : { difference: r.detail }) })),
    }) + "\n");
  }
  return failed === 0 ? 0 : 1;
}
