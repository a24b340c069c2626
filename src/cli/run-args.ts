/**
 * The arguments of `run` (local and delegated): parsing, and reading the input (`--input FILE|-|JSON`).
 * @module
 */
import { readHostFile } from "../platform/files.ts";
import { readStdin } from "../platform/write.ts";
import { ReachError } from "../protocol/errors.ts";
import { parseJsonText } from "../protocol/json-text.ts";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Parsed `run` arguments. */
export type RunArgs = {
  pack: string;
  input: string | null;
  seed: string | undefined;
  out: string;
  approve: boolean;
  unrestricted: boolean;
  trust: string | undefined;
  key: string | undefined;
  approvals: string[];
  json: boolean;
  quiet: boolean;
  maxSteps: number | undefined;
  stepTimeoutMs: number | undefined;
  /** Independent steps at once (`--parallel N`; default: the machine's cores). */
  parallel: number | undefined;
  /** The caller's correlation id (`--request-id`, seed 004 `requestId`). */
  requestId: string | undefined;
  /** Where seed 004's live event stream goes (`--events FILE|-`), as JSONL. */
  events: string | undefined;
  /** Milliseconds between heartbeats on the event stream (`--heartbeat MS`, default 5000). */
  heartbeatMs: number;
};

export const RUN_USAGE = "reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-|JSON] [--seed N] [--out DIR] [--key FILE] [--approve] [--approval FILE]... [--unrestricted] [--trust FILE] [--max-steps N] [--step-timeout MS] [--parallel N] [--request-id ID] [--events FILE|-] [--heartbeat MS] [--quiet] [--json]";

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `run: ${message}; usage: ${RUN_USAGE}`);
}

function positiveInt(flag: string, text: string, max: number): number {
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > max) throw bad(`${flag} expects an integer 1..${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

function seedOf(text: string): string {
  if (!/^(0|[1-9]\d{0,19})$/.test(text) || BigInt(text) > 18446744073709551615n) throw bad(`--seed expects a decimal integer 0..18446744073709551615, got ${JSON.stringify(text)}`);
  return text;
}

function requestIdOf(text: string): string {
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(text)) throw bad(`--request-id expects 1-128 characters from A-Z a-z 0-9 . _ : -, got ${JSON.stringify(text.slice(0, 60))}`);
  return text;
}

/**
 * Parse the arguments after `run`.
 * @param argv the arguments
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 * @example parseRunArgs(["packs/hello", "--json"]).json // true
 */
export function parseRunArgs(argv: readonly string[]): RunArgs {
  const out: RunArgs = { pack: "", input: null, seed: undefined, out: ".reach", approve: false, unrestricted: false, trust: undefined, key: undefined, approvals: [], json: false, quiet: false, maxSteps: undefined, stepTimeoutMs: undefined, parallel: undefined, requestId: undefined, events: undefined, heartbeatMs: 5000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      return v;
    };
    if (a === "--input") out.input = value();
    else if (a === "--seed") out.seed = seedOf(value());
    else if (a === "--out") out.out = value();
    else if (a === "--approve") out.approve = true;
    else if (a === "--approval") out.approvals.push(value());
    else if (a === "--unrestricted") out.unrestricted = true;
    else if (a === "--trust") out.trust = value();
    else if (a === "--json") out.json = true;
    else if (a === "--quiet" || a === "-q") out.quiet = true;
    else if (a === "--max-steps") out.maxSteps = positiveInt(a, value(), 100);
    else if (a === "--step-timeout") out.stepTimeoutMs = positiveInt(a, value(), 3_600_000);
    else if (a === "--parallel") out.parallel = positiveInt(a, value(), 64);
    else if (a === "--key") out.key = value();
    else if (a === "--request-id") out.requestId = requestIdOf(value());
    else if (a === "--events") out.events = value();
    else if (a === "--heartbeat") out.heartbeatMs = positiveInt(a, value(), 3_600_000);
    else if (a.startsWith("-") && a !== "-") throw bad(`unknown option ${a}`);
    else if (out.pack === "") out.pack = a;
    else throw bad(`unexpected argument ${JSON.stringify(a)}`);
  }
  if (out.pack === "") throw bad("the pack directory or archive is missing");
  if (out.events === "-" && out.json) throw bad("--events - and --json both want stdout; write the events to a file (--events FILE) or drop --json");
  return out;
}

/**
 * Read the run input: `--input FILE`, `-` (stdin), or JSON written inline (a value starting with `{`, `[` or `"`);
 * default `{}`.
 * @param input the `--input` value, or null
 * @returns the parsed JSON
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be read, is not UTF-8 JSON, or is JSON the run refuses
 *   (a name twice in one object, a lone surrogate, a number out of range, nesting deeper than 256: `parseJsonText`)
 * @example const input = await readInput('{"text":"hi"}');
 */
export async function readInput(input: string | null): Promise<Json> {
  if (input === null) return {};
  const inline = /^\s*[[{"]/.test(input);
  const where = inline ? "given inline" : input === "-" ? "on stdin" : JSON.stringify(input);
  const bytes = inline ? null : input === "-" ? await readStdin() : await readHostFile(input, 64 * 1024 * 1024);
  let text: string;
  try {
    text = bytes === null ? input : new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `run: the input ${where} is not UTF-8; pass a JSON document, a file holding one, or - for stdin`);
  }
  return parseJsonText(text, { what: `run: the input ${where}`, code: "PROTO_INVALID_ARGUMENT" }) as Json;
}
