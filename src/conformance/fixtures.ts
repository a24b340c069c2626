/**
 * Runs of the example packs that several cases inspect, made once per suite run through the implementation's CLI:
 * `run <pack> --input FILE --seed N --out DIR --json` (ARCHITECTURE.md "Command line"), and the upstream JSON
 * Schemas the schema cases validate against.
 * @module
 */
import { compileSchema, loadFullValidator } from "../engine/mod.ts";
import type { SchemaValidator } from "../engine/mod.ts";
import type { CliOutcome, SuiteContext } from "./context.ts";

/** The input of the suite's runs of `packs/hello`. */
export const HELLO_INPUT = { text: "the conformance suite" };
/** The seed of the suite's runs. */
export const SEED = "7";

/** A run of a pack through the implementation. */
export type PackRun = {
  outcome: CliOutcome;
  /** The capsule's path from `--json` (`capsule`), or null. */
  capsule: string | null;
  /** The run hash from `--json`, or null. */
  runHash: string | null;
  /** The run folder from `--json` (`out`), or null. */
  out: string | null;
  /** The `--out` folder given. */
  outRoot: string;
};

/** How to run a pack. */
export type PackRunOptions = { input?: unknown; seed?: string; unrestricted?: boolean; pack?: string };

/**
 * Run a pack once per suite run under `key` (a second call returns the first run).
 * @param ctx the suite
 * @param key the fixture's name (also its `--out` folder)
 * @param packRel the pack, relative to the package root
 * @param opts input, seed and `--unrestricted`
 * @returns the run
 */
export function runPack(ctx: SuiteContext, key: string, packRel: string, opts: PackRunOptions = {}): Promise<PackRun> {
  return ctx.once(`run:${key}`, async () => {
    const pack = opts.pack ?? (await ctx.pack(packRel));
    const outRoot = ctx.at("out", key);
    const args = ["run", pack, "--seed", opts.seed ?? SEED, "--out", outRoot, "--json"];
    if (opts.input !== undefined) args.push("--input", await ctx.jsonFile(`${key}.json`, opts.input));
    if (opts.unrestricted === true) args.push("--unrestricted");
    const outcome = await ctx.cli(args);
    const str = (k: string): string | null => (typeof outcome.json?.[k] === "string" ? (outcome.json[k] as string) : null);
    return { outcome, capsule: str("capsule"), runHash: str("runHash"), out: str("out"), outRoot };
  });
}

/**
 * A run that must complete (exit 0, `COMPLETED`, a run hash and a capsule), else the case fails saying so.
 * @param ctx the suite
 * @param key the fixture's name
 * @param packRel the pack
 * @param opts input, seed, `--unrestricted`
 * @returns the run, with its capsule path and run hash
 * @throws Error naming what the implementation did instead
 */
export async function completedRun(ctx: SuiteContext, key: string, packRel: string, opts: PackRunOptions = {}): Promise<PackRun & { capsule: string; runHash: string }> {
  const r = await runPack(ctx, key, packRel, opts);
  const o = r.outcome;
  if (o.code !== 0 || o.json?.["status"] !== "COMPLETED" || r.capsule === null || r.runHash === null) {
    throw new Error(`setup: run ${packRel} should complete (exit 0, status COMPLETED, runHash, capsule); got exit ${o.code}${o.timedOut ? " (timed out)" : ""}, ${o.json === null ? "no JSON object on stdout" : `status ${String(o.json["status"])}`}${tail(o.stderr)}`);
  }
  return r as PackRun & { capsule: string; runHash: string };
}

/** The last line of stderr, for a failure message. */
export function tail(stderr: string): string {
  const lines = stderr.trim().split("\n").filter((l) => l.trim() !== "");
  const last = lines.at(-1);
  return last === undefined ? "" : `; stderr: ${last.slice(0, 300)}`;
}

/** The hello runs every category uses: seed 7, the suite's input. */
export function helloRun(ctx: SuiteContext, key = "hello-a"): ReturnType<typeof completedRun> {
  return completedRun(ctx, key, "packs/hello", { input: HELLO_INPUT });
}

/** The notes run (five steps, three sandboxes, a planner; `--unrestricted`). */
export function notesRun(ctx: SuiteContext, key = "notes-a"): ReturnType<typeof completedRun> {
  return completedRun(ctx, key, "packs/notes", { unrestricted: true });
}

/** The upstream schemas (seed 003's JSON Schemas, `conformance/upstream-schemas/`). */
export type UpstreamSchema = "capsule" | "error" | "event" | "pack" | "run";

/**
 * A validator of an upstream schema (draft 2020-12, with formats).
 * @param ctx the suite
 * @param name which schema
 * @returns the validator
 */
export function upstreamSchema(ctx: SuiteContext, name: UpstreamSchema): Promise<SchemaValidator> {
  return ctx.once(`schema:${name}`, async () => {
    await loadFullValidator();
    const bytes = await ctx.host.readFile(ctx.resource(`conformance/upstream-schemas/${name}.schema.json`));
    if (bytes === null) throw new Error(`conformance/upstream-schemas/${name}.schema.json is not installed; reinstall reach-wasm`);
    return compileSchema(JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>);
  });
}

/**
 * Validate against an upstream schema or throw the first problems.
 * @param validate the validator
 * @param value the document
 * @param what what it is, for the message
 * @throws Error listing the problems
 */
export function mustValidate(validate: SchemaValidator, value: unknown, what: string): void {
  const r = validate(value);
  if (!r.ok) throw new Error(`${what} does not validate: ${r.problems.slice(0, 3).join("; ")}`);
}
