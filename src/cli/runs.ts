/**
 * `reach-wasm runs list|show|cancel|capsule …`: the run service's runs, from the command line.
 * @module
 */
import { stat } from "node:fs/promises";
import { writeFileAtomic } from "../platform/write.ts";
import type { RunRecord } from "../service/schemas.ts";
import type { CliIO } from "./io.ts";
import { clientOf, intOption, parseArgs, usageError } from "./_service-args.ts";
import { capsulePathIn, checkRunHash } from "./_capsule-download.ts";

const USAGE = "reach-wasm runs list [--status S] [--pack ID|DIGEST] [--limit N] [--cursor C] | show <runId> [--wait] | cancel <runId> | capsule <runId> [--out FILE|DIR]  [--server URL] [--token T] [--json]";
const CLIENT = ["--server", "--token"];

function line(r: RunRecord): string {
  const at = r.completedAt ?? r.startedAt ?? r.submittedAt;
  return `${r.runId}  ${r.status.padEnd(9)}  ${`${r.pack.id}@${r.pack.version}`.padEnd(24)}  ${at}  ${r.runHash ?? "-"}`;
}

function oneRunId(positional: readonly string[]): string {
  const [id, extra] = positional;
  if (id === undefined) throw usageError(USAGE, "the run id is missing");
  if (extra !== undefined) throw usageError(USAGE, `unexpected argument ${JSON.stringify(extra)}`);
  return id;
}

async function list(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, [...CLIENT, "--status", "--pack", "--limit", "--cursor"], ["--json"], USAGE);
  if (args.positional.length > 0) throw usageError(USAGE, `unexpected argument ${JSON.stringify(args.positional[0])}`);
  const limit = intOption(args, "--limit", 1, 200, USAGE);
  const status = args.values.get("--status")?.toUpperCase();
  const page = await clientOf(args).list({ status, pack: args.values.get("--pack"), cursor: args.values.get("--cursor"), limit });
  if (args.flags.has("--json")) io.stdout(JSON.stringify(page) + "\n");
  else {
    // The table is the result (stdout, one run a line, for pipes); the count and the next page's cursor are notes.
    io.stdout(page.runs.map((r) => `${line(r)}\n`).join(""));
    io.stderr(page.nextCursor === null ? `(${page.runs.length} run(s))\n` : `(${page.runs.length} run(s); more with --cursor ${page.nextCursor})\n`);
  }
  return 0;
}

async function show(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, CLIENT, ["--json", "--wait"], USAGE);
  const client = clientOf(args);
  const id = oneRunId(args.positional);
  const r = args.flags.has("--wait") ? await client.waitForEnd(id) : await client.run(id);
  if (args.flags.has("--json")) io.stdout(JSON.stringify(r) + "\n");
  else {
    io.stdout(`${line(r)}\n`);
    io.stdout(`  phase ${r.phase}, step ${r.currentStepIndex + 1}/${r.totalSteps}, attempts ${r.attempts}${r.worker === null ? "" : `, worker ${r.worker}`}${r.incidents > 0 ? `, ${r.incidents} DETERMINISM INCIDENT(S)` : ""}\n`);
    if (r.error !== null) io.stdout(`  ${r.error.code}: ${r.error.message}\n`);
  }
  return 0;
}

async function cancel(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, CLIENT, ["--json"], USAGE);
  const r = await clientOf(args).cancel(oneRunId(args.positional));
  io.stderr(`reach-wasm: run ${r.runId}: ${r.outcome === "cancelled" ? "cancelled before it started" : "asked to stop; it ends ABORTED with its capsule"}\n`);
  if (args.flags.has("--json")) io.stdout(JSON.stringify(r) + "\n");
  return 0;
}

async function capsule(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, [...CLIENT, "--out"], ["--json"], USAGE);
  const { runHash, bytes } = await clientOf(args).capsule(oneRunId(args.positional));
  checkRunHash(runHash); // it is printed, and names the file in a folder
  const out = args.values.get("--out") ?? ".";
  const isDir = await stat(out).then((s) => s.isDirectory(), () => false);
  const file = isDir ? capsulePathIn(out, runHash) : out;
  await writeFileAtomic(file, bytes, 0o600, isDir ? { within: out } : {});
  io.stderr(`reach-wasm: capsule ${file} (${bytes.length} bytes, run hash ${runHash})\n`);
  if (args.flags.has("--json")) io.stdout(JSON.stringify({ runHash, capsule: file, bytes: bytes.length }) + "\n");
  return 0;
}

/**
 * The `runs` command.
 * @param argv arguments after `runs`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runRunsCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "list":
      return await list(rest, io);
    case "show":
      return await show(rest, io);
    case "cancel":
      return await cancel(rest, io);
    case "capsule":
      return await capsule(rest, io);
    default:
      throw usageError(USAGE, sub === undefined ? "a subcommand is missing" : `unknown subcommand ${JSON.stringify(sub)}`);
  }
}
