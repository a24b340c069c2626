/**
 * `reach-wasm worker [--db URL] [--concurrency N]`: take runs from the service's queue and execute them until
 * SIGINT/SIGTERM. Start as many as you like, on as many machines as share the PostgreSQL server.
 * @module
 */
import { openRunQueue } from "../platform/job-queue.ts";
import { ReachError } from "../protocol/mod.ts";
import { WORKER_DEFAULTS, startWorker } from "../service/mod.ts";
import type { CliIO } from "./io.ts";
import { dbWaitMs, engineEnvironment, pooledEngine, openStore, signingKey, untilAvailable, untilSignal, workerId } from "./_service-args.ts";
import { parseCommand } from "./options.ts";
import { WORKER } from "./specs-service.ts";
import { watchTrustStore } from "../platform/trust-file.ts";

/**
 * The `worker` command.
 * @param argv arguments after `worker`
 * @param io output streams
 * @returns the exit code (0 after a clean stop)
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runWorkerCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args } = parseCommand(WORKER, argv);
  const concurrency = args.concurrency ?? 4;
  const staleSeconds = args["stale-after"] ?? WORKER_DEFAULTS.staleSeconds;
  const pollMs = args.poll ?? WORKER_DEFAULTS.pollMs;
  const log = (line: string) => io.stderr(`reach-wasm: ${line}\n`);
  const trust = await watchTrustStore(args.trust, log); // read again when it changes
  const key = await signingKey(args.key);
  // a database that is not up yet (or restarting) is waited for: the worker starts taking runs once it answers
  const waitMs = dbWaitMs(args["db-wait"]);
  const db = await openStore(args, WORKER, log, waitMs);
  try {
    const queue = await untilAvailable(() => openRunQueue(db, { onError: log }), log, waitMs);
    try {
      const id = workerId();
      // `--otlp-endpoint`: each run's trace as it ends, in the background (the SDK loads only then)
      const otel = args["otlp-endpoint"] === undefined ? null : (await import("./_otel-live.ts")).liveOtel(args["otlp-endpoint"], io, "worker");
      const pooled = pooledEngine(concurrency, undefined, otel === null ? undefined : (run) => otel.exportLater(run));
      const worker = await startWorker({
        engine: pooled.engine,
        db,
        queue,
        env: engineEnvironment(),
        trust,
        id,
        concurrency,
        staleSeconds,
        pollMs,
        ...(key === undefined ? {} : { key }),
        fetch: (url, init) => fetch(url, init),
        log,
      });
      log(`worker ${id} takes runs from ${db.where} (${concurrency} at once)`);
      if (args.json) io.stdout(JSON.stringify({ worker: id, store: db.kind, concurrency }) + "\n");
      const signal = await untilSignal();
      log(`${signal}: stopping (runs in progress get 10 s to finish; the rest go back to the queue)`);
      await worker.stop(10_000);
      await otel?.flush();
      pooled.close();
    } finally {
      await queue.stop();
    }
  } catch (err) {
    if (err instanceof ReachError) throw err;
    throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `worker: ${(err as Error).message}`, { cause: err });
  } finally {
    await db.close();
  }
  return 0;
}
