/**
 * The run service's database: a real PostgreSQL server through `pg` (node-postgres), or PGlite (PostgreSQL in
 * WebAssembly, `@electric-sql/pglite`) in a local directory. Both behind one small interface, {@link SqlDatabase},
 * so the store, the queue and the workers run the same SQL on either. Only this file knows the drivers.
 *
 * PGlite is one session in one process: a data directory is locked by the process that opened it
 * (`reach-wasm.lock` beside the data), transactions hold PGlite's own mutex, and LISTEN/NOTIFY stays in the process.
 * @module
 */
import { readFile, rm } from "node:fs/promises";
import { createExclusive } from "./_fs.ts";
import { narrowTree, privateDir } from "./_safe-fs.ts";
import { join } from "node:path";
import process from "node:process";
import type { PGlite } from "@electric-sql/pglite";
import type pgTypes from "pg";
import { ReachError } from "../protocol/mod.ts";
import { storeError } from "./postgres-errors.ts";
import { redactSecrets } from "./redact.ts";

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** Runs one statement with `$1…` parameters. */
export type SqlExecutor = {
  /**
   * Run one statement.
   * @param text SQL with `$n` placeholders
   * @param params the values (`Uint8Array` for bytea, objects for json/jsonb are passed as JSON text by the caller)
   * @returns the rows
   */
  query<T extends SqlRow = SqlRow>(text: string, params?: readonly unknown[]): Promise<T[]>;
};

/** An open database. */
export type SqlDatabase = SqlExecutor & {
  /** `postgres` (a server) or `pglite` (embedded). */
  readonly kind: "postgres" | "pglite";
  /** Where it is, for messages (a server URL without its password, or the data directory). */
  readonly where: string;
  /** Run several statements without parameters (schema set-up); resolves to the last statement's rows. */
  exec(text: string): Promise<SqlRow[]>;
  /** Run `fn` in one transaction (committed when it resolves, rolled back when it throws). */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Call `onPayload` for each NOTIFY on `channel`; resolves to the unsubscribe function. Best effort. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** Close every connection (and release the data directory lock). */
  close(): Promise<void>;
  /**
   * How long the database has answered since it was last unavailable (or since it was opened), in ms; 0 while the
   * last statement found it unavailable. A failure that means "unavailable" is thrown as ReachError
   * `EXEC_RESOURCE_UNAVAILABLE` with `retryAfter` and `details.storeUnavailable` (see `postgres-errors.ts`).
   */
  upForMs(): number;
};

/** Options of {@link openDatabase}. */
export type DatabaseOptions = {
  /** Told once when the database becomes unavailable and once when it answers again (for a process's log). */
  onAvailability?: (line: string) => void;
};

/** Where the database is. */
export type DatabaseTarget = { url: string; poolSize?: number } | { dataDir: string } | { memory: true };

/**
 * Open the database.
 * @param target `{url}` a PostgreSQL server (`postgres://…`), `{dataDir}` PGlite in that directory, `{memory}` PGlite
 *   in memory (tests)
 * @returns the open database
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad URL, an unreachable server or a data directory in use;
 *   `EXEC_RESOURCE_UNAVAILABLE` when the server refuses the connection
 * @example const db = await openDatabase({ dataDir: ".reach/service" }); await db.close();
 */
export async function openDatabase(target: DatabaseTarget, options: DatabaseOptions = {}): Promise<SqlDatabase> {
  if ("url" in target) return await openServer(target.url, target.poolSize ?? 8, options);
  if ("dataDir" in target) return await openPglite(target.dataDir, options);
  return await openPglite(null, options);
}

/**
 * Whether the database answers, as its statements find it: the state behind {@link SqlDatabase.upForMs}, and the
 * translation of driver failures into the "store unavailable" ReachError.
 */
function availability(kind: SqlDatabase["kind"], where: string, options: DatabaseOptions) {
  let down = false;
  let since = performance.now();
  const failed = (err: unknown): unknown => {
    const out = storeError(err, kind, where);
    if (out instanceof ReachError && out.details["storeUnavailable"] === true) {
      if (!down) options.onAvailability?.(`${out.message.replace(/; retry in a few seconds$/, "")}; waiting for it (requests get 503 meanwhile)`);
      if (!down) since = performance.now();
      down = true;
    }
    return out;
  };
  return {
    /** Run a statement, noting whether the database answered. */
    run: async <T>(statement: () => Promise<T>): Promise<T> => {
      let out: T;
      try {
        out = await statement();
      } catch (err) {
        throw failed(err);
      }
      if (down) {
        options.onAvailability?.(`the service database ${where} answers again (after ${Math.round((performance.now() - since) / 1000)} s)`);
        down = false;
        since = performance.now();
      }
      return out;
    },
    failed,
    upForMs: () => (down ? 0 : performance.now() - since),
  };
}

/**
 * The URL without its credentials, for messages (`redact.ts`: the password, `?password=`, `?sslpassword=`, …).
 * @param url a connection URL
 * @returns the URL with `***` for each credential
 * @example redactUrl("postgres://u:secret@h/db") // "postgres://u:***@h/db"
 */
