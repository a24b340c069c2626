// The run service end to end on the embedded store (PGlite in memory): submit, wait, record, events, capsule,
// uploads, refusals (malformed packs, bad bodies, oversized bodies), cancels, paging and the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../capsule/archive.ts";
import { localRunHash, packArchive, spinPackArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import { ROUTES } from "./openapi.ts";

const MAX_BODY = 2 * 1024 * 1024;
let t: TestService;
beforeAll(async () => {
  t = await startTestService({ maxBodyBytes: MAX_BODY });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const bytes = (b: Uint8Array) => b as Uint8Array<ArrayBuffer>;
type Json = Record<string, unknown>;

async function call(method: string, path: string, body?: BodyInit, type?: string): Promise<{ status: number; json: Json; res: Response }> {
  const res = await fetch(`${t.url}${path}`, { method, ...(body === undefined ? {} : { body }), headers: type === undefined ? {} : { "content-type": type } });
  const text = await res.text();
  return { status: res.status, json: text.startsWith("{") ? (JSON.parse(text) as Json) : {}, res };
}

async function upload(archive: Uint8Array): Promise<string> {
  const r = await call("POST", "/packs", bytes(archive), "application/gzip");
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json["digest"] as string;
}

async function submit(digest: string, options: Json = {}): Promise<string> {
  const r = await call("POST", "/runs", JSON.stringify({ pack: digest, ...options }), "application/json");
  expect(r.status, JSON.stringify(r.json)).toBe(202);
  return r.json["runId"] as string;
}

async function waitEnd(runId: string): Promise<Json> {
  for (;;) {
    const r = await call("GET", `/runs/${runId}?wait=30`);
    if (r.json["status"] !== "PENDING" && r.json["status"] !== "EXECUTING") return r.json;
  }
}

/** A refusal is a ReachError document (upstream error.schema.json) with the given status and code. */
function expectRefusal(r: { status: number; json: Json }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  expect(r.json["specVersion"]).toBe("1.0.0");
  const error = r.json["error"] as Json;
  expect(error["code"]).toBe(code);
  expect(typeof error["message"]).toBe("string");
  expect(["PROTOCOL", "POLICY", "EXECUTION", "FEDERATION", "PACK"]).toContain(error["category"]);
}

describe("run service on PGlite", () => {
  it("runs a registered pack and keeps its capsule, with the run hash of a local run", async () => {
    const runId = await submit(await upload(await packArchive("hello")), { seed: "7" });
    const record = await waitEnd(runId);
    expect(record["status"]).toBe("COMPLETED");
    expect(record["phase"]).toBe("completed");
    expect(record["runHash"]).toBe(await localRunHash("hello", { seed: "7" }));
    const capsule = await fetch(`${t.url}/runs/${runId}/capsule`);
    expect(capsule.status).toBe(200);
    expect(capsule.headers.get("content-disposition")).toContain(`${record["runHash"]}.capsule.tar.gz`);
    expect(readArchive(new Uint8Array(await capsule.arrayBuffer())).has("capsule.json")).toBe(true);
    const events = await (await fetch(`${t.url}/runs/${runId}/events`)).text();
    expect(events).toMatch(/event: run_started/);
    expect(events.match(/event: run_completed/g)?.length).toBe(1);
    const after = await (await fetch(`${t.url}/runs/${runId}/events`, { headers: { "last-event-id": "1" } })).text();
    expect(after).not.toMatch(/^id: [01]$/m);
  });

  it("takes a pack upload with the run (multipart, POST /agent/run), and a repeated requestId returns the first run", async () => {
    const form = () => {
      const f = new FormData();
      f.set("pack", new Blob([bytes(spinPackArchive(1, 10, "tiny"))]), "tiny.tar.gz");
      f.set("request", JSON.stringify({ input: { x: 1 }, requestId: "req-1" }));
      return f;
    };
    const first = await call("POST", "/agent/run", form());
    expect(first.status, JSON.stringify(first.json)).toBe(202);
    const again = await call("POST", "/agent/run", form());
    expect(again.status).toBe(200);
    expect(again.json["runId"]).toBe(first.json["runId"]);
    expect((await waitEnd(first.json["runId"] as string))["status"]).toBe("COMPLETED");
  });

  it("refuses malformed packs, unknown packs and malformed requests with ReachError documents", async () => {
    expectRefusal(await call("POST", "/packs", bytes(new TextEncoder().encode("not a tar.gz")), "application/gzip"), 422, "PACK_MALFORMED");
    expectRefusal(await call("POST", "/packs", bytes(await packArchive("spec_version_fail")), "application/gzip"), 422, "PROTO_VERSION_MISMATCH");
    expectRefusal(await call("POST", "/packs", bytes(new Uint8Array(0)), "application/gzip"), 400, "PROTO_INVALID_MESSAGE");
    expectRefusal(await call("POST", `/packs?digest=${"0".repeat(64)}`, bytes(await packArchive("hello")), "application/gzip"), 422, "PACK_MALFORMED");
    expectRefusal(await call("POST", "/runs", JSON.stringify({ pack: "a".repeat(64) }), "application/json"), 404, "PACK_NOT_FOUND");
    expectRefusal(await call("POST", "/runs", "{not json", "application/json"), 400, "PROTO_INVALID_MESSAGE");
    expectRefusal(await call("POST", "/runs", JSON.stringify({ pack: "x" }), "application/json"), 400, "PROTO_SCHEMA_VIOLATION");
    expectRefusal(await call("POST", "/runs", JSON.stringify({ pack: "a".repeat(64), sede: 1 }), "application/json"), 400, "PROTO_SCHEMA_VIOLATION");
    // an input the engine refuses (here a lone surrogate) is refused before the pack is looked up
    expectRefusal(await call("POST", "/runs", `{"pack":"${"a".repeat(64)}","input":{"s":"\\ud800"}}`, "application/json"), 400, "PROTO_INVALID_MESSAGE");
    expectRefusal(await call("POST", "/runs", "x", "text/plain"), 415, "PROTO_INVALID_MESSAGE");
    // JSON a run would read differently from a reader of its record: a name twice (here spelled two ways), an input nested past 256
    expectRefusal(await call("POST", "/runs", `{"pack":"${"a".repeat(64)}","input":{"k":1,"\\u006b":2}}`, "application/json"), 400, "PROTO_INVALID_MESSAGE");
    expectRefusal(await call("POST", "/runs", `{"pack":"${"a".repeat(64)}","input":${"[".repeat(257)}${"]".repeat(257)}}`, "application/json"), 400, "PROTO_INVALID_MESSAGE");
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expectRefusal(await call("POST", "/runs", `{"pack":"${"a".repeat(64)}","input":${deep}}`, "application/json"), 400, "PROTO_INVALID_MESSAGE");
    expectRefusal(await call("GET", "/runs?cursor=99999999999999999999"), 400, "PROTO_SCHEMA_VIOLATION");
    expectRefusal(await call("GET", "/runs/not-a-uuid"), 404, "PROTO_INVALID_ARGUMENT");
    expectRefusal(await call("GET", "/runs/00000000-0000-4000-8000-000000000000"), 404, "PROTO_INVALID_ARGUMENT");
    expectRefusal(await call("GET", "/runs?status=DONE"), 400, "PROTO_SCHEMA_VIOLATION");
    expectRefusal(await call("GET", "/runs/00000000-0000-4000-8000-000000000000?wait=99"), 400, "PROTO_INVALID_ARGUMENT");
    // a path the API has, with a method it does not take: 405 naming the methods it takes
    for (const [method, path, allow] of [["DELETE", "/runs", "POST, GET, HEAD"], ["PUT", "/runs/00000000-0000-4000-8000-000000000000", "GET, HEAD"], ["GET", "/runs/00000000-0000-4000-8000-000000000000/cancel", "POST"], ["GET", "/packs", "POST"]] as const) {
      const r = await call(method, path);
      expectRefusal(r, 405, "PROTO_INVALID_ARGUMENT");
      expect(r.res.headers.get("allow"), `${method} ${path}`).toBe(allow);
    }
    expectRefusal(await call("GET", "/nope"), 404, "PROTO_INVALID_ARGUMENT");
    expectRefusal(await call("POST", "/openapi.json"), 405, "PROTO_INVALID_ARGUMENT");
    expectRefusal(await call("POST", "/openapiXjson"), 404, "PROTO_INVALID_ARGUMENT"); // a route's "." is no wildcard
  });

  it("bounds request bodies, with and without Content-Length", async () => {
    const big = new Uint8Array(MAX_BODY + 1);
    expectRefusal(await call("POST", "/packs", bytes(big), "application/gzip"), 413, "PROTO_INVALID_MESSAGE");
    const chunks = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(MAX_BODY / 2));
        c.close();
      },
    });
    const res = await fetch(`${t.url}/packs`, { method: "POST", body: chunks, headers: { "content-type": "application/gzip" }, duplex: "half" } as RequestInit);
    expectRefusal({ status: res.status, json: (await res.json()) as Json }, 413, "PROTO_INVALID_MESSAGE");
  });

  it("lists runs newest first, filtered and paged", async () => {
    const digest = await upload(await packArchive("hello"));
    const mine = [];
    for (const seed of ["100", "101", "102"]) mine.push(await submit(digest, { seed }));
    for (const id of mine) expect((await waitEnd(id))["status"]).toBe("COMPLETED");
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await call("GET", `/runs?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`);
      expect(r.status).toBe(200);
      const runs = r.json["runs"] as Json[];
      expect(runs.length).toBeLessThanOrEqual(2);
      all.push(...runs.map((x) => x["runId"] as string));
      cursor = r.json["nextCursor"] as string | null;
    } while (cursor !== null);
    expect(all.length).toBe(5);
    expect(new Set(all).size).toBe(5);
    expect(all.slice(0, 3)).toEqual([...mine].reverse()); // newest first
    const hello = await call("GET", "/runs?pack=hello&status=COMPLETED");
    expect((hello.json["runs"] as Json[]).map((x) => (x["pack"] as Json)["id"])).toEqual(["hello", "hello", "hello", "hello"]);
    expect(((await call("GET", "/runs?status=ABORTED")).json["runs"] as Json[]).length).toBe(0);
    // a parameter given twice is refused, not read as its first value
    for (const path of ["/runs?limit=1&limit=2", "/runs?status=COMPLETED&pack=hello&status=FAILED", `/runs/${mine[0]}?wait=0&wait=5`]) {
      const twice = await call("GET", path);
      expect(twice.status, path).toBe(400);
      expect(twice.json["error"]).toMatchObject({ code: "PROTO_INVALID_ARGUMENT", message: expect.stringMatching(/^the query parameter "(limit|status|wait)" is given twice; give it once$/) });
    }
  });

  it("reads a multipart request part sent as a file, and refuses a part it would ignore (unknown, or twice)", async () => {
    const pack = () => new Blob([bytes(spinPackArchive(1, 10, "tiny"))]);
    const asFile = new FormData();
    asFile.set("pack", pack(), "tiny.tar.gz");
    asFile.set("request", new Blob([JSON.stringify({ seed: "41", input: { x: 2 } })], { type: "application/json" }), "run.json");
    const r = await call("POST", "/runs", asFile);
    expect(r.status, JSON.stringify(r.json)).toBe(202);
    const record = await waitEnd(r.json["runId"] as string);
    expect(record["status"]).toBe("COMPLETED");
    expect(record["request"]).toEqual({ seed: "41", input: { x: 2 } });
    const misspelt = new FormData();
    misspelt.set("pack", pack(), "tiny.tar.gz");
    misspelt.set("requests", JSON.stringify({ seed: "41" }));
    expectRefusal(await call("POST", "/runs", misspelt), 400, "PROTO_INVALID_MESSAGE");
    const twice = new FormData();
    twice.append("pack", pack(), "tiny.tar.gz");
    twice.append("pack", new Blob([bytes(await packArchive("hello"))]), "hello.tar.gz");
    expectRefusal(await call("POST", "/packs", twice), 400, "PROTO_INVALID_MESSAGE");
  });

  it("serves an OpenAPI document generated from the schemas, naming every route it implements", async () => {
    const r = await call("GET", "/openapi.json");
    expect(r.json["openapi"]).toBe("3.1.0");
    const paths = r.json["paths"] as Record<string, Record<string, unknown>>;
    for (const route of ROUTES) {
      expect(paths[route.path]?.[route.method], `${route.method} ${route.path}`).toBeDefined();
      const probe = await call(route.method.toUpperCase(), route.path.replace("{id}", "00000000-0000-4000-8000-000000000000"));
      expect(JSON.stringify(probe.json)).not.toMatch(/no route/);
    }
    expect(JSON.stringify(paths["/runs"]!["post"])).toContain('"pack"');
  });
});
