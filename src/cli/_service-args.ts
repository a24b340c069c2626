/**
 * What the run service's commands (`serve`, `worker`, `tokens`, `submit`, `runs`) share: option parsing, opening
 * the store (`--db URL` or the embedded `--data DIR`), the engine environment, the client's server and token.
 * Not a command itself: command modules import this, never each other.
 * @module
 */
import { hostname } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { homeDir } from "../platform/config.ts";
import { openDatabase } from "../platform/postgres.ts";
import type { SqlDatabase } from "../platform/postgres.ts";
import { readPrivateKeyFile } from "../platform/files.ts";
import { runInlineFirst, stoppedAtEnd } from "../host/mod.ts";
import { EngineThreadPool } from "../host/mod.ts";
import { jobRequest, outcomeOf } from "../service/mod.ts";
import type { runOnEngine } from "../service/mod.ts";
import { formatTrustStore } from "../engine/mod.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { redactSecrets } from "../platform/redact.ts";
import { terminalSafe } from "./safe-output.ts";
import { usageError } from "./options.ts";
import type { ArgsSpec } from "./options.ts";
import { migrate } from "../service/mod.ts";
import { ServiceClient } from "../service/mod.ts";
import { parsePrivateKeyFile } from "../engine/mod.ts";
import type { EngineEnvironment } from "../engine/mod.ts";
import type { EngineRun } from "../engine/mod.ts";

/** The default API address. */
export const DEFAULT_LISTEN = "127.0.0.1:7411";

/** Where the service's store is: `--db URL` and `--data DIR` (`STORE` in `specs-service.ts`). */
export type StoreArgs = { db?: string | undefined; data?: string | undefined };

/**
 * The embedded store's default directory: `$REACH_WASM_DATA`, else `$XDG_DATA_HOME/reach-wasm/service`, else
 * `~/.local/share/reach-wasm/service`.
 * @returns the directory
 */
export function defaultDataDir(): string {
  const env = process.env["REACH_WASM_DATA"];
  if (env !== undefined && env !== "") return env;
  const xdg = process.env["XDG_DATA_HOME"];
  return join(xdg !== undefined && xdg !== "" ? xdg : join(homeDir(), ".local", "share"), "reach-wasm", "service");
}

/**
 * Open the service store and create its tables when missing: `--db URL` (PostgreSQL), else PGlite in `--data DIR`.
 * With `log`, the database's outages and returns are reported there, and a database that is unavailable (down,
 * restarting, not accepting connections yet) is waited for with backoff (250 ms doubling to 5 s) for up to `waitMs`;
 * past that, or without `log`, an unavailable database is an error (ReachError `EXEC_RESOURCE_UNAVAILABLE` with
 * `details.storeUnavailable`).
 * @param args `--db` / `--data`
 * @param spec the command's declaration, for errors
 * @param log where to report waiting and the database's availability (serve, worker)
 * @param waitMs how long to wait for an unavailable database (default: without end when `log` is given; see {@link dbWaitMs})
 * @returns the open database
 * @throws ReachError when both are given, or the store cannot be opened (and, with `log`, not because it is away)
 * @example const db = await openStore({ db: "postgres://…" }, WORKER);
 */
export async function openStore(args: StoreArgs, spec: ArgsSpec, log?: (line: string) => void, waitMs = log === undefined ? 0 : Infinity): Promise<SqlDatabase> {
  const url = args.db ?? process.env["REACH_WASM_DB"];
  if (args.db !== undefined && args.data !== undefined) throw usageError(spec, "--db (a PostgreSQL server) and --data (the embedded store) exclude each other");
  const target = url !== undefined && url !== "" && args.data === undefined ? { url } : { dataDir: args.data ?? defaultDataDir() };
  const options = log === undefined ? {} : { onAvailability: log };
  const say = log ?? (() => {});
  const db = await untilAvailable(() => openDatabase(target, options), say, waitMs);
  try {
    await untilAvailable(() => migrate(db), say, waitMs);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/**
 * How long `serve` and `worker` wait for an unavailable database: `--db-wait SECONDS` (0: not at all, the command
 * fails at once as it did before), default without end.
 * @param seconds the `--db-wait` value
 * @returns milliseconds, or Infinity
 * @example dbWaitMs(0) // 0
 */
export function dbWaitMs(seconds: number | undefined): number {
  return seconds === undefined ? Infinity : seconds * 1000;
}

function storeUnavailable(err: unknown): err is ReachError {
  return err instanceof ReachError && err.code === "EXEC_RESOURCE_UNAVAILABLE" && err.details["storeUnavailable"] === true;
}

/**
 * Call `fn` until it does not fail for an unavailable database, with backoff (250 ms doubling to 5 s), for up to
 * `waitMs`; the first such failure is reported, the others are not.
 * @param fn opening the database, setting up its tables or its queue
 * @param log where to say that the process waits
 * @param waitMs how long to keep trying (default without end)
 * @returns what `fn` returns
 * @throws the first failure that is not the database being unavailable, or the last one once `waitMs` is over
 * @example const queue = await untilAvailable(() => openRunQueue(db), log);
 */
export async function untilAvailable<T>(fn: () => Promise<T>, log: (line: string) => void, waitMs = Infinity): Promise<T> {
  const deadline = performance.now() + waitMs;
  let delay = 250;
  let told = false;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!storeUnavailable(err) || performance.now() + delay > deadline) throw err;
      if (!told) log(`${err.message.replace(/; (retry in a few seconds|check that the server runs and the URL is right)$/, "")}; waiting for it (retrying every few seconds${Number.isFinite(waitMs) ? `, for up to ${Math.round(waitMs / 1000)} s` : ""})`);
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(5000, delay * 2);
  }
}

