/**
 * A pack's declared test cases (reach-wasm): `tests/<name>.json` files in the pack, run by `reach-wasm pack test`
 * through the engine call, each one run of the pack.
 *
 * ```json
 * { "description": "three words", "input": {"text": "a b c"}, "seed": "7",
 *   "expect": { "output": { "count": { "words": 3 } } } }
 * { "input": {"text": 5}, "expect": { "error": "PROTO_SCHEMA_VIOLATION" } }
 * ```
 * - `input`: the run input (any JSON value; what `reach-wasm run --input` takes).
 * - `seed` (optional): the run's seed, decimal 0..2^64-1 (a string, or a safe integer); default: derived from the input.
 * - `expect.output`: the run COMPLETED and its outputs — step id → the step's output, as in `result.json` `outputs` —
 *   equal this value (JSON equality: key order does not matter, numbers compare by value).
 * - `expect.error`: the run FAILED or was ABORTED with this error code (`src/protocol/errors.ts`).
 * - `description` (optional): shown by `pack test`.
 * Unknown fields are refused, so a typo in `expect` cannot make a case pass.
 * @module
 */
import { z } from "zod";
import { isErrorCode, ReachError } from "./errors.ts";
import type { ErrorCode } from "./errors.ts";
import { parseJsonText } from "./json-text.ts";
import { lazySchema } from "./_lazy.ts";

/** Where a pack keeps its test cases. */
export const PACK_TESTS_DIR = "tests/";

const MAX_SEED = 2n ** 64n - 1n;

const json = (): z.ZodType<unknown> => z.json();

/** One test case (`tests/<name>.json`). */
export const PackTestCaseSchema = lazySchema(() => z.strictObject({
  description: z.string().max(1000).optional(),
  input: json(),
  seed: z
    .union([z.string().regex(/^(0|[1-9][0-9]{0,19})$/, "a decimal integer"), z.int().min(0)])
    .transform((s) => String(s))
    .refine((s) => BigInt(s) <= MAX_SEED, "at most 2^64-1")
    .optional(),
  expect: z.union([
    z.strictObject({ output: json() }),
    z.strictObject({
      error: z.string().refine((c) => isErrorCode(c), "a reach-wasm error code such as PROTO_SCHEMA_VIOLATION or EXEC_TOOL_FAILED"),
    }),
  ]),
}));

/** A parsed test case. */
export type PackTestCase = {
  description?: string;
  input: unknown;
  seed?: string;
  expect: { output: unknown } | { error: ErrorCode };
};

/**
 * The test case files of a pack: `tests/*.json` directly under `tests/`, sorted by name.
 * @param paths the pack's file paths
 * @returns `[name, path]` pairs (name: the file name without `.json`)
 * @example packTestFiles(["reach.json", "tests/a.json"]) // [["a", "tests/a.json"]]
 */
export function packTestFiles(paths: Iterable<string>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const p of paths) {
    if (!p.startsWith(PACK_TESTS_DIR) || !p.endsWith(".json")) continue;
    const name = p.slice(PACK_TESTS_DIR.length, -".json".length);
    if (name !== "" && !name.includes("/")) out.push([name, p]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * Parse one test case file.
 * @param bytes the file
 * @returns the test case, or the reason it is malformed (`path: problem`)
 * @example parsePackTestCase(new TextEncoder().encode('{"input":{},"expect":{"error":"EXEC_TOOL_FAILED"}}'))
 */
export function parsePackTestCase(bytes: Uint8Array): { ok: true; value: PackTestCase } | { ok: false; problem: string } {
  let doc: unknown;
  try {
    // Strictly, as `run --input` reads an input (conformance/HASHING.md "What a tool sees").
    doc = parseJsonText(new TextDecoder("utf-8", { fatal: true }).decode(bytes), { what: "the test case", code: "PROTO_INVALID_ARGUMENT" });
  } catch (err) {
    return { ok: false, problem: err instanceof ReachError ? err.message : `not UTF-8 JSON (${(err as Error).message})` };
  }
  const parsed = PackTestCaseSchema().safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.join(".")}: `;
    return { ok: false, problem: `${where}${issue?.message ?? "invalid"}; a test case is {"input": …, "seed"?: "N", "expect": {"output": …} | {"error": "CODE"}}` };
  }
  // The input and the expected output as written: `z.json()` rebuilds them without their "__proto__" members.
  const written = doc as { input: unknown; expect: { output?: unknown } };
  const expected = "output" in parsed.data.expect ? { output: written.expect.output } : parsed.data.expect;
  return { ok: true, value: { ...(parsed.data as PackTestCase), input: written.input, expect: expected } as PackTestCase };
}
