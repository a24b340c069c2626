// A requestId names one request, as an idempotency key does: the same requestId with the same request (decided on the
// canonical request — pack digest, input as canonical JSON, seed, approve, step limits, the secrets' names — never on
// bytes, never on secret values) returns the first run with 200; with a different request it is refused with 409 and a
// ReachError naming what differs, and no second run exists, also when the submissions race. A run recorded before
// request digests were kept returns its run as before. On PGlite, and on PostgreSQL when $REACH_WASM_TEST_PG_URL is
// set. No worker runs here: the runs stay queued, nothing is executed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgres, spinPackArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";

type Json = Record<string, unknown>;
const SECRET_VALUE = "s3cret-value-never-stored";

const stores: [string, () => Promise<TestService>][] = [["PGlite", () => startTestService({ workers: 0 })]];
const pgUrl = process.env["REACH_WASM_TEST_PG_URL"];
if (pgUrl !== undefined && pgUrl !== "") stores.push(["PostgreSQL", async () => startTestService({ workers: 0, dbUrl: await freshPostgres(pgUrl, "reach_wasm_request_id") })]);

describe.each(stores)("a repeated requestId on %s", (_name, start) => {
  let t: TestService;
  let pack: string;
  let other: string;
  beforeAll(async () => {
    t = await start();
    pack = await upload(spinPackArchive(1, 10, "tiny"));
    other = await upload(spinPackArchive(2, 10, "tiny"));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  async function call(method: string, path: string, body?: BodyInit, type?: string): Promise<{ status: number; json: Json }> {
    const res = await fetch(`${t.url}${path}`, { method, ...(body === undefined ? {} : { body }), headers: type === undefined ? {} : { "content-type": type } });
    const text = await res.text();
    return { status: res.status, json: text.startsWith("{") ? (JSON.parse(text) as Json) : {} };
  }
  async function upload(archive: Uint8Array): Promise<string> {
    const r = await call("POST", "/packs", archive as Uint8Array<ArrayBuffer>, "application/gzip");
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    return r.json["digest"] as string;
  }
  /** Submit a JSON body given as its text (so that key order and number spelling are the test's). */
  const submit = (text: string) => call("POST", "/runs", text, "application/json");
  const runsOf = async (requestId: string) => (await t.db.query<{ id: string }>("SELECT id::text AS id FROM reach_wasm.runs WHERE request_id = $1", [requestId])).map((r) => r.id);

  function expectConflict(r: { status: number; json: Json }, requestId: string, runId: string, differs: string[]): void {
    expect(r.status, JSON.stringify(r.json)).toBe(409);
    expect(r.json["specVersion"]).toBe("1.0.0");
    const error = r.json["error"] as Json;
    expect(error["code"]).toBe("PROTO_INVALID_ARGUMENT");
    expect(error["message"]).toContain(`requestId "${requestId}" was already used for a different request`);
    expect(error["message"]).toContain("use a new requestId");
    expect(error["details"]).toEqual({ requestId, runId, differs });
  }

  it("returns the first run for the same canonical request, whatever its key order and number spelling", async () => {
    const first = await submit(`{"pack":"${pack}","requestId":"same-1","input":{"b":1.0,"a":[1e2,"x"],"n":{"z":null,"y":-0}},"seed":"7","maxSteps":5}`);
    expect(first.status, JSON.stringify(first.json)).toBe(202);
    const runId = first.json["runId"] as string;
    for (const again of [
      `{"pack":"${pack}","requestId":"same-1","input":{"b":1.0,"a":[1e2,"x"],"n":{"z":null,"y":-0}},"seed":"7","maxSteps":5}`,
      `{"maxSteps":5.0,"seed":7,"input":{"n":{"y":0,"z":null},"a":[100,"x"],"b":1},"requestId":"same-1","pack":"${pack}","approve":false}`,
    ]) {
      const r = await submit(again);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json).toEqual({ runId, status: "PENDING", requestId: "same-1" });
    }
    // the same request as a pack upload (multipart): the same pack digest, the same run
    const form = new FormData();
    form.set("pack", new Blob([spinPackArchive(1, 10, "tiny") as Uint8Array<ArrayBuffer>]), "tiny.tar.gz");
    form.set("request", `{"seed":7,"requestId":"same-1","maxSteps":5,"input":{"a":[100,"x"],"b":1,"n":{"y":0,"z":null}}}`);
    const upload = await call("POST", "/agent/run", form);
    expect([upload.status, upload.json["runId"]]).toEqual([200, runId]);
    expect(await runsOf("same-1")).toEqual([runId]);
  });

  it("refuses the requestId used again for a different request with 409, naming what differs, and keeps the first run", async () => {
    const base = { pack, requestId: "diff-1", input: { q: "a" }, seed: "1" };
    const first = await submit(JSON.stringify(base));
    expect(first.status).toBe(202);
    const runId = first.json["runId"] as string;
    const cases: [Json, string[]][] = [
      [{ input: { q: "b" } }, ["input"]],
      [{ input: undefined }, ["input"]], // absent: the run takes {}
      [{ seed: "2" }, ["seed"]],
      [{ seed: undefined }, ["seed"]], // absent: a seed derived from the input
      [{ pack: other }, ["pack"]],
      [{ approve: true }, ["approve"]],
      [{ maxSteps: 3 }, ["maxSteps"]],
      [{ stepTimeoutMs: 1000 }, ["stepTimeoutMs"]],
      [{ secrets: { API_KEY: SECRET_VALUE } }, ["secrets"]],
      [{ seed: "3", input: [1] }, ["input", "seed"]],
    ];
    for (const [change, differs] of cases) expectConflict(await submit(JSON.stringify({ ...base, ...change })), "diff-1", runId, differs);
    const form = new FormData();
    form.set("pack", new Blob([spinPackArchive(2, 10, "tiny") as Uint8Array<ArrayBuffer>]), "tiny.tar.gz");
    form.set("request", JSON.stringify({ requestId: "diff-1", input: { q: "a" }, seed: "1" }));
    expectConflict(await call("POST", "/runs", form), "diff-1", runId, ["pack"]);
    expect(await runsOf("diff-1")).toEqual([runId]);
    const record = await call("GET", `/runs/${runId}`);
    expect(record.json["request"]).toEqual({ input: { q: "a" }, seed: "1" });
    expect((await submit(JSON.stringify(base))).status).toBe(200); // the first request is still answered
  });

  it("decides on the secrets' names, never their values, and stores no value", async () => {
    const body = (value: string, more: Json = {}) => JSON.stringify({ pack, requestId: "sec-1", secrets: { API_KEY: value, ...more } });
    const first = await submit(body(SECRET_VALUE));
    expect(first.status).toBe(202);
    const runId = first.json["runId"] as string;
    expect((await submit(body("another-value"))).json).toEqual({ runId, status: "PENDING", requestId: "sec-1" });
    expectConflict(await submit(body(SECRET_VALUE, { OTHER: "x" })), "sec-1", runId, ["secrets"]);
    expectConflict(await submit(JSON.stringify({ pack, requestId: "sec-1" })), "sec-1", runId, ["secrets"]);
    const rows = await t.db.query<{ row: string }>("SELECT row_to_json(r)::text AS row FROM reach_wasm.runs r WHERE r.id = $1", [runId]);
    expect(rows[0]!.row).toMatch(/"request_digest":"[0-9a-f]{64}"/);
    expect(rows[0]!.row).not.toContain(SECRET_VALUE);
  });

  it("answers a race of one requestId with one run: one 202, the others 200 (same request) or 409 (different)", async () => {
    const same = await Promise.all(Array.from({ length: 8 }, () => submit(JSON.stringify({ pack, requestId: "race-same", seed: "5" }))));
    expect(same.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 202]);
    const [runId] = await runsOf("race-same");
    expect(new Set(same.map((r) => r.json["runId"]))).toEqual(new Set([runId]));
    const different = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(JSON.stringify({ pack, requestId: "race-diff", seed: String(i) }))));
    expect(different.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409, 409, 409, 409]);
    const runs = await runsOf("race-diff");
    expect(runs.length).toBe(1);
    for (const r of different.filter((x) => x.status === 409)) expectConflict(r, "race-diff", runs[0]!, ["seed"]);
  });

  it("returns a run recorded before request digests were kept for its requestId, as before", async () => {
    const first = await submit(JSON.stringify({ pack, requestId: "old-1", seed: "1" }));
    expect(first.status).toBe(202);
    await t.db.query("UPDATE reach_wasm.runs SET request_digest = NULL WHERE request_id = 'old-1'"); // as a run of schema version 2
    const again = await submit(JSON.stringify({ pack, requestId: "old-1", seed: "2" }));
    expect([again.status, again.json["runId"]]).toEqual([200, first.json["runId"]]);
    expect((await runsOf("old-1")).length).toBe(1);
  });
});
