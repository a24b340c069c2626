/**
 * `reach-wasm serve [--db URL] [--listen HOST:PORT] [--data DIR] [--workers N] [--auth]`: the run service's HTTP API
 * (and, by default on the embedded store, a worker in the same process) until SIGINT/SIGTERM.
 * @module
 */
import { serveHttp } from "../platform/http-server.ts";
import { openRunQueue } from "../platform/job-queue.ts";
import { ReachError } from "../protocol/mod.ts";
import { DEFAULT_MAX_BODY_BYTES, startService, startingGate, tokensRequired } from "../service/mod.ts";
import type { RunningService } from "../service/mod.ts";
import { WORKER_DEFAULTS } from "../service/mod.ts";
import type { CliIO } from "./io.ts";
import { DEFAULT_LISTEN, dbWaitMs, engineEnvironment, pooledEngine, openStore, signingKey, untilAvailable, untilSignal, workerId } from "./_service-args.ts";
import type { StoreArgs } from "./_service-args.ts";
import type { SqlDatabase } from "../platform/postgres.ts";
import { watchTrustStore } from "../platform/trust-file.ts";
import { VERSION } from "./version.ts";
import { allowedOf } from "./_http-args.ts";
import { parseCommand } from "./options.ts";
import { listenOf } from "./specs-pack.ts";
import { SERVE } from "./specs-service.ts";

/**
 * The `serve` command.
 * @param argv arguments after `serve`
 * @param io output streams
 * @returns the exit code (0 after a clean stop)
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runServeCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: args } = parseCommand(SERVE, argv);
  const listen = { ...(args.listen ?? listenOf(DEFAULT_LISTEN)), ...allowedOf(SERVE, args["allowed-host"], args["allowed-origin"]) };
  const streamsPerClient = args["max-streams-per-client"];
  const streamIdle = args["stream-idle-timeout"];
  const limits = { ...(streamsPerClient === undefined ? {} : { watchersPerClient: streamsPerClient }), ...(streamIdle === undefined ? {} : { streamIdleMs: streamIdle * 1000 }) };
  const maxBody = args["max-body"] ?? DEFAULT_MAX_BODY_BYTES;
  const staleSeconds = args["stale-after"] ?? WORKER_DEFAULTS.staleSeconds;
  const log = (line: string) => io.stderr(`reach-wasm: ${line}\n`);
  const trust = await watchTrustStore(args.trust, log); // read again when it changes
  const key = await signingKey(args.key);
  const workersArg = args.workers;
  const waitMs = dbWaitMs(args["db-wait"]);
  const { db, gated } = await storeOrGate(args, listen, log, waitMs);
  let svc: RunningService | null = null;
  try {
    try {
      const embedded = db.kind === "pglite";
      const workers = workersArg ?? (embedded ? 1 : 0);
      const requireToken = tokensRequired(listen.hostname, embedded, args.auth);
      const queue = await untilAvailable(() => openRunQueue(db, { onError: log }), log, waitMs);
      // `--otlp-endpoint`: each run's trace as it ends, in the background (the SDK loads only then)
      const otel = args["otlp-endpoint"] === undefined ? null : (await import("./_otel-live.ts")).liveOtel(args["otlp-endpoint"], io, "serve");
      const pooled = pooledEngine(Math.max(1, workers * 4), undefined, otel === null ? undefined : (run) => otel.exportLater(run));
      try {
        svc = await untilAvailable(() => startService({
          db,
          queue,
          env: engineEnvironment(),
          trust,
          requireToken,
          serve: async (handler) => {
            if (gated === null) return await serveHttp(handler, listen);
            gated.gate.open(handler); // the address served since start is the service's from now on
            return gated.server;
          },
          version: VERSION,
          maxBodyBytes: maxBody,
          workers,
          workerId: workerId(),
          worker: { staleSeconds, engine: pooled.engine },
          ...(key === undefined ? {} : { key }),
          fetch: (url, init) => fetch(url, init),
          log,
          limits,
        }), log, waitMs);
        const who = requireToken ? "bearer tokens required (reach-wasm tokens create --tenant NAME)" : 'requests without a token act as tenant "local"';
        log(`serving runs from ${db.where} on ${svc.url}; ${workers} worker slot(s) in this process; ${who}`);
        if (args.json) io.stdout(JSON.stringify({ url: svc.url, store: db.kind, workers, tokensRequired: requireToken }) + "\n");
        const signal = await untilSignal();
        log(`${signal}: stopping (runs in progress get 10 s to finish; the rest go back to the queue)`);
        await svc.close(10_000);
        await otel?.flush();
      } finally {
        pooled.close();
        await queue.stop();
      }
    } catch (err) {
      if (err instanceof ReachError) throw err;
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `serve: ${(err as Error).message}`, { cause: err });
    } finally {
      await db.close();
    }
  } finally {
    if (svc === null) await gated?.server.close(); // the service closes it once it has it
  }
  return 0;
}

/**
 * The store, opened; when its database is not available yet (down, restarting), the address is served at once — every
 * request answered 503 with Retry-After, a ReachError saying the service is starting — while the store is waited for
 * with backoff. Then the service takes the address over (`gate.open`).
 */
async function storeOrGate(args: StoreArgs, listen: Parameters<typeof serveHttp>[1], log: (line: string) => void, waitMs: number): Promise<{ db: SqlDatabase; gated: { gate: ReturnType<typeof startingGate>; server: { url: string; close(): Promise<void> } } | null }> {
  try {
    return { db: await openStore(args, SERVE, log, 0), gated: null };
  } catch (err) {
    if (!(err instanceof ReachError && err.details["storeUnavailable"] === true) || waitMs <= 0) throw err;
    log(`${err.message.replace(/; (retry in a few seconds|check that the server runs and the URL is right)$/, "")}; serving 503 until it answers`);
  }
  const gate = startingGate();
  const server = await serveHttp(gate.handler, listen);
  log(`listening on ${server.url}; requests get 503 (Retry-After) until the service database answers`);
  try {
    return { db: await openStore(args, SERVE, log, waitMs), gated: { gate, server } };
  } catch (err) {
    await server.close();
    throw err;
  }
}
