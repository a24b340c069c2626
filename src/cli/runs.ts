/**
 * `reach-wasm runs list|show|cancel|capsule …`: the run service's runs, from the command line.
 * @module
 */
import { stat } from "node:fs/promises";
import { writeFileAtomic } from "../platform/write.ts";
import type { RunRecord } from "../service/mod.ts";
import type { CliIO } from "./io.ts";
import { clientOf } from "./_service-args.ts";
import { findCommand } from "./commands.ts";
import { parseCommand, subcommandOf } from "./options.ts";
import { RUNS_CANCEL, RUNS_CAPSULE, RUNS_LIST, RUNS_SHOW, RUNS_SUBCOMMANDS } from "./specs-service.ts";
import { capsulePathIn, checkRunHash } from "./_capsule-download.ts";


function line(r: RunRecord): string {
  const at = r.completedAt ?? r.startedAt ?? r.submittedAt;
  return `${r.runId}  ${r.status.padEnd(9)}  ${`${r.pack.id}@${r.pack.version}`.padEnd(24)}  ${at}  ${r.runHash ?? "-"}`;
}

async function list(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args } = parseCommand(RUNS_LIST, argv);
  const page = await clientOf(args).list({ status: args.status?.toUpperCase(), pack: args.pack, cursor: args.cursor, limit: args.limit });
  if (args.json) io.stdout(JSON.stringify(page) + "\n");
  else {
    // The table is the result (stdout, one run a line, for pipes); the count and the next page's cursor are notes.
    io.stdout(page.runs.map((r) => `${line(r)}\n`).join(""));
    io.stderr(page.nextCursor === null ? `(${page.runs.length} run(s))\n` : `(${page.runs.length} run(s); more with --cursor ${page.nextCursor})\n`);
  }
  return 0;
}

async function show(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args, positionals } = parseCommand(RUNS_SHOW, argv);
  const client = clientOf(args);
  const id = positionals[0]!;
  const r = args.wait ? await client.waitForEnd(id) : await client.run(id);
  if (args.json) io.stdout(JSON.stringify(r) + "\n");
  else {
    io.stdout(`${line(r)}\n`);
    io.stdout(`  phase ${r.phase}, step ${r.currentStepIndex + 1}/${r.totalSteps}, attempts ${r.attempts}${r.worker === null ? "" : `, worker ${r.worker}`}${r.incidents > 0 ? `, ${r.incidents} DETERMINISM INCIDENT(S)` : ""}\n`);
    if (r.error !== null) io.stdout(`  ${r.error.code}: ${r.error.message}\n`);
  }
  return 0;
}

async function cancel(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args, positionals } = parseCommand(RUNS_CANCEL, argv);
  const r = await clientOf(args).cancel(positionals[0]!);
  io.stderr(`reach-wasm: run ${r.runId}: ${r.outcome === "cancelled" ? "cancelled before it started" : "asked to stop; it ends ABORTED with its capsule"}\n`);
  if (args.json) io.stdout(JSON.stringify(r) + "\n");
  return 0;
}

async function capsule(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args, positionals } = parseCommand(RUNS_CAPSULE, argv);
  const { runHash, bytes } = await clientOf(args).capsule(positionals[0]!);
  checkRunHash(runHash); // it is printed, and names the file in a folder
  const out = args.out ?? ".";
  const isDir = await stat(out).then((s) => s.isDirectory(), () => false);
  const file = isDir ? capsulePathIn(out, runHash) : out;
  await writeFileAtomic(file, bytes, 0o600, isDir ? { within: out } : {});
  io.stderr(`reach-wasm: capsule ${file} (${bytes.length} bytes, run hash ${runHash})\n`);
  if (args.json) io.stdout(JSON.stringify({ runHash, capsule: file, bytes: bytes.length }) + "\n");
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
  const { spec, argv: rest } = subcommandOf(findCommand("runs")!, RUNS_SUBCOMMANDS, argv);
  switch (spec.name) {
    case "runs list":
      return await list(rest, io);
    case "runs show":
      return await show(rest, io);
    case "runs cancel":
      return await cancel(rest, io);
    default:
      return await capsule(rest, io);
  }
}