export function redactUrl(url: string): string {
  return redactSecrets(url);
}

async function openServer(url: string, poolSize: number, options: DatabaseOptions): Promise<SqlDatabase> {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `--db expects a postgres://user:password@host:port/database URL, got ${JSON.stringify(redactUrl(url))}`);
  }
  const { default: pg } = await import("pg");
  const where = redactUrl(url);
  const health = availability("postgres", where, options);
  // keepAlive and a connect timeout: a server that vanished without closing its sockets is noticed, not waited for
  const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: "reach-wasm", connectionTimeoutMillis: 10_000, keepAlive: true });
  // node-postgres emits 'error' on a client whose connection breaks, idle or checked out (and the pool on an idle
  // one); unheard, it would end the process. The statement under way fails (and is retried by its caller); the pool
  // drops the client.
  pool.on("error", (err) => void health.failed(err));
  pool.on("connect", (client) => client.on("error", (err) => void health.failed(err)));
  try {
    (await pool.connect()).release();
  } catch (err) {
    await pool.end().catch(() => {});
    if ((err as { code?: unknown }).code === "ERR_INVALID_URL") {
      // a URL the driver cannot parse is a mistake to fix, not a server to wait for
      throw new ReachError("PROTO_INVALID_ARGUMENT", `--db ${JSON.stringify(where)} is not a valid URL; give postgres://user:password@host:port/database (percent-encode special characters of the password)`);
    }
    const e = storeError(err, "postgres", where); // not reported: the caller decides whether to wait
    const unavailable = e instanceof ReachError && e.details["storeUnavailable"] === true;
    throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `cannot connect to PostgreSQL at ${where}: ${redactSecrets((err as Error).message)}; check that the server runs and the URL is right`, {
      cause: err,
      retryAfter: 1000,
      details: unavailable ? { storeUnavailable: true } : {},
    });
  }
  const listener = serverListener(pg, url);
  const statement = preparedStatements();
  return {
    kind: "postgres",
    where,
    query: <T extends SqlRow>(text: string, params?: readonly unknown[]) => health.run(async () => (await pool.query(statement(text, params))).rows as T[]),
    exec: (text) =>
      health.run(async () => {
        const r = (await pool.query(text)) as unknown as { rows: SqlRow[] } | { rows: SqlRow[] }[];
        return Array.isArray(r) ? (r[r.length - 1]?.rows ?? []) : r.rows;
      }),
    transaction: async (fn) => {
      const client = await health.run(() => pool.connect());
      let broken: unknown = undefined;
      const run = <T>(text: string | pgTypes.QueryConfig) => health.run(async () => (await client.query(text)).rows as T[]);
      try {
        await run("BEGIN");
        const out = await fn({ query: <T extends SqlRow>(text: string, params?: readonly unknown[]) => run<T>(statement(text, params)) });
        await run("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch((e: unknown) => void (broken = e ?? true));
        throw err;
      } finally {
        client.release(broken as Error | undefined); // a client that cannot roll back is dropped, not reused
      }
    },
    listen: listener.listen,
    close: async () => {
      await listener.close();
      await pool.end();
    },
    upForMs: health.upForMs,
  };
}

type PgModule = typeof pgTypes;

/**
 * Parameterised statements as named prepared statements: each connection parses and plans a statement once, not at
 * every run (measured: PostgreSQL's CPU per service run fell by about a third). The texts are the service's and
 * pg-boss's constant SQL; past 1000 distinct texts new ones run unnamed.
 */
function preparedStatements() {
  const names = new Map<string, string>();
  return (text: string, params: readonly unknown[] | undefined): pgTypes.QueryConfig => {
    if (params === undefined || params.length === 0) return { text };
    let name = names.get(text);
    if (name === undefined && names.size < 1000) names.set(text, (name = `reach_wasm_${names.size}`));
    return name === undefined ? { text, values: [...params] } : { name, text, values: [...params] };
  };
}

/**
 * One dedicated connection for LISTEN, shared by every channel, reconnected (with backoff, up to 5 s apart) after a
 * failure. Subscribing never fails for an unavailable server: the channel is listened to once the server is back
 * (NOTIFY is best effort; every waiter also polls).
 */
