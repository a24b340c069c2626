// The run service rides out its database (fault injection on a PostgreSQL cluster of this test's own, which it stops
// and starts; gated on $REACH_WASM_TEST_PG_URL like the other PostgreSQL tests, whose server it leaves alone):
// `serve` and two `worker` processes with runs in flight while the server crashes (`pg_ctl stop -m immediate`).
// No process dies; requests during the outage get 503 with Retry-After; a `worker` (on Deno) and a `serve` started
// while the server is down wait for it and come up when it does; every accepted run ends COMPLETED with the run hash of a local
// run, executed once (attempts 1: no run is re-executed because its end could not be stored), its capsule verifying
// and replaying; then a SIGKILLed worker's runs are still re-queued and end correctly. Verdicts are counts and hashes;
// the only clocks are generous deadlines.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { runEngine } from "../src/engine/engine.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { openDatabase } from "../src/platform/postgres.ts";
import { DENO_CLI, spawnCli, until } from "./support/fleet.ts";
import type { CliProcess } from "./support/fleet.ts";
import { cliBundle, env, privatePostgres, spinPackArchive } from "./support/service.ts";
import type { PrivatePostgres } from "./support/service.ts";
import { ServiceClient } from "../src/service/client.ts";
import { createToken } from "../src/service/tokens.ts";

const gated = (process.env["REACH_WASM_TEST_PG_URL"] ?? "") !== "";
const STALE = "3";
let pg: PrivatePostgres | null = null;
let bundle: { main: string; remove(): void } | undefined;
const procs: CliProcess[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  if (!gated) return;
  pg = privatePostgres(await freePort());
  if (pg === null) throw new Error("cannot start a private PostgreSQL cluster (Debian's postgresql binaries under /usr/lib/postgresql)");
  bundle = await cliBundle();
}, 180_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  bundle?.remove();
  pg?.remove();
}, 60_000);

type Json = Record<string, unknown>;
const serve = async (): Promise<{ p: CliProcess; url: string }> => {
  const p = spawnCli(bundle!.main, ["serve", "--db", pg!.url, "--workers", "0", "--listen", "127.0.0.1:0", "--stale-after", STALE]);
  procs.push(p);
  // with its database up it serves once ready ("serving runs from … on URL"); with it down, at once ("listening on URL")
  const line = await p.line(/(listening|serving runs from \S+) on http:/);
  return { p, url: / on (http:\/\/[^;\s]+)/.exec(line)![1]! };
};
const worker = (cli: string | readonly string[] = bundle!.main): CliProcess => {
  const p = spawnCli(cli, ["worker", "--db", pg!.url, "--concurrency", "2", "--stale-after", STALE, "--poll", "300"]);
  procs.push(p);
  return p;
};

