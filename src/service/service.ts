/**
 * One run service: the HTTP API and, optionally, workers in the same process, over an open database and queue
 * (handed in by the platform, so this file stays web-standard). `reach-wasm serve` is this plus argument parsing.
 * @module
 */
import type { EngineEnvironment } from "../engine/mod.ts";
import type { ClientInfo, RunQueue, SqlDatabase } from "./ports.ts";
import type { FetchLike } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { TrustSource } from "./engine-adapter.ts";
import { Authenticator } from "./http-auth.ts";
import { errorResponse } from "./http-errors.ts";
import { createServiceApp } from "./http-api.ts";
import type { WatchLimits } from "./http-limits.ts";
import { RunHub } from "./run-hub.ts";
import { migrate } from "./schema.ts";
import { reclaimOrphans, startWorker } from "./worker.ts";
import { SecretVault } from "./secret-vault.ts";
import type { RunWorker, WorkerOptions } from "./worker.ts";

/** The default largest request body: 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * A web-standard handler server (the platform's `serveHttp`, bound to an address, which refuses foreign `Host` and
 * `Origin` and limits each client's requests in progress); it hands the handler the client of each request.
 */
export type Serve = (handler: (request: Request, client?: ClientInfo) => Response | Promise<Response>) => Promise<{ url: string; close(): Promise<void> }>;

/** What {@link startService} needs. */
export type ServiceOptions = {
  db: SqlDatabase;
  queue: RunQueue;
  env: EngineEnvironment;
  /** Packs signed by its keys run unrestricted (a function: read before each use, so changes reach the next run). */
  trust: TrustSource;
  /** false: requests without a token act as the local tenant (see {@link tokensRequired}). */
  requireToken: boolean;
  serve: Serve;
  version: string;
  maxBodyBytes?: number;
  /** Runs executed at once by workers inside this process (0: none; workers run elsewhere). */
  workers: number;
  /** This process's worker id (host:pid). */
  workerId: string;
  /** Worker tuning (heartbeat, staleness, polling). */
  worker?: Pick<WorkerOptions, "pollMs" | "heartbeatMs" | "staleSeconds" | "maxAttempts" | "engine">;
  key?: Uint8Array;
  fetch?: FetchLike;
  log: (line: string) => void;
  /** Per-client limits of event streams and long polls (defaults in `http-limits.ts`). */
  limits?: Partial<WatchLimits>;
};

/** A running service. */
export type RunningService = {
  readonly url: string;
  /** The in-process worker, when `workers > 0`. */
  readonly worker: RunWorker | null;
  /** Stop serving, let the in-process runs finish (up to `graceMs`), hand the rest back to the queue. */
  close(graceMs?: number): Promise<void>;
};

/**
 * Whether requests must carry a bearer token: always, except on a loopback address with the embedded store and no
 * `--auth` (one machine, one user: requests without a token are the local tenant).
 * @param listen the host the API listens on
 * @param embedded true for the PGlite store
 * @param auth `--auth` was given
 * @returns true when tokens are required
 * @example tokensRequired("127.0.0.1", true, false) // false
 */
export function tokensRequired(listen: string, embedded: boolean, auth: boolean): boolean {
  const host = listen.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const loopback = host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return auth || !embedded || !loopback;
}

/**
 * Start the API (and workers) on an open database and queue; the tables are created when missing.
 * @param o database, queue, engine, auth rule, server and workers
 * @returns the running service
 * @throws ReachError when the tables cannot be set up or the address cannot be bound
 * @example const svc = await startService({ db, queue, env, trust: null, requireToken: false, serve, version, workers: 1, workerId: "h:1", log });
 */
export async function startService(o: ServiceOptions): Promise<RunningService> {
  await migrate(o.db);
  // the embedded store's runs left EXECUTING by the process that held it before: back to the queue (or given up) now,
  // by the in-process worker as it starts, or here when there is none (nothing else could ever end them)
  if (o.workers === 0) await reclaimOrphans({ db: o.db, queue: o.queue, log: o.log, ...(o.worker?.maxAttempts === undefined ? {} : { maxAttempts: o.worker.maxAttempts }) });
  const hub = await RunHub.open(o.db);
  const auth = new Authenticator(o.db, o.requireToken);
  const secrets = new SecretVault();
  const app = createServiceApp({ db: o.db, queue: o.queue, env: o.env, trust: o.trust, auth, hub, maxBodyBytes: o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, log: o.log, packs: new Map(), secrets, ...(o.limits === undefined ? {} : { limits: o.limits }) }, o.version);
  let worker: RunWorker | null = null;
  let server: { url: string; close(): Promise<void> };
  try {
    if (o.workers > 0) {
      worker = await startWorker({
        db: o.db,
        queue: o.queue,
        env: o.env,
        trust: o.trust,
        id: o.workerId,
        concurrency: o.workers,
        ...(o.worker ?? {}),
        ...(o.key === undefined ? {} : { key: o.key }),
        ...(o.fetch === undefined ? {} : { fetch: o.fetch }),
        secrets,
        log: o.log,
      });
    }
    server = await o.serve((request, client) => app.fetch(request, client === undefined ? undefined : { client }));
  } catch (err) {
    await worker?.stop(0).catch(() => {});
    await hub.close();
    throw err;
  }
  return {
    url: server.url,
    worker,
    close: async (graceMs = 10_000) => {
      await hub.close(); // wakes long polls and event streams, which then end
      await server.close();
      await worker?.stop(graceMs);
    },
  };
}

/** A handler of web-standard requests. */
export type Handler = (request: Request, client?: ClientInfo) => Response | Promise<Response>;

/**
 * What answers on the service's address until the service is ready (while its database is still unavailable at
 * start): 503 with `Retry-After`, a ReachError `EXEC_RESOURCE_UNAVAILABLE` document (`details.starting`: the request
 * reached no handler, so a client may send it again), for every request; `open` hands the address to the service's own
 * handler.
 * @returns the handler to serve now, and `open`
 * @example const gate = startingGate(); const server = await serveHttp(gate.handler, listen); gate.open(app.fetch);
 */
export function startingGate(): { handler: Handler; open(handler: Handler): void } {
  let ready: Handler | null = null;
  const waiting = () =>
    errorResponse(new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the run service is starting: its database is not available yet; retry in a few seconds", { retryAfter: 2000, details: { storeUnavailable: true, starting: true } }));
  return {
    handler: (request, client) => (ready === null ? waiting() : ready(request, client)),
    open: (handler) => void (ready = handler),
  };
}
