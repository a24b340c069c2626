// Whatever JSON the engine accepts, the run store keeps and returns exactly, on PGlite and on PostgreSQL
// ($REACH_WASM_TEST_PG_URL): a run input and a tool output with U+0000, characters past the BMP, -0, numbers past
// 2^53 and keys in any order (`__proto__` too) come back byte for byte what a local run gives, with the local run
// hash and a capsule that verifies and replays; an error message with a lone surrogate is kept as the engine wrote
// it; an input the engine refuses is refused at the door (4xx) before a run exists; and one faulty submission in a
// batch fails that submission only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeArchive } from "../capsule/archive.ts";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { runEngine } from "../engine/engine.ts";
import { replayCapsule } from "../engine/replay.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { env, freshPostgres, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import { SubmitBatcher } from "./submit-batch.ts";
import { randomRunId } from "./tokens.ts";

type Json = Record<string, unknown>;
const enc = new TextEncoder();

/** A pack of one QuickJS tool and one step, with the step's arguments `{in: input.data}`. */
function toolPack(id: string, tool: string): Uint8Array {
  const pack = {
    specVersion: "1.0.0", id, version: "1.0.0",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "t" }] }, policies: { maxToolCalls: 1 } },
    entrypoint: "plan.json",
    tools: { t: { kind: "js", module: "tools/t.js" } },
  };
  const plan = {
    contract_version: "S2-B-05.v1", plan_id: `${id}-1`, goal_id: id, created_at: "1970-01-01T00:00:00.000Z", planner: "static", status: "APPROVED",
    risk: { level: 0 }, scope: { allowed: ["t"] },
    steps: [{ id: "s", tool: "t", arguments: { in: { $input: "/data" } }, return_spec: { type: "object" } }],
    success_criteria: ["ran"],
  };
  return writeArchive([
    { path: "plan.json", bytes: enc.encode(JSON.stringify(plan)) },
    { path: "reach.json", bytes: enc.encode(JSON.stringify(pack)) },
    { path: "tools/t.js", bytes: enc.encode(tool) },
  ]);
}

/** `echo` returns the input beside values jsonb would change (U+0000, -0, 2^64, key order, non-BMP). */
const oddPack = () =>
  toolPack("odd", `export default function t(a) {
  return { zb: 1, za: 2, "10": "ten", "2": "two", nul: "a\u0000b", astral: "\u{1F600}\u{10FFFF}", negZero: -0, big: 12345678901234567890, tiny: 5e-324, huge: 1e21, echoed: a.in };
}
`);
/** A tool that throws a message with U+0000, a lone surrogate and a character past the BMP. */
const oopsPack = () => toolPack("oops", `export default function t(a) { throw new Error("broken \u0000 \ud800 \u{1F600} " + JSON.stringify(a.in)); }\n`);

/** The input as JSON text, with what jsonb would change: key order, `__proto__`, U+0000, -0, 2^64, non-BMP. */
const INPUT_TEXT = `{"data":{"z":1,"a":[-0,18446744073709551616,1e-7,"\\u0000","\\ud83d\\ude00","\\u2028"],"__proto__":{"x":"y"},"10":true,"2":null,"":{}}}`;

const stores: [string, () => Promise<TestService>][] = [["PGlite", () => startTestService()]];
const pgUrl = process.env["REACH_WASM_TEST_PG_URL"];
if (pgUrl !== undefined && pgUrl !== "") stores.push(["PostgreSQL", async () => startTestService({ dbUrl: await freshPostgres(pgUrl, "reach_wasm_exact") })]);

