/**
 * `reach-wasm fork <capsule> --at STEP [--args JSON|FILE] [--input JSON|FILE] [--tool NAME=MODULE]... [--response
 * K=FILE]... [--seed N] [--out DIR] [--key FILE] [--json] [--quiet]` and `reach-wasm resume <capsule> [--out DIR]
 * [--key FILE] [--json] [--quiet]` (`src/engine/fork.ts`): a new run from a recorded one, written like `run` writes
 * one — the capsule and the run files under `--out`, each in place only once whole. SIGINT/SIGTERM end the live steps
 * ABORTED (the new run can then be resumed in its turn).
 * Exit 0 COMPLETED, 1 FAILED or ABORTED or the parent's steps no longer reproduce, 2 bad invocation or refused.
 * @module
 */
import { join } from "node:path";
import { readRunCapsule } from "../engine/mod.ts";
import { DEFAULT_ARCHIVE_LIMITS, parsePrivateKeyFile } from "../engine/mod.ts";
import { forkCapsule, resumeCapsule } from "../engine/mod.ts";
import type { BranchedRun, ForkChanges } from "../engine/mod.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { readHostFile, readPrivateKeyFile } from "../platform/files.ts";
import { refuseRunDirectory } from "./run-source.ts";
import { prepareOutDir } from "../platform/out-dir.ts";
import { abortOnSignals, stageDir, stageFile } from "../platform/write.ts";
import { parseJsonText } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { parseCommand } from "./options.ts";
import { createProgress } from "./progress.ts";
import { readSecrets } from "./secret-args.ts";
import { FORK, RESUME } from "./specs-lineage.ts";

/** Largest `--args` / `--input` / `--response` file (64 MiB) and `--tool` module (256 MiB). */
const MAX_JSON_BYTES = 64 * 1024 * 1024;
const MAX_MODULE_BYTES = 256 * 1024 * 1024;

