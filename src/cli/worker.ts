/**
 * `reach-wasm worker [--db URL] [--concurrency N]`: take runs from the service's queue and execute them until
 * SIGINT/SIGTERM. Start as many as you like, on as many machines as share the PostgreSQL server.
 * @module
 */
import { openRunQueue } from "../platform/job-queue.ts";
import { ReachError } from "../protocol/errors.ts";
import { WORKER_DEFAULTS, startWorker } from "../service/worker.ts";
import type { CliIO } from "./io.ts";
import { dbWaitMs, engineEnvironment, intOption, pooledEngine, openStore, parseArgs, signingKey, untilAvailable, untilSignal, usageError, workerId } from "./_service-args.ts";
import { watchTrustStore } from "../platform/trust-file.ts";

const USAGE = "reach-wasm worker [--db URL | --data DIR] [--concurrency N] [--trust FILE] [--key FILE] [--stale-after S] [--db-wait S] [--json]";

/**
 * The `worker` command.
 * @param argv arguments after `worker`
 * @param io output streams
 * @returns the exit code (0 after a clean stop)
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runWorkerCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv, ["--db", "--data", "--concurrency", "--trust", "--key", "--stale-after", "--poll", "--db-wait"], ["--json"], USAGE);
  if (args.positional.length > 0) throw usageError(USAGE, `unexpected argument ${JSON.stringify(args.positional[0])}`);
  const concurrency = intOption(args, "--concurrency", 1, 64, USAGE) ?? 4;
  const staleSeconds = intOption(args, "--stale-after", 1, 86_400, USAGE) ?? WORKER_DEFAULTS.staleSeconds;
  const pollMs = intOption(args, "--poll", 50, 60_000, USAGE) ?? WORKER_DEFAULTS.pollMs;
  const log = (line: string) => io.stderr(`reach-wasm: ${line}\n`);
  const trust = await watchTrustStore(args.values.get("--trust"), log); // read again when it changes
  const key = await signingKey(args);
  // a database that is not up yet (or restarting) is waited for: the worker starts taking runs once it answers
  const waitMs = dbWaitMs(args, USAGE);
  const db = await openStore(args, USAGE, log, waitMs);
  try {
    const queue = await untilAvailable(() => openRunQueue(db, { onError: log }), log, waitMs);
    try {
      const id = workerId();
      const pooled = pooledEngine(concurrency);
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
      if (args.flags.has("--json")) io.stdout(JSON.stringify({ worker: id, store: db.kind, concurrency }) + "\n");
      const signal = await untilSignal();
      log(`${signal}: stopping (runs in progress get 10 s to finish; the rest go back to the queue)`);
      await worker.stop(10_000);
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