/**
 * The engine environment of this process (`defaultEnvironment`: QuickJS and Python engines, native SHA-256, the
 * fuel cache).
 * @returns the environment workers and pack checks use
 * @example const env = engineEnvironment();
 */
export function engineEnvironment(): EngineEnvironment {
  return defaultEnvironment();
}

/** How long to wait for a service that is still starting: `$REACH_WASM_CONNECT_WAIT` seconds, default 30. */
function connectWaitMs(): number {
  const v = process.env["REACH_WASM_CONNECT_WAIT"];
  return v !== undefined && /^\d{1,4}$/.test(v) ? Number(v) * 1000 : 30_000;
}

/** How long to wait for a connected service's answer: `$REACH_WASM_ANSWER_TIMEOUT` seconds, default 120. */
function answerTimeoutMs(): number {
  const v = process.env["REACH_WASM_ANSWER_TIMEOUT"];
  return v !== undefined && /^[1-9]\d{0,4}$/.test(v) ? Number(v) * 1000 : 120_000;
}

/** How long a run may hold a worker's event loop before it moves to an engine thread (heartbeats are every 500 ms). */
export const INLINE_BUDGET_MS = 50;

/**
 * The service's engine: each run first on the worker's own thread, and on a pool of engine threads once it holds that
 * thread longer than {@link INLINE_BUDGET_MS} (and used that much CPU meanwhile) or may reach the network
 * (`runInlineFirst`, `src/engine/inline-first.ts`), so that a cancel (or a stop) interrupts a tool at once, even in a
 * tight loop, and the process keeps answering HTTP, heartbeats and cancels while runs execute; short runs cost no
 * thread (measured with scripts/bench-service.ts: the worker processes' CPU per `packs/hello` run fell from 8.6–13.7 ms
 * to 4.5–6.0 ms).
 * @param size threads (the worker's concurrency)
 * @param budgetMs the inline budget (0: every run on a thread)
 * @param onRun called with each run as it ends (`--otlp-endpoint`'s live export), outside the record
 * @returns the engine function for the service's workers, and `close`
 * @example const pooled = pooledEngine(4); await startWorker({ engine: pooled.engine, … }); pooled.close();
 */
export function pooledEngine(size: number, budgetMs = INLINE_BUDGET_MS, onRun?: (run: EngineRun) => void): { engine: typeof runOnEngine; close(): void } {
  const pool = new EngineThreadPool(size);
  const engine: typeof runOnEngine = async (_env, job, hooks) => {
    const request = { ...jobRequest(job), trust: { storeText: job.trust === null ? null : formatTrustStore(job.trust) }, network: job.fetch !== undefined };
    const options = { signal: hooks.signal, onProgress: hooks.onProgress };
    const run = budgetMs <= 0 ? await pool.run(request, options) : await runInlineFirst(request, options, budgetMs, (r, o) => pool.run(r, o));
    // A cancel that came after the run's last check but before it was handed back still ends it ABORTED.
    const ended = await stoppedAtEnd(run, request, options, (r) => pool.run(r, {}));
    onRun?.(ended);
    return outcomeOf(ended);
  };
  return { engine, close: () => pool.close() };
}

/**
 * This process's worker id: `host:pid` (the host from `$HOSTNAME` when the runtime may not ask the system, as on
 * Deno without --allow-sys).
 * @returns the id
 */
export function workerId(): string {
  let host: string;
  try {
    host = hostname();
  } catch {
    host = process.env["HOSTNAME"] ?? "localhost";
  }
  return `${host}:${process.pid}`;
}

/**
 * The capsule signing key of `--key FILE`, if given.
 * @param path the `--key` value
 * @returns the Ed25519 private key seed, or undefined
 * @throws ReachError when the key file cannot be read or parsed
 */
export async function signingKey(path: string | undefined): Promise<Uint8Array | undefined> {
  if (path === undefined) return undefined;
  return parsePrivateKeyFile(new TextDecoder().decode(await readPrivateKeyFile(path))).privateKey;
}

/**
 * The client for `--server` (default `$REACH_WASM_SERVER`, else http://127.0.0.1:7411) and `--token` (default
 * `$REACH_WASM_TOKEN`).
 * @param args the `--server` and `--token` values
 * @returns the client
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a server that is not an http(s) URL
 * @example const client = clientOf({ server: "http://127.0.0.1:7411" });
 */
export function clientOf(args: { server?: string | undefined; token?: string | undefined }): ServiceClient {
  const server = args.server ?? process.env["REACH_WASM_SERVER"] ?? `http://${DEFAULT_LISTEN}`;
  const token = args.token ?? process.env["REACH_WASM_TOKEN"];
  // A service started a moment ago (`reach-wasm serve &`) may still be opening its store: wait for it a little.
  return new ServiceClient({ server, ...(token === undefined || token === "" ? {} : { token }), connectWaitMs: connectWaitMs(), answerTimeoutMs: answerTimeoutMs(), onWait: (m) => process.stderr.write(`${terminalSafe(redactSecrets(`reach-wasm: ${m}`))}\n`) });
}

/**
 * Wait until SIGINT or SIGTERM; a second signal exits at once (130 / 143).
 * @returns resolves with the first signal's name
 */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    let seen = false;
    const on = (name: "SIGINT" | "SIGTERM") => () => {
      if (seen) process.exit(name === "SIGINT" ? 130 : 143);
      seen = true;
      resolve(name);
    };
    process.on("SIGINT", on("SIGINT"));
    process.on("SIGTERM", on("SIGTERM"));
  });
}