/** A JSON value given inline (starting with `{ [ "`) or in a file. */
async function jsonArg(text: string, what: string): Promise<JsonValue> {
  const inline = /^\s*[[{"]/.test(text);
  const bytes = inline ? null : await readHostFile(text, MAX_JSON_BYTES);
  let source: string;
  try {
    source = bytes === null ? text : new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `fork: ${what} ${JSON.stringify(text.slice(0, 80))} is not UTF-8 JSON`);
  }
  return parseJsonText(source, { what: `fork: ${what}`, code: "PROTO_INVALID_ARGUMENT" }) as JsonValue;
}

async function forkChanges(values: ReturnType<typeof parseCommand<typeof FORK>>["values"]): Promise<ForkChanges> {
  const changes: { -readonly [K in keyof ForkChanges]: ForkChanges[K] } = {};
  if (values.args !== undefined) {
    const v = await jsonArg(values.args, "--args");
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw new ReachError("PROTO_INVALID_ARGUMENT", "fork: --args must be a JSON object (the step's arguments)");
    changes.arguments = v as JsonObject;
  }
  if (values.input !== undefined) changes.input = await jsonArg(values.input, "--input");
  if (values.seed !== undefined) changes.seed = values.seed;
  const tools = new Map<string, Uint8Array>();
  for (const [name, path] of values.tool) {
    if (tools.has(name)) throw new ReachError("PROTO_INVALID_ARGUMENT", `fork: --tool ${name} is given twice; give each tool once`);
    tools.set(name, await readHostFile(path, MAX_MODULE_BYTES));
  }
  if (tools.size > 0) changes.tools = tools;
  const responses = new Map<number, Uint8Array>();
  for (const [call, path] of values.response) {
    if (responses.has(call)) throw new ReachError("PROTO_INVALID_ARGUMENT", `fork: --response ${call} is given twice; give each host call once`);
    responses.set(call, await readHostFile(path, MAX_JSON_BYTES));
  }
  if (responses.size > 0) changes.responses = responses;
  return changes;
}

/** Write the capsule, then the run files, each under a temporary name first. */
function write(outRoot: string, run: BranchedRun): { capsulePath: string; outDir: string } {
  const capsulePath = join(outRoot, run.capsule.name);
  const outDir = join(outRoot, "runs", run.runHash);
  const capsule = stageFile(capsulePath, run.capsule.bytes, 0o600, { within: outRoot });
  let dir;
  try {
    dir = stageDir(outDir, run.files, { within: outRoot, mode: 0o600 });
  } catch (err) {
    capsule.discard();
    throw err;
  }
  capsule.commit();
  dir.commit();
  return { capsulePath, outDir };
}

type Common = { capsule: string; out: string | undefined; key: string | undefined; json: boolean };

/** Read the parent, make the new run (`make`), write it and say what happened. */
async function branchCommand(name: string, c: Common, io: CliIO, make: (capsule: ReturnType<typeof readRunCapsule>, signal: AbortSignal, key: Uint8Array | undefined) => Promise<BranchedRun>): Promise<number> {
  const progress = createProgress(io);
  await refuseRunDirectory(c.capsule, name);
  const outRoot = await prepareOutDir(c.out ?? ".reach", c.capsule);
  const parent = readRunCapsule(await readHostFile(c.capsule, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes));
  const key = c.key === undefined ? undefined : parsePrivateKeyFile(new TextDecoder().decode(await readPrivateKeyFile(c.key))).privateKey;
  const signals = abortOnSignals();
  let run: BranchedRun;
  try {
    run = await progress.task(`${name === "fork" ? "forking" : "resuming"} run ${parent.index.runHash.slice(0, 12)}`, () => make(parent, signals.signal, key));
  } catch (err) {
    progress.done();
    if (!(err instanceof ReachError) || err.code !== "REPLAY_DIVERGENCE") throw err;
    io.stderr(`reach-wasm: REPLAY_DIVERGENCE: ${err.message}; nothing was written\n`);
    if (c.json) io.stdout(JSON.stringify({ error: err.toDetails() }) + "\n");
    return 1;
  } finally {
    signals.dispose();
  }
  progress.done();
  const written = write(outRoot, run);
  const summary = run.error === null ? "" : `: ${run.error.code}: ${run.error.message}`;
  progress.line(`${run.status} ${run.runHash} (${name === "fork" ? `forked from ${run.parentRunHash} at "${run.at}"` : `resumed ${run.parentRunHash} after ${run.before.length} step(s)`})${summary}`);
  progress.line(`capsule ${written.capsulePath}${run.capsule.signed ? " (signed)" : ""}; run files in ${written.outDir}`);
  if (c.json) {
    const line: Record<string, unknown> = { runId: run.runId, status: run.status, runHash: run.runHash, parentRunHash: run.parentRunHash, at: run.at, before: run.before, capsule: written.capsulePath, out: written.outDir };
    if (run.error !== null) line["error"] = run.error.toDetails();
    io.stdout(JSON.stringify(line) + "\n");
  }
  return run.status === "COMPLETED" ? 0 : 1;
}

/**
 * The `fork` command.
 * @param argv arguments after `fork`
 * @param io output streams
 * @returns the exit code
 */
export async function runForkCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(FORK, argv);
  const changes = await forkChanges(values);
  const secrets = readSecrets(values.secret, "fork");
  const c = { capsule: positionals[0]!, out: values.out, key: values.key, json: values.json };
  return await branchCommand("fork", c, io, (parent, signal, key) => forkCapsule(parent, defaultEnvironment(), values.at, changes, { signal, secrets, ...(key === undefined ? {} : { key }), fetch: (u, i) => fetch(u, i) }));
}

/**
 * The `resume` command.
 * @param argv arguments after `resume`
 * @param io output streams
 * @returns the exit code
 */
export async function runResumeCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(RESUME, argv);
  const secrets = readSecrets(values.secret, "resume");
  const c = { capsule: positionals[0]!, out: values.out, key: values.key, json: values.json };
  return await branchCommand("resume", c, io, (parent, signal, key) => resumeCapsule(parent, defaultEnvironment(), { signal, secrets, ...(key === undefined ? {} : { key }), fetch: (u, i) => fetch(u, i) }));
}
