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
import { ReachError } from "../protocol/errors.ts";
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
export async function openDatabase(target: DatabaseTarget): Promise<SqlDatabase> {
  if ("url" in target) return await openServer(target.url, target.poolSize ?? 8);
  if ("dataDir" in target) return await openPglite(target.dataDir);
  return await openPglite(null);
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

async function openServer(url: string, poolSize: number): Promise<SqlDatabase> {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `--db expects a postgres://user:password@host:port/database URL, got ${JSON.stringify(redactUrl(url))}`);
  }
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: "reach-wasm" });
  pool.on("error", () => {}); // an idle client lost its connection: the pool replaces it
  const where = redactUrl(url);
  try {
    (await pool.connect()).release();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `cannot connect to PostgreSQL at ${where}: ${redactSecrets((err as Error).message)}; check that the server runs and the URL is right`, { cause: err, retryAfter: 1000 });
  }
  const listener = serverListener(pg, url);
  const statement = preparedStatements();
  return {
    kind: "postgres",
    where,
    query: async <T extends SqlRow>(text: string, params?: readonly unknown[]) => (await pool.query(statement(text, params))).rows as T[],
    exec: async (text) => {
      const r = (await pool.query(text)) as unknown as { rows: SqlRow[] } | { rows: SqlRow[] }[];
      return Array.isArray(r) ? (r[r.length - 1]?.rows ?? []) : r.rows;
    },
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const out = await fn({ query: async <T extends SqlRow>(text: string, params?: readonly unknown[]) => (await client.query(statement(text, params))).rows as T[] });
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    listen: listener.listen,
    close: async () => {
      await listener.close();
      await pool.end();
    },
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

/** One dedicated connection for LISTEN, shared by every channel, reconnected after a failure. */
function serverListener(pg: PgModule, url: string) {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let client: InstanceType<PgModule["Client"]> | null = null;
  let connecting: Promise<InstanceType<PgModule["Client"]>> | null = null;
  let closed = false;
  const connect = (): Promise<InstanceType<PgModule["Client"]>> =>
    (connecting ??= (async () => {
      const c = new pg.Client({ connectionString: url, application_name: "reach-wasm-listen" });
      c.on("notification", (n) => {
        for (const h of handlers.get(n.channel) ?? []) h(n.payload ?? "");
      });
      c.on("error", () => {
        client = null;
        connecting = null;
        if (!closed) setTimeout(() => void resubscribe(), 500);
      });
      await c.connect();
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
    } catch {
      if (!closed) setTimeout(() => void resubscribe(), 1000);
    }
  };
  return {
    listen: async (channel: string, onPayload: (payload: string) => void) => {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new TypeError(`"channel" expected a lowercase SQL identifier, got ${JSON.stringify(channel)}`);
      let set = handlers.get(channel);
      if (set === undefined) {
        handlers.set(channel, (set = new Set()));
        await (await connect()).query(`LISTEN "${channel}"`);
      }
      set.add(onPayload);
      return async () => {
        set.delete(onPayload);
      };
    },
    close: async () => {
      closed = true;
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

async function openPglite(dir: string | null): Promise<SqlDatabase> {
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
  return {
    kind: "pglite",
    where: dir === null ? "PGlite (in memory)" : `PGlite in ${dir}`,
    query: async <T extends SqlRow>(text: string, params?: readonly unknown[]) => (await db.query<T>(text, params as unknown[] | undefined)).rows,
    exec: async (text) => {
      const r = await db.exec(text);
      return (r[r.length - 1]?.rows ?? []) as SqlRow[];
    },
    transaction: (fn) => db.transaction((tx) => fn({ query: async <T extends SqlRow>(text: string, params?: readonly unknown[]) => (await tx.query<T>(text, params as unknown[] | undefined)).rows })),
    listen: async (channel, onPayload) => {
      const off = await db.listen(channel, onPayload);
      return async () => void (await off());
    },
    close: async () => {
      await db.close();
      if (dir !== null) narrowTree(dir, 0o700, 0o600); // the files PGlite made while it ran (its folder was 0700 meanwhile)
      await unlock();
    },
  };
}
