/**
 * Serving a web-standard `fetch` handler (`(Request) => Promise<Response>`, e.g. a Hono app's `app.fetch`) over
 * HTTP or HTTPS on Node (`@hono/node-server`) and on Deno (`Deno.serve`). The HTTP faces (federation node, run
 * service, MCP over Streamable HTTP) are written once against `Request`/`Response`; only this file knows the runtime.
 *
 * Every face is served behind the same two guards, applied here before the face sees a request:
 * - `Host` / `Origin` / `Sec-Fetch-Site` (`http-guard.ts`): no DNS-rebound page and no page on another origin
 *   reaches a face, whatever its token setting;
 * - per-client limits: at most `maxRequestsPerClient` requests of one client (its address; an IPv6 client by its /64)
 *   in progress at once — a response that streams (events, a long poll) counts until it ends — so that no client
 *   holds what others need; beyond it, 429 with `Retry-After`. No limit is shared between clients.
 * The face is handed the client (`ClientInfo`) with each request, for its own per-client limits.
 * @module
 */
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { hostname as osHostname, networkInterfaces } from "node:os";
import { ReachError } from "../protocol/mod.ts";
import { checkHostOrigin, hostPolicy } from "./http-guard.ts";
import type { HostPolicy } from "./http-guard.ts";

/** A running server. */
export type HttpServer = {
  /** The base URL clients use, e.g. `https://127.0.0.1:40123` (the real port when 0 was asked for). */
  readonly url: string;
  readonly hostname: string;
  readonly port: number;
  /** Stop accepting connections and close the open ones. */
  close(): Promise<void>;
};

/** Requests of one client in progress at once, by default. */
export const DEFAULT_MAX_REQUESTS_PER_CLIENT = 1024;

/** How to serve. */
export type ServeOptions = {
  /** The address to listen on (e.g. `127.0.0.1`, `::1`, `0.0.0.0`). */
  hostname: string;
  /** The port; 0 picks a free one. */
  port: number;
  /** PEM certificate chain and private key for HTTPS; omitted: plain HTTP. */
  tls?: { cert: string; key: string };
  /** `Host` values allowed besides the bound address (`NAME` any port, `NAME:PORT`): DNS names, reverse proxies. */
  allowedHosts?: readonly string[];
  /** Origins of web pages allowed to call the server (`SCHEME://HOST[:PORT]`). */
  allowedOrigins?: readonly string[];
  /** Requests of one client in progress at once (default {@link DEFAULT_MAX_REQUESTS_PER_CLIENT}). */
  maxRequestsPerClient?: number;
  /** How a refusal of the guards is answered (default: a ReachError document). */
  refusal?: (status: number, error: ReachError) => Response;
};

/** Who sent a request. */
export type ClientInfo = {
  /** The peer's address as the connection gives it (IPv4-mapped IPv6 as IPv4). */
  readonly address: string;
  /** What per-client limits count by: the address, or an IPv6 address's /64 prefix. */
  readonly key: string;
};

/** A web-standard request handler; `client` says who sent the request. */
export type FetchHandler = (request: Request, client: ClientInfo) => Response | Promise<Response>;

/**
 * The key per-client limits count by: an IPv4 address as it is, an IPv6 address by its /64 prefix (one host
 * commonly holds a whole /64), loopback as `::1`.
 * @param address the peer's address
 * @returns the client's key
 * @example clientKey("2001:db8::1") // "2001:db8:0:0::/64"
 */
export function clientKey(address: string): string {
  const a = address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1").toLowerCase();
  if (!a.includes(":") || a === "::1") return a;
  const [head, tail] = a.split("::") as [string, string | undefined];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

function clientOf(address: string | undefined): ClientInfo {
  const a = (address ?? "unknown").replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
  return { address: a, key: clientKey(a) };
}

function defaultRefusal(status: number, error: ReachError): Response {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (error.retryAfter !== null) headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfter / 1000)));
  return new Response(JSON.stringify(error.toJSON()), { status, headers });
}

/** This machine's addresses and name (a server on every interface is addressed by any of them). */
function localNames(): string[] {
  const names: string[] = [];
  try {
    names.push(osHostname());
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) names.push(i.address.replace(/%.*$/, ""));
  } catch {
    // a runtime that may not ask (Deno without --allow-sys): the loopback names and --allowed-host only
  }
  return names;
}

