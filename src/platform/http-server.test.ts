import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { afterAll, describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { serveHttp } from "./http-server.ts";

const app = new Hono();
app.post("/echo", async (c) => c.json({ got: await c.req.json(), path: new URL(c.req.url).pathname }));
app.onError((err, c) => c.json({ failed: (err as Error).message }, 500)); // a body cut short is the client's doing

describe("serveHttp", () => {
  const dir = mkdtempSync(join(tmpdir(), "reach-http-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves a Hono app over plain HTTP on a free loopback port and closes", async () => {
    const server = await serveHttp(app.fetch, { hostname: "127.0.0.1", port: 0 });
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const res = await fetch(`${server.url}/echo`, { method: "POST", body: JSON.stringify({ a: 1 }), headers: { "content-type": "application/json" } });
    expect(await res.json()).toEqual({ got: { a: 1 }, path: "/echo" });
    expect((await fetch(`${server.url}/missing`)).status).toBe(404);
    await server.close();
    await expect(fetch(`${server.url}/echo`)).rejects.toThrow();
  });

  it("serves HTTPS with a PEM certificate", async () => {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
    const server = await serveHttp(app.fetch, { hostname: "127.0.0.1", port: 0, tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") } });
    expect(server.url.startsWith("https://127.0.0.1:")).toBe(true);
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(`${server.url}/echo`, { method: "POST", ca: readFileSync(cert), headers: { "content-type": "application/json" } }, (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve(text));
      });
      req.on("error", reject);
      req.end(JSON.stringify({ tls: true }));
    });
    expect(JSON.parse(body)).toEqual({ got: { tls: true }, path: "/echo" });
    await server.close();
  });

  it("answers a request that cannot become a Request (a Host that is no host, a backslash in the path) with a ReachError document", async () => {
    const server = await serveHttp(app.fetch, { hostname: "127.0.0.1", port: 0 });
    const raw = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(server.port, "127.0.0.1", () => socket.end(`${head}\r\nConnection: close\r\n\r\n`));
        let text = "";
        socket.on("data", (d: Buffer) => (text += d.toString()));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
    const host = `Host: 127.0.0.1:${server.port}`;
    const heads = [
      `GET /echo HTTP/1.1\r\nHost: 127.0.0.1:${server.port}@evil.example`,
      `GET /a\\b HTTP/1.1\r\n${host}`,
      // refused by Node's parser before any handler: a malformed chunk, Content-Length with Transfer-Encoding
      `POST /echo HTTP/1.1\r\n${host}\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n`,
      `GET /echo HTTP/1.1\r\n${host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n`,
    ];
    for (const head of heads) {
      const answer = await raw(head);
      expect(answer, head).toMatch(/^HTTP\/1\.1 400 /);
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, "")) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("PROTO_INVALID_MESSAGE");
      expect(body.error.message).toMatch(/cannot be read|not valid HTTP/);
    }
    expect((await fetch(`${server.url}/missing`)).status).toBe(404); // and it goes on serving
    await server.close();
  });

  it("refuses an address in use with a ReachError", async () => {
    const first = await serveHttp(app.fetch, { hostname: "127.0.0.1", port: 0 });
    await expect(serveHttp(app.fetch, { hostname: "127.0.0.1", port: first.port })).rejects.toBeInstanceOf(ReachError);
    await first.close();
  });
});