describe.each(stores)("the run store on %s", (_name, start) => {
  let t: TestService;
  beforeAll(async () => {
    t = await start();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  async function call(method: string, path: string, body?: BodyInit, type?: string): Promise<{ status: number; text: string; json: Json; headers: Headers }> {
    const res = await fetch(`${t.url}${path}`, { method, ...(body === undefined ? {} : { body }), headers: type === undefined ? {} : { "content-type": type } });
    const text = await res.text();
    return { status: res.status, text, json: text.startsWith("{") ? (JSON.parse(text) as Json) : {}, headers: res.headers };
  }
  async function upload(archive: Uint8Array): Promise<string> {
    const r = await call("POST", "/packs", archive as Uint8Array<ArrayBuffer>, "application/gzip");
    expect(r.status, r.text).toBe(201);
    return r.json["digest"] as string;
  }
  async function runToEnd(digest: string, inputText: string): Promise<{ record: Json; text: string }> {
    const s = await call("POST", "/runs", `{"pack":"${digest}","seed":"3","input":${inputText}}`, "application/json");
    expect(s.status, s.text).toBe(202);
    for (;;) {
      const r = await call("GET", `/runs/${s.json["runId"] as string}?wait=30`);
      if (r.json["status"] !== "PENDING" && r.json["status"] !== "EXECUTING") return { record: r.json, text: r.text };
    }
  }
  async function checkCapsule(runId: string, runHash: string): Promise<void> {
    const res = await fetch(`${t.url}/runs/${runId}/capsule`);
    expect(res.status).toBe(200);
    const capsule = readRunCapsule(new Uint8Array(await res.arrayBuffer()));
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    const replay = await replayCapsule(capsule, env);
    expect([replay.matches, replay.runHash]).toEqual([true, runHash]);
  }

  it("keeps an input and tool outputs byte-exact, with the local run hash, and a capsule that verifies and replays", async () => {
    const archive = oddPack();
    const local = await runEngine(env, { pack: { archive }, seed: "3", input: JSON.parse(INPUT_TEXT) as never });
    expect(local.status).toBe("COMPLETED");
    const { record, text } = await runToEnd(await upload(archive), INPUT_TEXT);
    expect([record["status"], record["runHash"]]).toEqual(["COMPLETED", local.runHash]);
    // byte for byte: the record's input is the input sent, its result the local run's result
    expect(text).toContain(`"input":${JSON.stringify(JSON.parse(INPUT_TEXT))}`);
    expect(text).toContain(`"result":${JSON.stringify(local.result)}`);
    expect(JSON.stringify(local.result)).toContain('"nul":"a\\u0000b"');
    await checkCapsule(record["runId"] as string, local.runHash);
  }, 120_000);

  it("keeps an error message with U+0000 and a lone surrogate as the engine wrote it", async () => {
    const archive = oopsPack();
    const local = await runEngine(env, { pack: { archive }, seed: "3", input: JSON.parse(INPUT_TEXT) as never });
    expect(local.status).toBe("FAILED");
    const { record, text } = await runToEnd(await upload(archive), INPUT_TEXT);
    expect([record["status"], record["runHash"], record["attempts"]]).toEqual(["FAILED", local.runHash, 1]);
    expect(text).toContain(`"result":${JSON.stringify(local.result)}`);
    expect((record["error"] as Json)["message"]).toBe(local.error!.message);
    await checkCapsule(record["runId"] as string, local.runHash);
  }, 120_000);

  it("refuses at the door, before a run exists, an input the engine refuses", async () => {
    const digest = await upload(oddPack());
    const before = (await call("GET", "/runs?limit=200")).json["runs"] as Json[];
    for (const input of ['{"s":"\\udc00 lone"}', '{"s":"\\ud800"}', '{"n":1e400}']) {
      const r = await call("POST", "/runs", `{"pack":"${digest}","input":${input}}`, "application/json");
      expect(r.status, `${input}: ${r.text}`).toBe(400);
      expect(r.json["error"]).toMatchObject({ code: expect.stringMatching(/^PROTO_/) });
      const f = new FormData();
      f.set("pack", new Blob([oddPack() as Uint8Array<ArrayBuffer>]), "odd.tar.gz");
      f.set("request", `{"input":${input}}`);
      expect((await call("POST", "/runs", f)).status, input).toBe(400);
    }
    expect(((await call("GET", "/runs?limit=200")).json["runs"] as Json[]).length).toBe(before.length);
  });

  it("fails only the faulty submission of a batch", async () => {
    const digest = await upload(oddPack());
    const [{ archive_sha256: sha }] = (await t.db.query<{ archive_sha256: string }>("SELECT archive_sha256 FROM reach_wasm.packs WHERE pack_digest = $1", [digest])) as [{ archive_sha256: string }];
    const pack = { digest, archiveSha256: sha, id: "odd", version: "1.0.0" };
    const batcher = new SubmitBatcher(t.db, t.queue);
    const taken = randomRunId();
    await batcher.submit({ id: taken, tenant: "local", pack, options: { seed: "1", input: { data: 1 } } });
    // submitted together, so they are written as one batch; the second reuses a run id (a primary key violation)
    const ids = [randomRunId(), taken, randomRunId()];
    const outcomes = await Promise.allSettled(ids.map((id, i) => batcher.submit({ id, tenant: "local", pack, options: { seed: String(i), input: { data: i } } })));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    for (const id of [ids[0]!, ids[2]!]) {
      for (;;) {
        const r = await call("GET", `/runs/${id}?wait=30`);
        if (r.json["status"] !== "PENDING" && r.json["status"] !== "EXECUTING") {
          expect(r.json["status"]).toBe("COMPLETED");
          break;
        }
      }
    }
  }, 120_000);
});
