/**
 * Test helpers for secrets: a local API that requires a bearer token and echoes it back every way it can (headers,
 * body, a redirect's `Location`), and a check that not one byte of a value (nor its common encodings) is in some
 * bytes. Used by tests/secrets.test.ts and scripts/gen-capsules.ts (the committed capsule with a secret).
 * @module
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the server saw. */
export type Seen = { host: string; path: string; headers: IncomingHttpHeaders; body: string };

/** The running server. */
export type EchoServer = { port: number; seen: Seen[]; close(): Promise<void> };

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");

/**
 * Start the echo API on 127.0.0.1: `GET /echo` needs `Authorization: Bearer <one of tokens>` (401 otherwise) and
 * answers with the token in `x-echo`, `x-basic` (base64 of `user:<token>`), `set-cookie`, and a JSON body holding it
 * raw, base64 and percent-encoded, plus the query's `t`; `GET /bounce` redirects to `/echo?t=<token>` (the raw token in
 * `Location`); `GET /away` redirects to `localhost` (another host); `POST /echo` echoes the body too.
 * @param tokens the accepted tokens
 * @returns the server
 */
export async function startEchoServer(tokens: readonly string[]): Promise<EchoServer> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    res.sendDate = false; // the same answer every time: two runs with two values then have one run hash
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString("utf8")));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      seen.push({ host: req.headers.host ?? "", path: req.url ?? "", headers: req.headers, body });
      const auth = req.headers.authorization ?? "";
      const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
      const port = (server.address() as AddressInfo).port;
      if (url.pathname === "/away") {
        res.writeHead(302, { location: `http://localhost:${port}/echo` });
        res.end();
        return;
      }
      if (!tokens.includes(token)) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "a bearer token is required" }));
        return;
      }
      if (url.pathname === "/bounce") {
        res.writeHead(302, { location: `/echo?t=${encodeURIComponent(token)}&raw=${token}` });
        res.end();
        return;
      }
      const answer = JSON.stringify({ token, base64: b64(token), basic: b64(`user:${token}`), percent: encodeURIComponent(token), t: url.searchParams.get("t"), body });
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(answer)),
        "x-echo": token,
        "x-basic": `Basic ${b64(`user:${token}`)}`,
        "set-cookie": `session=${token}; Path=/`,
      });
      res.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * The forms of a value a leak may take: raw, JSON-escaped, percent-encoded, base64 (the characters of each alignment
 * that depend on the value alone) and `user:value` in base64.
 * @param value the secret
 * @returns strings, none of which may appear
 */
export function leakForms(value: string): string[] {
  const forms = new Set<string>([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), b64(`user:${value}`).slice(0, -2)]);
  const bytes = Buffer.from(value, "utf8");
  for (let k = 0; k < 3; k++) {
    const text = Buffer.concat([Buffer.alloc(k), bytes]).toString("base64");
    forms.add(text.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6)));
  }
  return [...forms];
}

/**
 * Where a value leaks in some bytes: the forms of {@link leakForms} found (empty: no leak).
 * @param bytes what to search (text or binary)
 * @param value the secret
 * @returns the forms found
 */
export function leaksIn(bytes: Uint8Array | string, value: string): string[] {
  const text = typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("latin1");
  const utf8 = typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("utf8");
  return leakForms(value).filter((f) => text.includes(Buffer.from(f, "utf8").toString("latin1")) || utf8.includes(f));
}
