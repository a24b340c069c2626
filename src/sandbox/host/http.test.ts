import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base64ToBytes } from "../../canonical/hex.ts";
import { TapePlayer } from "../../record/player.ts";
import type { FetchLike } from "../../protocol/fetch.ts";
import { rejected, setup } from "./_fixture.test.ts";

let server: Server;
let base = "";
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    res.sendDate = false;
    const url = req.url ?? "/";
    if (url === "/hello") {
      res.writeHead(200, { "content-type": "text/plain", "x-a": "1" });
      res.end("hello");
    } else if (url === "/echo") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ method: req.method, body: Buffer.concat(chunks).toString(), auth: req.headers["authorization"] ?? null }));
      });
    } else if (url === "/redirect-ok") {
      res.writeHead(302, { location: "/hello" });
      res.end();
    } else if (url === "/redirect-post") {
      res.writeHead(303, { location: "/echo" });
      res.end();
    } else if (url === "/redirect-evil") {
      res.writeHead(302, { location: "http://evil.example.com/steal" });
      res.end();
    } else if (url === "/redirect-ip") {
      res.writeHead(307, { location: "http://[::ffff:127.0.0.1]:1/" });
      res.end();
    } else if (url === "/loop") {
      res.writeHead(302, { location: "/loop" });
      res.end();
    } else if (url === "/big") {
      res.writeHead(200, { "content-length": String(2 * 1024 * 1024) });
      res.end(Buffer.alloc(2 * 1024 * 1024, 97));
    } else if (url === "/big-chunked") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      let sent = 0;
      const pump = (): void => {
        while (sent < 2 * 1024 * 1024) {
          sent += 64 * 1024;
          if (!res.write(Buffer.alloc(64 * 1024, 98))) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
      res.on("error", () => undefined);
    } else {
      res.writeHead(404);
      res.end("not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const realFetch: FetchLike = (input, init) => fetch(input, init);
const net = (extra = {}) => setup({ allowedHosts: ["127.0.0.1"], fetch: realFetch, limits: { maxResponseBytes: 1024 * 1024, timeoutMs: 10_000 }, ...extra });
const body = (data: unknown): string => new TextDecoder().decode(base64ToBytes(data as string));

describe("http.fetch against a local server", () => {
  it("fetches from an allowed host", async () => {
    const { host, tape } = net();
    const res = await host.invoke("http.fetch", { url: `${base}/hello` });
    expect(res).toMatchObject({ status: 200, url: `${base}/hello` });
    expect(res["headers"]).toMatchObject({ "content-type": "text/plain", "x-a": "1" });
    expect(body(res["data"])).toBe("hello");
    expect(tape.records[0]).toMatchObject({ op: "http.fetch", request: { url: `${base}/hello` }, response: { status: 200 } });
  });

  it("sends method, headers and body; 404 is a response, not an error", async () => {
    const { host } = net();
    const res = await host.invoke("http.fetch", { url: `${base}/echo`, method: "POST", headers: { Authorization: "t" }, text: "hi" });
    expect(res["status"]).toBe(201);
    expect(JSON.parse(body(res["data"]))).toEqual({ method: "POST", body: "hi", auth: "t" });
    expect((await host.invoke("http.fetch", { url: `${base}/nothing` }))["status"]).toBe(404);
  });

  it("follows an allowed redirect, checking it; 303 turns POST into GET", async () => {
    const { host } = net();
    const res = await host.invoke("http.fetch", { url: `${base}/redirect-ok` });
    expect(res).toMatchObject({ status: 200, url: `${base}/hello` });
    const res2 = await host.invoke("http.fetch", { url: `${base}/redirect-post`, method: "POST", text: "x" });
    expect(JSON.parse(body(res2["data"]))).toMatchObject({ method: "GET", body: "" });
  });

  it("refuses a redirect to a disallowed host (RESOURCE_ACCESS) and never fetches it", async () => {
    for (const path of ["/redirect-evil", "/redirect-ip"]) {
      const { host, tape } = net();
      const err = await rejected(host.invoke("http.fetch", { url: `${base}${path}` }));
      expect(err.code).toBe("POLICY_VIOLATION");
      expect(err.details["violationType"]).toBe("RESOURCE_ACCESS");
      expect(String(err.details["attemptedCapability"])).toMatch(/^http\.fetch:http:\/\/(evil\.example\.com\/steal|\[::ffff:7f00:1\]:1\/)$/);
      expect(host.violation).toBe(err);
      expect(tape.records[0]!.error!.code).toBe("POLICY_VIOLATION");
    }
  });

  it("refuses a host that is not allowed before any request is made", async () => {
    const before = hits;
    const { host } = net();
    const err = await rejected(host.invoke("http.fetch", { url: base.replace("127.0.0.1", "localhost") + "/hello" }));
    expect(err.details).toMatchObject({ violationType: "RESOURCE_ACCESS" });
    expect(hits).toBe(before);
  });

  it("stops after 5 redirects", async () => {
    const { host } = net();
    const err = await rejected(host.invoke("http.fetch", { url: `${base}/loop` }));
    expect(err.code).toBe("EXEC_RESOURCE_UNAVAILABLE");
    expect(err.message).toMatch(/more than 5 redirects/);
  });

  it("refuses a body over the limit, declared or streamed", async () => {
    for (const path of ["/big", "/big-chunked"]) {
      const { host } = net();
      const err = await rejected(host.invoke("http.fetch", { url: `${base}${path}` }));
      expect(err.code).toBe("EXEC_RESOURCE_EXHAUSTED");
      expect(host.violation).toBeNull();
    }
  });

  it.each([
    [{ url: "x", headers: { Host: "evil.com" } }],
    [{ url: "x", headers: { "x-a": "1\r\nx-b: 2" } }],
    [{ url: "x", headers: { a: "1", A: "2" } }],
    [{ url: "x", method: "get" }],
    [{ url: "x", method: "GET", text: "body" }],
    [{ url: "x", headers: [] }],
    [{ url: 1 }],
  ])("refuses the hostile request %j", async (req) => {
    const { host } = net();
    const err = await rejected(host.invoke("http.fetch", req as never));
    expect(err.code).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("replays from the tape without any network", async () => {
    const a = net();
    await a.host.invoke("http.fetch", { url: `${base}/redirect-ok` });
    await rejected(a.host.invoke("http.fetch", { url: `${base}/big` }));
    const noNet: FetchLike = () => Promise.reject(new Error("network used during replay"));
    const r = setup({ allowedHosts: ["127.0.0.1"], fetch: noNet, player: new TapePlayer(a.tape.records, a.tape.blobs) });
    const res = await r.host.invoke("http.fetch", { url: `${base}/redirect-ok` });
    expect(body(res["data"])).toBe("hello");
    expect((await rejected(r.host.invoke("http.fetch", { url: `${base}/big` }))).code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(r.tape.toJsonl()).toBe(a.tape.toJsonl());
  });

  it("records identical tapes for identical fetches", async () => {
    const a = net();
    const b = net();
    await a.host.invoke("http.fetch", { url: `${base}/hello` });
    await b.host.invoke("http.fetch", { url: `${base}/hello` });
    expect(a.tape.toJsonl()).toBe(b.tape.toJsonl());
  });
});
