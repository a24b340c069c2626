// A --db URL's credentials never reach a message or a log line, in any form: user:password@, ?password=,
// ?sslpassword=, secret-named parameters, percent-encoded names and values, postgresql:// and socket-style URLs, and
// libpq key=value strings. `serve`, `worker` and `tokens create` are refused (an unreachable server, a database that
// does not exist on the test server, a URL that is not postgres://) and their stderr and --json error documents are
// searched for the secret; the store's `where` (the startup lines of serve and worker) is redacted too.
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { openDatabase } from "../src/platform/postgres.ts";
import { testPostgres } from "./support/service.ts";

const pg = testPostgres();
afterAll(() => pg?.stop());

/** A --db value with the secret in one form, pointing at `hostPort` and `db`. */
function forms(hostPort: string, db: string): [string, string][] {
  return [
    ["user:password@", `postgres://postgres:s3cret@${hostPort}/${db}`],
    ["postgresql:// with an encoded password", `postgresql://postgres:s3%63ret%40x@${hostPort}/${db}`],
    ["?password=", `postgres://postgres@${hostPort}/${db}?password=s3cret`],
    ["?sslpassword= (the sslkey passphrase)", `postgres://postgres@${hostPort}/${db}?sslpassword=s3cret&sslmode=disable`],
    ["a percent-encoded parameter name", `postgres://postgres@${hostPort}/${db}?pass%77ord=s3cret`],
    ["socket-style", `postgresql:///${db}?host=/nonexistent/socket/dir&password=s3cret`],
  ];
}

type Out = { code: number; stdout: string; stderr: string };
async function cli(args: string[], env: Record<string, string> = {}): Promise<Out> {
  let stdout = "";
  let stderr = "";
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function expectNoSecret(o: Out, what: string): void {
  expect(o.code, `${what}: ${o.stderr}`).toBe(2);
  expect(o.stderr, what).toMatch(/reach-wasm: [A-Z_]+: /);
  for (const text of [o.stdout, o.stderr]) expect(text, what).not.toMatch(/s3cret|s3%63ret/i);
  if (o.stdout !== "") expect(JSON.parse(o.stdout), what).toMatchObject({ error: { code: expect.any(String) } });
}

describe("credentials of a --db URL", () => {
  it("are redacted when the server cannot be reached: serve, worker, tokens create, and $REACH_WASM_DB", async () => {
    for (const [what, url] of forms("127.0.0.1:1", "runs")) {
      // --db-wait 0: fail at once rather than wait for the server (the waiting line is checked below)
      expectNoSecret(await cli(["serve", "--db", url, "--db-wait", "0", "--json"]), `serve: ${what}`);
      expectNoSecret(await cli(["worker", "--db", url, "--db-wait", "0"]), `worker: ${what}`);
      expectNoSecret(await cli(["tokens", "create", "--tenant", "t", "--db", url, "--json"]), `tokens: ${what}`);
    }
    expectNoSecret(await cli(["worker", "--db-wait", "0", "--json"], { REACH_WASM_DB: "postgres://postgres:s3cret@127.0.0.1:1/runs" }), "worker with $REACH_WASM_DB");
    // waiting for the server a second says so, redacted, then gives up
    const waited = await cli(["worker", "--db", "postgres://postgres:s3cret@127.0.0.1:1/runs?sslpassword=s3cret", "--db-wait", "1"]);
    expectNoSecret(waited, "worker waiting for the server");
    expect(waited.stderr).toMatch(/waiting for it/);
  }, 120_000);

  it("are redacted from a URL that is not postgres:// and from a libpq key=value string", async () => {
    for (const url of ["mysql://root:s3cret@127.0.0.1:1/runs", "host=127.0.0.1 port=1 user=postgres password=s3cret dbname=runs", "host=127.0.0.1 password='s3cret s3cret' dbname=runs"]) {
      expectNoSecret(await cli(["serve", "--db", url, "--db-wait", "0", "--json"]), url.slice(0, 20));
    }
  }, 60_000);

  it.skipIf(pg === null)("are redacted from the real server's refusal (a database that does not exist) and from the store's `where`", async () => {
    const hostPort = new URL(pg!.url).host;
    for (const [what, url] of forms(hostPort, "no_such_database_reach").filter(([w]) => w !== "socket-style")) {
      const r = await cli(["tokens", "create", "--tenant", "t", "--db", url, "--json"]);
      expectNoSecret(r, what);
      expect(r.stderr, what).toMatch(/no_such_database_reach/);
    }
    const db = await openDatabase({ url: `postgres://postgres:s3cret@${hostPort}/postgres?sslpassword=s3cret&application_name=reach-test` });
    try {
      expect(db.where).toBe(`postgres://postgres:***@${hostPort}/postgres?sslpassword=***&application_name=reach-test`);
    } finally {
      await db.close();
    }
  }, 60_000);
});
