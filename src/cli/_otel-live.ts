/**
 * `--otlp-endpoint URL` of `run`, `mcp`, `serve` and `worker`: each run's trace (`src/report/otel.ts`, the same span
 * ids as `export otel` of its capsule) posted as the run ends through the OpenTelemetry SDK
 * (`src/platform/otlp-exporter.ts`, imported only here, on first use). Times are real: the real time each event was
 * appended when the command saw it (`run`), else the run's real start (its run files' `run.json`) plus each event's
 * offset on the virtual clock. Outside every hashed path; a failed export is one warning on stderr, never a failed run.
 * @module
 */
import type { EngineRun } from "../engine/mod.ts";
import { readRunCapsule } from "../engine/mod.ts";
import type { EventClock } from "../report/mod.ts";
import { otelTrace, virtualClock } from "../report/mod.ts";
import type { CliIO } from "./io.ts";
import { VERSION } from "./version.ts";

/** What a command does with `--otlp-endpoint`: note real event times, and export each ended run. */
export type LiveOtel = {
  /** Note that the event with this hash was appended now (from the run's progress reports). */
  saw(eventHash: string): void;
  /** Build the run's trace and post it; resolves when done (a failure is a warning on stderr). */
  exportRun(run: EngineRun): Promise<void>;
  /** Export in the background (a server goes on answering); {@link LiveOtel.flush} waits for these. */
  exportLater(run: EngineRun): void;
  /** Wait for the background exports (before the process ends). */
  flush(): Promise<void>;
};

/** The real start of a run (`run.json`'s `startedAt` in the run files, the real clock's), in ns, or null. */
function realStartNs(run: EngineRun): bigint | null {
  const bytes = run.files.get("run.json");
  if (bytes === undefined) return null;
  try {
    const doc = JSON.parse(new TextDecoder().decode(bytes)) as { startedAt?: unknown };
    const ms = typeof doc.startedAt === "string" ? Date.parse(doc.startedAt) : NaN;
    return Number.isFinite(ms) ? BigInt(ms) * 1_000_000n : null;
  } catch {
    return null;
  }
}

/** The run a session run continues (request.json `session.previousRunHash`), or null. */
function previousRunHash(entries: ReadonlyMap<string, Uint8Array>): string | null {
  try {
    const request = JSON.parse(new TextDecoder().decode(entries.get("request.json"))) as { session?: { previousRunHash?: unknown } };
    const h = request.session?.previousRunHash;
    return typeof h === "string" ? h : null;
  } catch {
    return null;
  }
}

/** Real times: the ones seen, else the real start plus the virtual offset from the run's first event. */
function realClock(run: EngineRun, seen: ReadonlyMap<string, bigint>): EventClock {
  const start = realStartNs(run);
  let virtualStart: bigint | null = null;
  return (e) => {
    const v = virtualClock(e);
    virtualStart ??= v;
    return seen.get(e.eventHash) ?? (start === null ? v : start + (v - virtualStart));
  };
}

/**
 * The live export of a command, or null without `--otlp-endpoint`.
 * @param url the `--otlp-endpoint` value
 * @param io for warnings
 * @param command the command's name, for the warning
 * @returns the live export
 * @example const otel = liveOtel(args.otlpEndpoint, io, "run"); … await otel?.exportRun(run);
 */
export function liveOtel(url: string | undefined, io: CliIO, command: string): LiveOtel | null {
  if (url === undefined) return null;
  const seen = new Map<string, bigint>();
  const chainFirst = new Map<string, string>(); // a session run's hash → its chain's first run hash (mcp.session.id)
  const pending = new Set<Promise<void>>();
  const live: LiveOtel = {
    saw: (eventHash) => void seen.set(eventHash, BigInt(Date.now()) * 1_000_000n),
    async exportRun(run) {
      let why: string | null;
      try {
        // the capsule's entries, as `export otel` reads them: the same spans, ids and attributes
        const entries = readRunCapsule(run.capsule.bytes).entries;
        const previous = previousRunHash(entries);
        const first = previous === null ? run.runHash : (chainFirst.get(previous) ?? previous);
        chainFirst.set(run.runHash, first);
        const trace = otelTrace(entries, { scope: { name: "reach-wasm", version: VERSION }, clock: realClock(run, seen), mcpSessionId: first });
        const { exportOtlpTraces } = await import("../platform/otlp-exporter.ts");
        why = await exportOtlpTraces(url, [trace]);
      } catch (err) {
        why = err instanceof Error ? err.message : String(err);
      }
      seen.clear();
      if (why !== null) io.stderr(`reach-wasm ${command}: warning: the trace of run ${run.runHash} was not exported to ${url} (${why}); the run and its capsule are unaffected\n`);
    },
    exportLater(run) {
      const p = live.exportRun(run).finally(() => pending.delete(p));
      pending.add(p);
    },
    async flush() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
  return live;
}