describe.skipIf(!gated)("the run service on a PostgreSQL server that goes away and comes back", () => {
  it("keeps every process alive, answers 503 + Retry-After meanwhile, and ends every run once with the local run hash", async () => {
    const s1 = await serve();
    await s1.p.line(/serving runs from/);
    const w1 = worker();
    const w2 = worker();
    await Promise.all([w1.line(/takes runs/), w2.line(/takes runs/)]);
    const admin = await openDatabase({ url: pg!.url, poolSize: 1 });
    const token = await createToken(admin, "outage");
    await admin.close();
    const api = async (url: string, method: string, path: string, body?: BodyInit, type?: string) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(type === undefined ? {} : { "content-type": type }) };
      const res = await fetch(`${url}${path}`, { method, ...(body === undefined ? {} : { body }), headers });
      const text = await res.text();
      return { status: res.status, json: (text.startsWith("{") ? JSON.parse(text) : {}) as Json, retryAfter: res.headers.get("retry-after") };
    };
    const archive = spinPackArchive(4, 300_000, "spin-outage");
    const reg = await api(s1.url, "POST", "/packs", archive as Uint8Array<ArrayBuffer>, "application/gzip");
    expect(reg.status).toBe(201);
    const digest = reg.json["digest"] as string;
    const seeds = Array.from({ length: 8 }, (_, i) => String(i));
    const local = new Map<string, string>();
    for (const seed of seeds) local.set(seed, (await runEngine(env, { pack: { archive }, seed })).runHash);
    const submit = async (url: string, seed: string) => {
      const r = await api(url, "POST", "/runs", JSON.stringify({ pack: digest, seed }), "application/json");
      expect(r.status, JSON.stringify(r.json)).toBe(202);
      return r.json["runId"] as string;
    };
    const runs = new Map<string, string>(); // runId → seed
    for (const seed of seeds.slice(0, 6)) runs.set(await submit(s1.url, seed), seed);
    await until(async () => ((await api(s1.url, "GET", "/runs?status=EXECUTING")).json["runs"] as Json[] | undefined ?? []).length > 0, "a run in flight");

    await pg!.stop("immediate"); // a crash: every connection is cut, nothing is shut down cleanly
    for (const [method, path] of [["GET", "/runs"], ["GET", "/healthz"], ["POST", "/runs"]] as const) {
      const r = await api(s1.url, method, path, method === "POST" ? JSON.stringify({ pack: digest, seed: "99" }) : undefined, "application/json");
      expect([path, r.status, (r.json["error"] as Json | undefined)?.["code"]]).toEqual([path, 503, "EXEC_RESOURCE_UNAVAILABLE"]);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // runs in flight end while the database is away: their workers keep their ends until it is back
    await Promise.any([w1, w2].map((w) => w.line(/its end is kept here and stored as soon as it answers/)));
    const w3 = worker(DENO_CLI); // started while the database is down (on Deno): it waits for it
    const s2 = await serve();
    await Promise.all([w3.line(/waiting for it/), s2.p.line(/waiting for it/)]);
    const early = await api(s2.url, "GET", "/healthz");
    expect([early.status, Number(early.retryAfter) >= 1]).toEqual([503, true]);
    expect([s1, w1, w2, w3, s2].map((x) => ("p" in x ? x.p : x).alive())).toEqual([true, true, true, true, true]);
    // a client that sends a run to the serve still waiting for its database waits for it (the 503 says "starting")
    const early2 = new ServiceClient({ server: s2.url, token, connectWaitMs: 300_000 }).submit(digest, archive, { seed: "7" });
    await pg!.start();

    await Promise.all([w3.line(/takes runs/), s2.p.line(/serving runs from/)]);
    runs.set((await early2).runId, "7");
    for (const seed of seeds.slice(6, 7)) runs.set(await submit(s2.url, seed), seed);
    const records = new Map<string, Json>();
    await until(async () => {
      for (const id of runs.keys()) {
        if (records.has(id)) continue;
        const r = await api(s1.url, "GET", `/runs/${id}`);
        if (r.status === 200 && !["PENDING", "EXECUTING"].includes(r.json["status"] as string)) records.set(id, r.json);
      }
      return records.size === runs.size;
    }, "every run to end");
    for (const [id, seed] of runs) {
      const r = records.get(id)!;
      expect([seed, r["status"], r["runHash"], r["attempts"]]).toEqual([seed, "COMPLETED", local.get(seed), 1]); // executed once
    }
    const one = [...runs.keys()][0]!;
    const capsule = readRunCapsule(new Uint8Array(await (await fetch(`${s1.url}/runs/${one}/capsule`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()));
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    expect((await replayCapsule(capsule, env)).matches).toBe(true);

    // a worker killed while it holds runs: they are re-queued and end correctly on the others
    const more = new Map<string, string>();
    for (const seed of seeds) more.set(await submit(s1.url, seed), seed);
    const victim = w1.child.pid!;
    await until(async () => ((await api(s1.url, "GET", "/runs?status=EXECUTING")).json["runs"] as Json[]).some((r) => String(r["worker"]).endsWith(`:${victim}`)), "the victim to hold a run");
    w1.child.kill("SIGKILL");
    await until(async () => {
      const ended = await Promise.all([...more.keys()].map(async (id) => (await api(s1.url, "GET", `/runs/${id}`)).json));
      return ended.every((r) => !["PENDING", "EXECUTING"].includes(r["status"] as string));
    }, "the killed worker's runs to end");
    for (const [id, seed] of more) {
      const r = (await api(s1.url, "GET", `/runs/${id}`)).json;
      expect([seed, r["status"], r["runHash"]]).toEqual([seed, "COMPLETED", local.get(seed)]);
    }
    expect([s1.p, w2, w3, s2.p].map((p) => p.alive())).toEqual([true, true, true, true]);
    for (const p of procs) expect(p.stderr()).not.toMatch(/this is a bug|internal error|uncaught/i);
  }, 600_000);
});
