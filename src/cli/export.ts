/**
 * `reach-wasm export otel <capsule|run-dir> [--out FILE] [--json]`: the run as OpenTelemetry traces in OTLP/JSON
 * (`src/report/otel.ts`, docs/opentelemetry.md): the same bytes for the same capsule, on every runtime. The capsule's
 * event chain must verify (its run hash names the trace). Exit 0 written, 2 unreadable or damaged input, or `--out`
 * cannot be written.
 * @module
 */
import { resolve } from "node:path";
import { encodeOtlpJson } from "../report/mod.ts";
import { otelTrace } from "../report/mod.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { refuseOutputOverInput } from "../platform/files.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { findCommand } from "./commands.ts";
import { parseCommand, subcommandOf } from "./options.ts";
import { EXPORT_OTEL, EXPORT_SUBCOMMANDS } from "./specs-export.ts";
import { readHostRun } from "./run-source.ts";
import { VERSION } from "./version.ts";

/**
 * The `export` command.
 * @param argv arguments after `export`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError `PROTO_INVALID_ARGUMENT` / `REPLAY_CAPSULE_*` (exit 2, reported by `main`)
 * @example await runExportCommand(["otel", "x.capsule.tar.gz", "--out", "x.otlp.json"], io) // 0
 */
export async function runExportCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { argv: rest } = subcommandOf(findCommand("export")!, EXPORT_SUBCOMMANDS, argv);
  const { values, positionals } = parseCommand(EXPORT_OTEL, rest);
  if (values.out !== undefined) await refuseOutputOverInput(values.out, [positionals[0]], "write the traces to another file, e.g. run.otlp.json");
  const run = await readHostRun(positionals[0]!);
  const damaged = run.capsule?.damaged ?? [];
  if (damaged.length > 0) throw new ReachError("REPLAY_CAPSULE_INVALID", `export otel: ${damaged.map((d) => `${d.path} (${d.reason})`).join(", ")} do not match the capsule's index; run \`reach-wasm verify\` on it — a damaged capsule is not exported`);
  const trace = otelTrace(run.source.entries, { scope: { name: "reach-wasm", version: VERSION } });
  const text = encodeOtlpJson([trace]);
  if (values.out === undefined) {
    io.stdout(text + "\n");
    return 0;
  }
  const out = resolve(values.out);
  await writeFileAtomic(out, new TextEncoder().encode(text), 0o600); // it names the run's tools and calls: private, like the capsule
  if (io.quiet !== true) io.stderr(`reach-wasm: export otel ${out} (${trace.spans.length} spans, trace ${trace.spans[0]!.traceId})\n`);
  if (values.json) io.stdout(JSON.stringify({ out, spans: trace.spans.length, traceId: trace.spans[0]!.traceId }) + "\n");
  return 0;
}
