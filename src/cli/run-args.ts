/**
 * The arguments of `run` (local and delegated): parsing, and reading the input (`--input FILE|-|JSON`).
 * @module
 */
import { readHostFile } from "../platform/files.ts";
import { readStdin } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseJsonText } from "../protocol/mod.ts";
import { parseCommand, usageError } from "./options.ts";
import { RUN } from "./specs-run.ts";
import type { SecretSource } from "./secret-args.ts";

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
  /** Where each run's trace goes (`--otlp-endpoint URL`, OTLP/HTTP), live; undefined: nowhere. */
  otlpEndpoint: string | undefined;
  /** Where the declared secrets' values come from (`--secret`; read just before the run). */
  secrets: SecretSource[];
};

/** Where a delegated run goes (`--on`, `--delegation`, `--dir`, `--ca`); null for a local run. */
export type Delegated = { on: string; delegation: string; dir: string; ca: string | undefined };

/**
 * Parse the arguments after `run` (declared in `specs-run.ts`).
 * @param argv the arguments
 * @returns the parsed arguments, and where a delegated run goes (null: a local run)
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 * @example parseRunArgs(["packs/hello", "--json"]).json // true
 */
export function parseRunArgs(argv: readonly string[]): RunArgs & { delegated: Delegated | null } {
  const { values: v, positionals } = parseCommand(RUN, argv);
  if (v.events === "-" && v.json) throw usageError(RUN, "--events - and --json both want stdout; write the events to a file (--events FILE) or drop --json");
  const given = (["on", "delegation", "dir", "ca"] as const).filter((k) => v[k] !== undefined);
  if (v.on !== undefined && v.secret.length > 0) throw usageError(RUN, "a delegated run (--on) cannot carry --secret: values never leave this machine; run the pack here");
  if (given.length > 0 && (v.on === undefined || v.delegation === undefined || v.dir === undefined)) {
    throw usageError(RUN, `a delegated run needs --on NODE_ID|URL, --delegation FILE and --dir NODE_DIR together (got ${given.map((k) => `--${k}`).join(", ")})`);
  }
  if (given.length > 0 && v["otlp-endpoint"] !== undefined) throw usageError(RUN, "--otlp-endpoint applies to a local run (a delegated run's capsule can be exported with `reach-wasm export otel`)");
  return {
    pack: positionals[0]!, input: v.input ?? null, seed: v.seed, out: v.out ?? ".reach", approve: v.approve, unrestricted: v.unrestricted,
    trust: v.trust, key: v.key, approvals: v.approval, json: v.json, quiet: v.quiet, maxSteps: v["max-steps"], stepTimeoutMs: v["step-timeout"],
    parallel: v.parallel, requestId: v["request-id"], events: v.events, heartbeatMs: v.heartbeat ?? 5000, otlpEndpoint: v["otlp-endpoint"], secrets: v.secret,
    delegated: v.on === undefined || v.delegation === undefined || v.dir === undefined ? null : { on: v.on, delegation: v.delegation, dir: v.dir, ca: v.ca },
  };
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
