// The guards every HTTP face is served behind (serveHttp): Host must name the server (no DNS rebinding), Origin must be
// its own or allowed (no page on another origin, `null` never), Sec-Fetch-Site cross-site/same-site is refused unless
// its origin is allowed; and each client (by address) has its own share of requests in progress, a streaming response
// counted until it ends, so that one client holding its share keeps no other client out.
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { checkHostOrigin, hostPolicy, parseAllowedHost, parseAllowedOrigin } from "./http-guard.ts";
import { clientKey, serveHttp } from "./http-server.ts";
import type { ClientInfo } from "./http-server.ts";

/** One raw HTTP request (fetch cannot set Host), from `localAddress` when given. */
function raw(url: string, headers: Record<string, string>, options: { method?: string; localAddress?: string; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? "GET", headers, ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }), agent: false }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const policy = hostPolicy({ hostname: "127.0.0.1", port: 7411, tls: false, allowedHosts: ["runs.example.com"], allowedOrigins: ["https://ui.example.com"] });
const req = (headers: Record<string, string>) => new Request("http://x/runs", { method: "POST", headers });

describe("checkHostOrigin", () => {
  it("passes this server's own names and what is allowed explicitly", () => {
    for (const host of ["127.0.0.1:7411", "localhost:7411", "LOCALHOST:7411", "[::1]:7411", "runs.example.com", "runs.example.com:443"]) expect(checkHostOrigin(req({ host }), policy), host).toBeNull();
    expect(checkHostOrigin(req({ host: "127.0.0.1:7411", origin: "http://127.0.0.1:7411", "sec-fetch-site": "same-origin" }), policy)).toBeNull();
    expect(checkHostOrigin(req({ host: "runs.example.com", origin: "https://runs.example.com" }), policy)).toBeNull();
    expect(checkHostOrigin(req({ host: "127.0.0.1:7411", origin: "https://ui.example.com", "sec-fetch-site": "cross-site" }), policy)).toBeNull();
  });

  it("refuses a rebound name, another port, another origin, Origin: null and cross-site fetches", () => {
    const refused: Record<string, string>[] = [
      { host: "evil.test:7411" },
      { host: "evil.test" },
      { host: "127.0.0.1:8080" },
      { host: "127.0.0.1.evil.test:7411" },
      { host: "127.0.0.1:7411", origin: "http://evil.test" },
      { host: "127.0.0.1:7411", origin: "http://127.0.0.1:3000" },
      { host: "127.0.0.1:7411", origin: "http://localhost:7411" },
      { host: "127.0.0.1:7411", origin: "null" },
      { host: "127.0.0.1:7411", origin: "not a url" },
      { host: "127.0.0.1:7411", "sec-fetch-site": "cross-site" },
      { host: "127.0.0.1:7411", "sec-fetch-site": "same-site" },
      { host: "runs.example.com", origin: "https://evil.test" },
    ];
    for (const h of refused) expect(checkHostOrigin(req(h), policy)?.status, JSON.stringify(h)).toBe(403);
    expect(checkHostOrigin(req({}), policy)?.status).toBe(400);
    expect(checkHostOrigin(req({ host: "a b" }), policy)?.status).toBe(400);
    expect(checkHostOrigin(req({ host: "evil.test:7411" }), policy)?.message).toMatch(/--allowed-host/);
  });

  it("checks the options' values", () => {
    expect(parseAllowedHost("Runs.Example.com:443")).toBe("runs.example.com:443");
    expect(parseAllowedHost("[::1]")).toBe("[::1]");
    expect(parseAllowedOrigin("https://UI.example.com/")).toBe("https://ui.example.com");
    for (const bad of ["http://x", "a/b", "x:99999", ""]) expect(() => parseAllowedHost(bad), bad).toThrow(TypeError);
    for (const bad of ["ui.example.com", "https://ui.example.com/app", "file:///x", "null", "https://u:p@x"]) expect(() => parseAllowedOrigin(bad), bad).toThrow(TypeError);
  });

  it("counts IPv6 clients by their /64", () => {
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:2::ffff")).toBe(clientKey("2001:db8:1:2:aaaa::1"));
    expect(clientKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(clientKey("::1")).toBe("::1");
    expect(clientKey("fe80::1")).toBe("fe80:0:0:0::/64");
  });
});

describe("serveHttp behind the guards", () => {
  it("refuses a foreign Host (DNS rebinding) or Origin before the handler runs, on every route and method", async () => {
    let reached = 0;
    const server = await serveHttp(() => (reached++, new Response("ok")), { hostname: "127.0.0.1", port: 0, allowedHosts: ["svc.internal"] });
    try {
      const own = `127.0.0.1:${server.port}`;
      expect((await raw(`${server.url}/runs`, { host: own })).status).toBe(200);
      expect((await raw(`${server.url}/runs`, { host: `localhost:${server.port}` })).status).toBe(200);
      expect((await raw(`${server.url}/runs`, { host: "svc.internal" })).status).toBe(200);
      expect(reached).toBe(3);
      for (const [headers, method] of [
        [{ host: `rebound.test:${server.port}` }, "GET"],
        [{ host: own, origin: "http://evil.test" }, "POST"],
        [{ host: own, origin: "null" }, "POST"],
        [{ host: own, "sec-fetch-site": "cross-site" }, "GET"],
      ] as const) {
        const r = await raw(`${server.url}/runs`, headers, { method, body: method === "POST" ? "pack=x" : undefined });
        expect(r.status, JSON.stringify(headers)).toBe(403);
        expect(JSON.parse(r.body)).toMatchObject({ error: { code: "POLICY_PERMISSION_DENIED" } });
      }
      expect(reached).toBe(3);
    } finally {
      await server.close();
    }
  });

  it("on every interface, answers this machine's addresses and refuses other names", async () => {
    const server = await serveHttp(() => new Response("ok"), { hostname: "0.0.0.0", port: 0 });
    try {
      expect((await raw(`http://127.0.0.1:${server.port}/`, { host: `127.0.0.1:${server.port}` })).status).toBe(200);
      expect((await raw(`http://127.0.0.1:${server.port}/`, { host: `rebound.test:${server.port}` })).status).toBe(403);
    } finally {
      await server.close();
    }
  });

  it("refuses malformed allowed hosts and origins before binding", async () => {
    await expect(serveHttp(() => new Response("ok"), { hostname: "127.0.0.1", port: 0, allowedOrigins: ["evil.test"] })).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT" });
  });

  it("gives each client its own share of requests in progress; a held stream counts until it ends", async () => {
    const held: ReadableStreamDefaultController<Uint8Array>[] = [];
    const seen: ClientInfo[] = [];
    const server = await serveHttp((_request, client) => {
      seen.push(client);
      return new Response(new ReadableStream<Uint8Array>({ start: (c) => void (c.enqueue(new TextEncoder().encode("open\n")), held.push(c)) }));
    }, { hostname: "127.0.0.1", port: 0, maxRequestsPerClient: 2 });
    const open = (localAddress: string) =>
      new Promise<{ status: number; close(): void }>((resolve, reject) => {
        const r = httpRequest(`${server.url}/events`, { headers: { host: `127.0.0.1:${server.port}` }, localAddress, agent: false }, (res) => {
          res.once("data", () => resolve({ status: res.statusCode ?? 0, close: () => r.destroy() }));
          res.once("end", () => resolve({ status: res.statusCode ?? 0, close: () => r.destroy() }));
        });
        r.on("error", reject);
        r.end();
      });
    try {
      const a1 = await open("127.0.0.1");
      const a2 = await open("127.0.0.1");
      expect([a1.status, a2.status]).toEqual([200, 200]);
      const a3 = await open("127.0.0.1");
      expect(a3.status).toBe(429); // this client's share is taken…
      const b = await open("127.0.0.2");
      expect(b.status).toBe(200); // …and no other client's
      expect(seen.map((c) => c.key)).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.2"]);
      a1.close();
      let again = 0;
      for (let i = 0; i < 100 && again !== 200; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const r = await open("127.0.0.1");
        again = r.status;
        if (again === 200) r.close();
      }
      expect(again).toBe(200); // a share comes back when its stream ends
      for (const c of [a2, a3, b]) c.close();
    } finally {
      for (const c of held) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      await server.close();
    }
  });
});
