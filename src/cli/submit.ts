/**
 * `reach-wasm submit <pack> [--server URL] [--token T] [--input FILE|-|JSON] [--seed N] [--wait] [--json]`: send a
 * run to a run service (the pack is uploaded only when the service does not have it yet). With `--wait`, progress
 * goes to stderr and the exit code is the run's, as for `run`: 0 COMPLETED, 1 FAILED or ABORTED, 2 refused.
 * @module
 */
import { writeArchive } from "../engine/mod.ts";
import { readHostFile } from "../platform/files.ts";
import { readPackFiles } from "../host/mod.ts";
import { readStdin, writeFileAtomic } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseJsonText } from "../protocol/mod.ts";
import type { ServiceClient } from "../service/mod.ts";
import type { RunOptions, RunRecord, ServiceEvent } from "../service/mod.ts";
import { packDigest } from "../engine/mod.ts";
import type { CliIO } from "./io.ts";
import { clientOf } from "./_service-args.ts";
import { parseCommand, usageError } from "./options.ts";
import type { Values } from "./options.ts";
import { SUBMIT } from "./specs-service.ts";
import { capsulePathIn } from "./_capsule-download.ts";
import { readSecrets } from "./secret-args.ts";

async function readInput(spec: string | undefined): Promise<unknown> {
  if (spec === undefined) return undefined;
  const inline = /^\s*[[{]/.test(spec);
  const text = inline ? spec : new TextDecoder("utf-8", { fatal: true }).decode(spec === "-" ? await readStdin() : await readHostFile(spec, 64 * 1024 * 1024));
  try {
    return parseJsonText(text, { what: `--input ${inline ? "(inline JSON)" : JSON.stringify(spec)}`, code: "PROTO_INVALID_ARGUMENT" });
  } catch (err) {
    throw usageError(SUBMIT, (err as Error).message);
  }
}

async function options(args: Values<typeof SUBMIT>): Promise<RunOptions> {
  const { seed, "max-steps": maxSteps, "step-timeout": stepTimeoutMs, "request-id": requestId } = args;
  const input = await readInput(args.input);
  return {
    ...(input === undefined ? {} : { input: input as RunOptions["input"] }),
    ...(seed === undefined ? {} : { seed }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(args.approve ? { approve: true } : {}),
    ...(maxSteps === undefined ? {} : { maxSteps }),
    ...(stepTimeoutMs === undefined ? {} : { stepTimeoutMs }),
  };
}

/**
 * One progress line for an event.
 * @param e the event
 * @returns the line, or null for events not worth a line
 */
export function describeEvent(e: ServiceEvent): string | null {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const step = `[${(e.stepIndex ?? 0) + 1}/${String(d["total"] ?? "?")}] ${String(d["stepId"] ?? "")} (${e.toolName ?? "?"})`;
  switch (e.eventType) {
    case "run_started":
      return `attempt ${String(d["attempt"])}: plan ${String(d["planId"])}, ${String(d["totalSteps"])} step(s)`;
    case "step_started":
      return `${step} …`;
    case "step_completed":
      return `step ${String(d["stepId"])} (${e.toolName ?? "?"}) ${String(d["status"])}${d["code"] === undefined ? "" : ` ${String(d["code"])}`} in ${String(d["durationMs"])} ms`;
    case "replan_triggered":
      return `replanning (attempt ${String(d["attempt"])}) after ${String(d["reason"])}`;
    case "run_completed":
    case "run_failed":
    case "run_cancelled":
    case "timeout_error":
      return `${e.eventType}${d["runHash"] ? ` ${String(d["runHash"])}` : ""}`;
    default:
      return null;
  }
}

/**
 * Follow a run's events on stderr until it ends, then return its record.
 * @param client the service client
 * @param runId the run
 * @param io output streams
 * @returns the final record
 */
export async function followRun(client: ServiceClient, runId: string, io: CliIO): Promise<RunRecord> {
  try {
    for await (const e of client.events(runId)) {
      const line = describeEvent(e);
      if (line !== null) io.stderr(`reach-wasm: ${line}\n`);
    }
  } catch (err) {
    if (!(err instanceof ReachError) || err.code !== "EXEC_RESOURCE_UNAVAILABLE") io.stderr(`reach-wasm: the event stream broke (${(err as Error).message}); waiting for the run's end\n`);
  }
  return await client.waitForEnd(runId);
}

/**
 * The `submit` command.
 * @param argv arguments after `submit`
 * @param io output streams
 * @returns 0 accepted (or COMPLETED with --wait), 1 FAILED/ABORTED with --wait, 2 refused or bad invocation
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runSubmitCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args, positionals } = parseCommand(SUBMIT, argv);
  const path = positionals[0]!;
  if (args.out !== undefined && !args.wait) throw usageError(SUBMIT, "--out saves the capsule of a finished run; add --wait");
  const client = clientOf(args);
  const files = await readPackFiles(path);
  const digest = packDigest(files);
  const archive = writeArchive([...files].map(([p, bytes]) => ({ path: p, bytes })));
  const secrets = readSecrets(args.secret, "submit");
  const accepted = await client.submit(digest, archive, await options(args), Object.keys(secrets).length === 0 ? undefined : secrets);
  io.stderr(`reach-wasm: submitted run ${accepted.runId} (${accepted.status})\n`);
  if (!args.wait) {
    if (args.json) io.stdout(JSON.stringify(accepted) + "\n");
    return 0;
  }
  const record = await followRun(client, accepted.runId, io);
  const summary = record.error === null ? "" : `: ${record.error.code}: ${record.error.message}`;
  io.stderr(`reach-wasm: ${record.status} ${record.runHash ?? "(no run hash)"}${summary}\n`);
  const out = args.out;
  if (out !== undefined && record.capsule !== null) {
    const { runHash, bytes } = await client.capsule(record.runId);
    const file = capsulePathIn(out, runHash);
    if (record.runHash !== null && runHash !== record.runHash) throw new ReachError("PROTO_INVALID_ARGUMENT", `the server sent the capsule of run hash ${runHash}, but the run ended with ${String(record.runHash)}; nothing was written`);
    await writeFileAtomic(file, bytes, 0o600, { within: out });
    io.stderr(`reach-wasm: capsule ${file}\n`);
  }
  if (args.json) io.stdout(JSON.stringify(record) + "\n");
  return record.status === "COMPLETED" ? 0 : 1;
}
