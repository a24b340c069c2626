/**
 * `reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-] [--seed N] [--out DIR] [--approve] [--unrestricted]
 * [--max-steps N] [--step-timeout MS] [--json]` (ARCHITECTURE.md "Command line"; issue 4 "The command").
 *
 * Loads and locks the pack, plans, gates and executes it, writes the run's files to `--out` atomically, reports
 * progress per step on stderr and, with `--json`, exactly one JSON object on stdout:
 * `{"runId","status","runHash","capsule","out","error"?}`. Exit 0 COMPLETED, 1 FAILED or ABORTED, 2 bad invocation
 * or invalid input (unreadable pack, schema error, unsupported specVersion).
 * @module
 */
import { join, resolve } from "node:path";
import { runEngine } from "../engine/engine.ts";
import type { EngineRun } from "../engine/engine.ts";
import type { EngineEnvironment } from "../engine/runners.ts";
import { loadPack, packTrust } from "../engine/pack.ts";
import type { LoadedPack } from "../engine/pack.ts";
import { builtinComponents } from "../engine/runners.ts";
import type { RunProgress } from "../engine/types.ts";
import { parseSeed } from "../determinism/prng.ts";
import { readHostFile } from "../platform/files.ts";
import { readPackFiles } from "../platform/pack-files.ts";
import { readQuickJsEngineWasm } from "../platform/quickjs-engine.ts";
import { readPythonWasm } from "../platform/python-engine.ts";
import { abortOnSignals, readStdin, writeDirAtomic, writeFileAtomic } from "../platform/write.ts";
import { parsePrivateKeyFile } from "../trust/keys.ts";
import { ReachError } from "../protocol/errors.ts";
import type { JsonValue } from "../sandbox/types.ts";
import type { CliIO } from "./cli.ts";
import { loadTrustStore } from "./trust.ts";

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
  json: boolean;
  maxSteps: number | undefined;
  stepTimeoutMs: number | undefined;
};

const USAGE = "reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-] [--seed N] [--out DIR] [--key FILE] [--approve] [--unrestricted] [--trust FILE] [--max-steps N] [--step-timeout MS] [--json]";

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `run: ${message}; usage: ${USAGE}`);
}