/**
 * The handler behind the guards: `Host`/`Origin`, then the client's share. `done` is called with the function that
 * gives the client's slot back when the response has ended (streaming included).
 */
function guarded(handler: FetchHandler, options: ServeOptions, policy: () => HostPolicy | null) {
  const inFlight = new Map<string, number>();
  const max = options.maxRequestsPerClient ?? DEFAULT_MAX_REQUESTS_PER_CLIENT;
  const refusal = options.refusal ?? defaultRefusal;
  return (request: Request, address: string | undefined, whenDone: (release: () => void) => void): Response | Promise<Response> => {
    const p = policy();
    if (p === null) return refusal(503, new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the server is starting; retry", { retryAfter: 1000 }));
    const refused = checkHostOrigin(request, p);
    if (refused !== null) return refusal(refused.status, new ReachError(refused.status === 400 ? "PROTO_INVALID_MESSAGE" : "POLICY_PERMISSION_DENIED", refused.message));
    const client = clientOf(address);
    const n = inFlight.get(client.key) ?? 0;
    if (n >= max) {
      return refusal(429, new ReachError("POLICY_RATE_LIMIT_EXCEEDED", `this client (${client.key}) already has ${max} requests in progress; wait for one to end (close an event stream or a long poll) and retry`, { retryAfter: 1000 }));
    }
    inFlight.set(client.key, n + 1);
    let released = false;
    whenDone(() => {
      if (released) return;
      released = true;
      const left = (inFlight.get(client.key) ?? 1) - 1;
      if (left <= 0) inFlight.delete(client.key);
      else inFlight.set(client.key, left);
    });
    return handler(request, client);
  };
}

type DenoServeInfo = { remoteAddr?: { hostname?: string }; completed?: Promise<void> };
type DenoServe = (
  options: { hostname: string; port: number; cert?: string; key?: string; onListen?: (addr: { hostname: string; port: number }) => void },
  handler: (request: Request, info: DenoServeInfo) => Response | Promise<Response>,
) => { finished: Promise<void>; shutdown(): Promise<void>; addr: { hostname: string; port: number } };

function denoServe(): DenoServe | undefined {
  const deno = (globalThis as { Deno?: { serve?: DenoServe } }).Deno;
  return typeof deno?.serve === "function" ? deno.serve.bind(deno) : undefined;
}

function urlOf(tls: boolean, hostname: string, port: number): string {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return `${tls ? "https" : "http"}://${host}:${port}`;
}

/** The guards' policy once the port is known (requests cannot arrive before). */
function policyOnce(options: ServeOptions): { get: () => HostPolicy | null; bind: (port: number) => void } {
  let policy: HostPolicy | null = null;
  const wildcard = /^(0\.0\.0\.0|::|\[::\])$/.test(options.hostname);
  return {
    get: () => policy,
    bind: (port) => {
      policy = hostPolicy({
        hostname: options.hostname, port, tls: options.tls !== undefined, ...(wildcard ? { localNames: localNames() } : {}),
        ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
        ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
      });
    },
  };
}

/**
 * Serve `handler` until `close()` is called, behind the `Host`/`Origin` guard and the per-client limit.
 * @param handler the web-standard handler (a Hono app's `fetch`); it is given the client with each request
 * @param options address, port, optional TLS material, allowed hosts and origins, per-client limit
 * @returns the running server with its URL
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the address cannot be bound (in use, not local, no permission) or
 *   an allowed host or origin is malformed
 * @example
 * const server = await serveHttp((req) => new Response("ok"), { hostname: "127.0.0.1", port: 0 });
 * await server.close();
 */
export async function serveHttp(handler: FetchHandler, options: ServeOptions): Promise<HttpServer> {
  const policy = policyOnce(options);
  try {
    // malformed entries are refused before binding
    hostPolicy({ hostname: options.hostname, port: options.port, tls: false, allowedHosts: options.allowedHosts ?? [], allowedOrigins: options.allowedOrigins ?? [] });
  } catch (err) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", (err as Error).message, { cause: err });
  }
  const guard = guarded(handler, options, policy.get);
  const serve = denoServe();
  try {
    if (serve !== undefined) {
      let listening: (addr: { hostname: string; port: number }) => void = () => {};
      const ready = new Promise<{ hostname: string; port: number }>((resolve) => (listening = resolve));
      const server = serve(
        { hostname: options.hostname, port: options.port, ...(options.tls ?? {}), onListen: (addr) => (policy.bind(addr.port), listening(addr)) },
        (request, info) => guard(request, info.remoteAddr?.hostname, (release) => void (info.completed === undefined ? queueMicrotask(release) : info.completed.then(release, release))),
      );
      const addr = await ready;
      return {
        url: urlOf(options.tls !== undefined, options.hostname, addr.port),
        hostname: options.hostname,
        port: addr.port,
        close: async () => {
          await server.shutdown();
        },
      };
    }
    return await nodeServe(guard, options, policy.bind);
  } catch (err) {
    if (err instanceof ReachError) throw err;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot listen on ${options.hostname}:${options.port} (${(err as Error).message}); choose another address or port`, {
      cause: err,
    });
  }
}

type Guard = ReturnType<typeof guarded>;

/**
 * The answer to a request that cannot become a `Request` at all (a `Host` that is no host name, a backslash in the
 * path): a ReachError document like every other refusal, not an empty 400.
 */
function unreadable(options: ServeOptions): (err: unknown) => Response {
  const refusal = options.refusal ?? defaultRefusal;
  return (err) => {
    if ((err as Error)?.name === "RequestError") {
      const why = (err as Error).message.replace(/\.$/, "");
      return refusal(400, new ReachError("PROTO_INVALID_MESSAGE", `the request cannot be read (${why}); send a Host header that names this server and a path without backslashes`));
    }
    return refusal(500, new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the server failed to answer (an internal error); retry later", { retryAfter: 1000 }));
  };
}

/**
 * What Node's HTTP parser refuses before any handler runs (a malformed chunk, Content-Length with Transfer-Encoding,
 * headers too large, a request too slow): the refusal as a document, written on the socket, which is then closed.
 */
async function answerUnparsable(err: Error & { code?: string }, socket: Duplex, options: ServeOptions): Promise<void> {
  // as Node's own handler: nothing is written on a socket gone, or one already carrying a response
  const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === "ECONNRESET" || !socket.writable || busy) return void socket.destroy();
  const refusal = options.refusal ?? defaultRefusal;
  const [status, reason, message] =
    err.code === "HPE_HEADER_OVERFLOW" ? [431, "Request Header Fields Too Large", "the request's headers are too large; send fewer or shorter headers"]
    : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? [408, "Request Timeout", "the request did not arrive in time; send it again"]
    : [400, "Bad Request", `the request is not valid HTTP/1.1 (${err.code ?? err.message}); send a well-formed request`];
  const res = refusal(status, new ReachError("PROTO_INVALID_MESSAGE", message));
  const body = new Uint8Array(await res.arrayBuffer());
  const head = `HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${res.headers.get("content-type") ?? "application/json"}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  socket.end(Buffer.concat([Buffer.from(head), body]));
}

async function nodeServe(guard: Guard, options: ServeOptions, bind: (port: number) => void): Promise<HttpServer> {
  const { getRequestListener } = await import("@hono/node-server");
  const https = options.tls === undefined ? undefined : await import("node:https");
  const plain = https === undefined ? await import("node:http") : undefined;
  const listener = getRequestListener(
    (request: Request, env: { incoming: { socket: { remoteAddress?: string | undefined } }; outgoing: { once(event: "close", listener: () => void): unknown } }) =>
      guard(request, env.incoming.socket.remoteAddress, (release) => void env.outgoing.once("close", release)),
    { hostname: options.hostname, errorHandler: unreadable(options) },
  );
  const server = https === undefined ? plain!.createServer(listener) : https.createServer({ cert: options.tls!.cert, key: options.tls!.key }, listener);
  server.on("clientError", (err: Error & { code?: string }, socket: Duplex) => void answerUnparsable(err, socket, options));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => (bind((server.address() as AddressInfo).port), resolve()));
  });
  // A connection that sends no request is closed by the server: its headers must arrive within 60 s, its body within
  // 5 min, and an idle keep-alive connection goes after 5 s (Node's defaults, set here so that they are ours).
  server.headersTimeout = 60_000;
  server.requestTimeout = 300_000;
  server.keepAliveTimeout = 5_000;
  const port = (server.address() as AddressInfo).port;
  return {
    url: urlOf(options.tls !== undefined, options.hostname, port),
    hostname: options.hostname,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
