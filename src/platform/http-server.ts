/**
 * Serving a web-standard `fetch` handler (`(Request) => Promise<Response>`, e.g. a Hono app's `app.fetch`) over
 * HTTP or HTTPS on Node (`@hono/node-server`) and on Deno (`Deno.serve`). The HTTP faces (federation node, run
 * service, MCP over Streamable HTTP) are written once against `Request`/`Response`; only this file knows the runtime.
 * @module
 */
import type { AddressInfo } from "node:net";
import { ReachError } from "../protocol/errors.ts";

/** A running server. */
export type HttpServer = {
  /** The base URL clients use, e.g. `https://127.0.0.1:40123` (the real port when 0 was asked for). */
  readonly url: string;
  readonly hostname: string;
  readonly port: number;
  /** Stop accepting connections and close the open ones. */
  close(): Promise<void>;
};

/** How to serve. */
export type ServeOptions = {
  /** The address to listen on (e.g. `127.0.0.1`, `::1`, `0.0.0.0`). */
  hostname: string;
  /** The port; 0 picks a free one. */
  port: number;
  /** PEM certificate chain and private key for HTTPS; omitted: plain HTTP. */
  tls?: { cert: string; key: string };
};

/** A web-standard request handler. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

type DenoServe = (
  options: { hostname: string; port: number; cert?: string; key?: string; onListen?: (addr: { hostname: string; port: number }) => void },
  handler: (request: Request) => Response | Promise<Response>,
) => { finished: Promise<void>; shutdown(): Promise<void>; addr: { hostname: string; port: number } };

function denoServe(): DenoServe | undefined {
  const deno = (globalThis as { Deno?: { serve?: DenoServe } }).Deno;
  return typeof deno?.serve === "function" ? deno.serve.bind(deno) : undefined;
}

function urlOf(tls: boolean, hostname: string, port: number): string {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return `${tls ? "https" : "http"}://${host}:${port}`;
}

/**
 * Serve `handler` until `close()` is called.
 * @param handler the web-standard handler (a Hono app's `fetch`)
 * @param options address, port and optional TLS material
 * @returns the running server with its URL
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the address cannot be bound (in use, not local, no permission)
 * @example
 * const server = await serveHttp((req) => new Response("ok"), { hostname: "127.0.0.1", port: 0 });
 * await server.close();
 */
export async function serveHttp(handler: FetchHandler, options: ServeOptions): Promise<HttpServer> {
  const serve = denoServe();
  try {
    if (serve !== undefined) {
      let listening: (addr: { hostname: string; port: number }) => void = () => {};
      const ready = new Promise<{ hostname: string; port: number }>((resolve) => (listening = resolve));
      const server = serve(
        { hostname: options.hostname, port: options.port, ...(options.tls ?? {}), onListen: (addr) => listening(addr) },
        (request) => handler(request),
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
    return await nodeServe(handler, options);
  } catch (err) {
    if (err instanceof ReachError) throw err;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `cannot listen on ${options.hostname}:${options.port} (${(err as Error).message}); choose another address or port`, {
      cause: err,
    });
  }
}

async function nodeServe(handler: FetchHandler, options: ServeOptions): Promise<HttpServer> {
  const { serve } = await import("@hono/node-server");
  const https = options.tls === undefined ? undefined : await import("node:https");
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve(
      {
        fetch: (request: Request) => handler(request),
        hostname: options.hostname,
        port: options.port,
        ...(https === undefined ? {} : { createServer: https.createServer, serverOptions: { cert: options.tls!.cert, key: options.tls!.key } }),
      },
      () => resolve(s),
    );
    s.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: urlOf(options.tls !== undefined, options.hostname, port),
    hostname: options.hostname,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as unknown as { closeAllConnections?: () => void; close(cb: () => void): void };
        s.close(() => resolve());
        s.closeAllConnections?.();
      }),
  };
}