function positiveInt(flag: string, text: string, max: number): number {
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > max) throw bad(`${flag} expects an integer 1..${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * Parse the arguments after `run`.
 * @param argv the arguments
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function parseRunArgs(argv: readonly string[]): RunArgs {
  const out: RunArgs = { pack: "", input: null, seed: undefined, out: ".reach", approve: false, unrestricted: false, trust: undefined, key: undefined, json: false, maxSteps: undefined, stepTimeoutMs: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      return v;
    };
    if (a === "--input") out.input = value();
    else if (a === "--seed") {
      const v = value();
      try {
        out.seed = parseSeed(v);
      } catch {
        throw bad(`--seed expects a decimal integer 0..18446744073709551615, got ${JSON.stringify(v)}`);
      }
    } else if (a === "--out") out.out = value();
    else if (a === "--approve") out.approve = true;
    else if (a === "--unrestricted") out.unrestricted = true;
    else if (a === "--trust") out.trust = value();
    else if (a === "--json") out.json = true;
    else if (a === "--max-steps") out.maxSteps = positiveInt(a, value(), 100);
    else if (a === "--step-timeout") out.stepTimeoutMs = positiveInt(a, value(), 3_600_000);
    else if (a === "--key") out.key = value();
    else if (a.startsWith("-") && a !== "-") throw bad(`unknown option ${a}`);
    else if (out.pack === "") out.pack = a;
    else throw bad(`unexpected argument ${JSON.stringify(a)}`);
  }
  if (out.pack === "") throw bad("the pack directory or archive is missing");
  return out;
}

/**
 * Read the run input (`--input FILE|-`; default `{}`).
 * @param path the file, `-` for stdin, or null
 * @returns the parsed JSON
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be read or is not UTF-8 JSON
 * @example const input = await readInput("in.json");
 */
export async function readInput(path: string | null): Promise<JsonValue> {
  if (path === null) return {};
  const bytes = path === "-" ? await readStdin() : await readHostFile(path, 64 * 1024 * 1024);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as JsonValue;
  } catch (err) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `run: the input ${path === "-" ? "on stdin" : JSON.stringify(path)} is not UTF-8 JSON (${(err as Error).message}); pass a JSON document`);
  }
}

function describe(p: RunProgress): string {
  if (p.kind === "planned") return `plan ${p.planId}: ${p.steps} step${p.steps === 1 ? "" : "s"}, hash ${p.planHash.slice(0, 16)}…`;
  if (p.kind === "replan") return `replanning (attempt ${p.attempt}) after ${p.reason}`;
  const head = `[${p.index + 1}/${p.total}] ${p.stepId} (${p.tool})`;
  if (p.status === "started") return `${head} …`;
  return `${head} ${p.status}${p.code === undefined ? "" : ` ${p.code}`} in ${p.durationMs} ms`;
}

function needsComponents(files: ReadonlyMap<string, Uint8Array>): boolean {
  const doc = files.get("reach.json");
  if (doc === undefined) return false;
  try {
    const tools = (JSON.parse(new TextDecoder().decode(doc)) as { tools?: Record<string, { kind?: unknown }> }).tools ?? {};
    return Object.values(tools).some((t) => t?.kind === "component");
  } catch {
    return false;
  }
}

/**
 * Load a pack from the host (directory or `.tar.gz`).
 * @param path the pack path
 * @returns the loaded pack
 */
export async function loadHostPack(path: string): Promise<LoadedPack> {
  const files = await readPackFiles(path);
  const componentDigests = needsComponents(files) ? new Set((await builtinComponents()).map((c) => c.componentSha256)) : undefined;
  return await loadPack(files, componentDigests === undefined ? {} : { componentDigests });
}

/**
 * The `run` command.
 * @param argv arguments after `run`
 * @param io output streams
 * @returns the exit code
 */
export async function runRunCommand(argv: readonly string[], io: CliIO): Promise<number> {
  // a delegated run (--on NODE --delegation FILE --dir NODE_DIR) is its own client: src/cli/delegated-run.ts
  if (argv.some((a) => a === "--on" || a === "--delegation" || a === "--dir")) return await (await import("./delegated-run.ts")).runDelegatedRunCommand(argv, io);
  const args = parseRunArgs(argv);
  const env: EngineEnvironment = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
  const loaded = await loadHostPack(args.pack);
  const input = await readInput(args.input);
  const key = args.key === undefined ? undefined : parsePrivateKeyFile(new TextDecoder().decode(await readHostFile(args.key, 64 * 1024))).privateKey;
  for (const w of loaded.warnings) io.stderr(`reach-wasm: warning: ${w}\n`);
  const store = await loadTrustStore(args.trust);
  const trust = packTrust(loaded, store); // a bad signature stops here (exit 2)
  const restricted = !trust.trusted && !args.unrestricted;
  const who = `pack ${loaded.pack.id}@${loaded.pack.version}`;
  if (trust.trusted) io.stderr(`reach-wasm: ${who} is signed by trusted key ${trust.keyName ?? trust.publicKey}\n`);
  else if (restricted) {
    io.stderr(`reach-wasm: ${who} is ${trust.signed ? "signed by a key that is not in the trust store" : "not signed"}: running it in the restricted executor (no network, no writes outside temp/, no memory writes); pass --unrestricted to grant its declared capabilities\n`);
  } else io.stderr(`reach-wasm: ${who} is ${trust.signed ? "signed by an untrusted key" : "not signed"}; running it unrestricted because of --unrestricted\n`);
  const signals = abortOnSignals();
  let run: EngineRun;
  try {
    run = await runEngine(env, {
      pack: { files: loaded.files },
      input,
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      approve: args.approve,
      ...(args.maxSteps === undefined ? {} : { maxSteps: args.maxSteps }),
      ...(args.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: args.stepTimeoutMs }),
      trust: { store, unrestricted: args.unrestricted },
      ...(key === undefined ? {} : { key }),
      signal: signals.signal,
      fetch: (url, init) => fetch(url, init),
      onProgress: (p) => io.stderr(`reach-wasm: ${describe(p)}\n`),
    });
  } finally {
    signals.dispose();
  }
  const outRoot = resolve(args.out);
  const outDir = join(outRoot, "runs", run.runHash);
  const capsulePath = join(outRoot, run.capsule.name);
  await writeFileAtomic(capsulePath, run.capsule.bytes);
  await writeDirAtomic(outDir, run.files);
  const summary = run.error === null ? "" : `: ${run.error.code}: ${run.error.message}`;
  io.stderr(`reach-wasm: ${run.status} ${run.runHash}${summary}\nreach-wasm: capsule ${capsulePath}${run.capsule.signed ? " (signed)" : ""}; run files in ${outDir}\n`);
  if (args.json) {
    const line: Record<string, unknown> = { runId: run.runId, status: run.status, runHash: run.runHash, capsule: capsulePath, out: outDir };
    if (run.result["error"] !== undefined) line["error"] = run.result["error"];
    io.stdout(JSON.stringify(line) + "\n");
  }
  return run.status === "COMPLETED" ? 0 : 1;
}