function serverListener(pg: PgModule, url: string) {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let client: InstanceType<PgModule["Client"]> | null = null;
  let connecting: Promise<InstanceType<PgModule["Client"]>> | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let delay = 250;
  let closed = false;
  const later = () => {
    if (closed || retry !== null) return;
    retry = setTimeout(() => {
      retry = null;
      void resubscribe();
    }, delay);
    delay = Math.min(5000, delay * 2);
  };
  const connect = (): Promise<InstanceType<PgModule["Client"]>> =>
    (connecting ??= (async () => {
      const c = new pg.Client({ connectionString: url, application_name: "reach-wasm-listen", connectionTimeoutMillis: 10_000, keepAlive: true });
      c.on("notification", (n) => {
        for (const h of handlers.get(n.channel) ?? []) h(n.payload ?? "");
      });
      c.on("error", () => {
        if (client === c) client = null;
        connecting = null;
        void c.end().catch(() => {});
        later();
      });
      try {
        await c.connect();
      } catch (err) {
        await c.end().catch(() => {});
        throw err;
      }
      client = c;
      return c;
    })().catch((err) => {
      connecting = null;
      throw err;
    }));
  const resubscribe = async (): Promise<void> => {
    if (closed || handlers.size === 0) return;
    try {
      const c = await connect();
      for (const channel of handlers.keys()) await c.query(`LISTEN "${channel}"`);
      delay = 250;
    } catch {
      later();
    }
  };
  return {
    listen: async (channel: string, onPayload: (payload: string) => void) => {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new TypeError(`"channel" expected a lowercase SQL identifier, got ${JSON.stringify(channel)}`);
      let set = handlers.get(channel);
      if (set === undefined) {
        handlers.set(channel, (set = new Set()));
        try {
          await (await connect()).query(`LISTEN "${channel}"`);
        } catch {
          later(); // the server is away: listen once it is back
        }
      }
      set.add(onPayload);
      return async () => {
        set.delete(onPayload);
      };
    },
    close: async () => {
      closed = true;
      if (retry !== null) clearTimeout(retry);
      const c = client ?? (await connecting?.catch(() => null)) ?? null;
      await c?.end().catch(() => {});
    },
  };
}

const LOCK_FILE = "reach-wasm.lock";

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

/**
 * Take the data directory for this process, or say which process holds it. The directory holds every tenant's
 * inputs and results (PGlite's tables and write-ahead log): it is made 0700 (created so, or an existing one owned by
 * this user narrowed with a warning; a link or another user's folder is refused), and what PGlite wrote inside is
 * narrowed to 0700/0600 at every start (PGlite creates its files 0666 less the umask through its own file layer).
 */
async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  privateDir(dir, "the embedded store (--data)", (m) => process.stderr.write(m));
  narrowTree(dir, 0o700, 0o600);
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await createExclusive(path, 0o600, new TextEncoder().encode(`${process.pid}\n`));
      return async () => void (await rm(path, { force: true }));
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
      const pid = Number.parseInt(await readFile(path, "utf8").catch(() => ""), 10);
      if (Number.isSafeInteger(pid) && pid > 0 && (pid === process.pid || pidAlive(pid))) {
        throw new ReachError("PROTO_INVALID_ARGUMENT", `the embedded store ${JSON.stringify(dir)} is in use by process ${pid} (PGlite serves one process); stop that process, use another --data directory, or share a PostgreSQL server with --db postgres://…`);
      }
      await rm(path, { force: true }); // a stale lock of a process that is gone
    }
  }
  throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot lock the embedded store ${JSON.stringify(dir)}; remove ${JSON.stringify(path)} if no reach-wasm process uses it`);
}

async function openPglite(dir: string | null, options: DatabaseOptions): Promise<SqlDatabase> {
  const unlock = dir === null ? async () => {} : await lockDataDir(dir);
  let pglite: PGlite;
  try {
    const { PGlite } = await import("@electric-sql/pglite");
    pglite = dir === null ? await PGlite.create() : await PGlite.create(join(dir, "pgdata"));
    if (dir !== null) narrowTree(dir, 0o700, 0o600); // what PGlite created just now
  } catch (err) {
    await unlock();
    if (err instanceof ReachError) throw err;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot open the embedded store ${JSON.stringify(dir ?? "memory")}: ${(err as Error).message}`, { cause: err });
  }
  const db = pglite;
  const where = dir === null ? "PGlite (in memory)" : `PGlite in ${dir}`;
  const health = availability("pglite", where, options);
  return {
    kind: "pglite",
    where,
    query: <T extends SqlRow>(text: string, params?: readonly unknown[]) => health.run(async () => (await db.query<T>(text, params as unknown[] | undefined)).rows),
    exec: (text) =>
      health.run(async () => {
        const r = await db.exec(text);
        return (r[r.length - 1]?.rows ?? []) as SqlRow[];
      }),
    transaction: async (fn) => {
      // a failure of `fn` is passed on as it is; PGlite's own (BEGIN, COMMIT, its files gone) is translated
      let thrown: { err: unknown } | null = null;
      const query = <T extends SqlRow>(tx: Pick<PGlite, "query">, text: string, params?: readonly unknown[]) => health.run(async () => (await tx.query<T>(text, params as unknown[] | undefined)).rows);
      try {
        return await db.transaction(async (tx) => {
          try {
            return await fn({ query: (text, params) => query(tx, text, params) });
          } catch (err) {
            thrown = { err };
            throw err;
          }
        });
      } catch (err) {
        if (thrown !== null && (thrown as { err: unknown }).err === err) throw err;
        throw health.failed(err);
      }
    },
    listen: async (channel, onPayload) => {
      const off = await health.run(() => db.listen(channel, onPayload));
      return async () => void (await off().catch(() => {}));
    },
    close: async () => {
      await db.close();
      if (dir !== null) narrowTree(dir, 0o700, 0o600); // the files PGlite made while it ran (its folder was 0700 meanwhile)
      await unlock();
    },
    upForMs: health.upForMs,
  };
}
