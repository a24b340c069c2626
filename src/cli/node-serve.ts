/**
 * `reach-wasm node serve --dir DIR [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE] [--insecure-loopback]
 * [--ca FILE] [--pull-interval SECONDS] [--json]`: serve a federation node (seed 003 §6) until SIGINT or SIGTERM.
 * HTTPS with the given certificate; plain HTTP only on a loopback address and only with `--insecure-loopback`.
 * Revocations are pulled from every registered peer every `--pull-interval` seconds (default 30, at most 30).
 * @module
 */
import { resolve } from "node:path";
import { createNodeApp } from "../federation/mod.ts";
import type { ClientContext } from "../federation/mod.ts";
import { isLoopbackHost } from "../federation/mod.ts";
import type { NodeSelf } from "../federation/mod.ts";
import { NonceBook } from "../federation/mod.ts";
import { DEFAULT_PULL_INTERVAL_MS, MAX_PULL_INTERVAL_MS } from "../federation/mod.ts";
import type { NodeState } from "../federation/mod.ts";
import { pullRevocations, startRevocationSync } from "../federation/mod.ts";
import { readHostFile } from "../platform/files.ts";
import { serveHttp } from "../platform/http-server.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { abortOnSignals } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { nodeState, peerFetch, wallClock } from "./federation-host.ts";
import { allowedOf } from "./_http-args.ts";
import { parseCommand, usageError } from "./options.ts";
import { NODE_SERVE } from "./specs-federation.ts";

/** Requests of one peer address in progress at once (each run request executes a run). */
export const NODE_MAX_REQUESTS_PER_CLIENT = 64;

/** How to serve a node. */
export type StartNodeOptions = {
  dir: string;
  /** `HOST:PORT` (default: the host and port of the node's endpoint). */
  listen?: string;
  tls?: { cert: string; key: string };
  insecureLoopback?: boolean;
  /** PEM file of extra CA certificates trusted for peers. */
  ca?: string;
  pullIntervalMs?: number;
  /** `Host` names allowed besides the listen address and the node's endpoint (`--allowed-host`). */
  allowedHosts?: readonly string[];
  /** Web page origins allowed to call the node (`--allowed-origin`; peers send none). */
  allowedOrigins?: readonly string[];
  log?: (line: string) => void;
};

/** A running node. */
export type RunningNode = { url: string; self: NodeSelf; state: NodeState; close(): Promise<void> };

function listenAddress(text: string | undefined, endpoint: string): { hostname: string; port: number } {
  if (text === undefined) {
    const u = new URL(endpoint);
    return { hostname: u.hostname.replace(/^\[|\]$/g, ""), port: u.port === "" ? (u.protocol === "https:" ? 443 : 80) : Number(u.port) };
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(text);
  if (m === null || Number(m[2]) > 65535) throw new ReachError("PROTO_INVALID_ARGUMENT", `--listen ${JSON.stringify(text)}: expected HOST:PORT such as 127.0.0.1:8443 or [::1]:8443`);
  return { hostname: m[1]!.replace(/^\[|\]$/g, ""), port: Number(m[2]) };
}

/**
 * Start serving a node.
 * @param opts directory, address, TLS, peer CA and pull interval
 * @returns the running node
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for plain HTTP off loopback or without `--insecure-loopback`, a bad
 *   address, a pull interval over 30 s, or a directory that is not a node
 * @example const node = await startNode({ dir: "node-a", tls: { cert, key } }); await node.close();
 */
export async function startNode(opts: StartNodeOptions): Promise<RunningNode> {
  const state = nodeState(opts.dir);
  const self = await state.self();
  const addr = listenAddress(opts.listen, self.identity.endpoint);
  if (opts.tls === undefined) {
    if (opts.insecureLoopback !== true) throw new ReachError("PROTO_INVALID_ARGUMENT", "node serve needs --tls-cert FILE and --tls-key FILE (federation runs over HTTPS); for a test on this machine only, add --insecure-loopback and listen on a loopback address");
    if (!isLoopbackHost(addr.hostname)) throw new ReachError("PROTO_INVALID_ARGUMENT", `--insecure-loopback serves plain HTTP only on a loopback address, not on ${addr.hostname}; use 127.0.0.1 or give --tls-cert and --tls-key`);
  } else if (opts.insecureLoopback === true) throw new ReachError("PROTO_INVALID_ARGUMENT", "give either --tls-cert/--tls-key or --insecure-loopback, not both");
  const interval = opts.pullIntervalMs ?? DEFAULT_PULL_INTERVAL_MS;
  if (!Number.isSafeInteger(interval) || interval < 1 || interval > MAX_PULL_INTERVAL_MS) throw new ReachError("PROTO_INVALID_ARGUMENT", `--pull-interval must be 0.001..${MAX_PULL_INTERVAL_MS / 1000} seconds so that revocations are honoured within 60 s`);
  const nonces = new NonceBook(wallClock, await state.nonces());
  const app = createNodeApp({ state, self, now: wallClock, nonces, host: { env: defaultEnvironment(), fetch: (url, init) => fetch(url, init) }, ...(opts.log === undefined ? {} : { log: opts.log }) });
  // peers address the node by its endpoint's host: allowed besides the listen address
  const endpoint = new URL(self.identity.endpoint);
  const allowedHosts = [`${endpoint.hostname}:${endpoint.port === "" ? (endpoint.protocol === "https:" ? 443 : 80) : endpoint.port}`, ...(opts.allowedHosts ?? [])];
  const server = await serveHttp((request) => app.fetch(request), {
    ...addr, ...(opts.tls === undefined ? {} : { tls: opts.tls }), allowedHosts, allowedOrigins: opts.allowedOrigins ?? [], maxRequestsPerClient: NODE_MAX_REQUESTS_PER_CLIENT,
  });
  const ctx: ClientContext = { self, now: wallClock, fetch: await peerFetch(opts.ca) };
  const sync = startRevocationSync(interval, async () => {
    for (const o of await pullRevocations(ctx, state)) {
      if (o.count > 0) opts.log?.(`pulled ${o.count} revocation${o.count === 1 ? "" : "s"} from ${o.nodeId}`);
    }
  });
  return {
    url: server.url,
    self,
    state,
    close: async () => {
      await sync.stop();
      await server.close();
    },
  };
}

/**
 * The `node serve` command: serves until SIGINT or SIGTERM.
 * @param argv arguments after `node serve`
 * @param io output streams
 * @returns 0 after a clean shutdown
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation
 * @example await runNodeServe(["--dir", "node-a", "--tls-cert", "cert.pem", "--tls-key", "key.pem"], io)
 */
export async function runNodeServe(argv: readonly string[], io: CliIO): Promise<number> {
  const { values: v } = parseCommand(NODE_SERVE, argv);
  const cert = v["tls-cert"];
  const key = v["tls-key"];
  if ((cert === undefined) !== (key === undefined)) throw usageError(NODE_SERVE, "--tls-cert and --tls-key go together");
  const dec = new TextDecoder();
  const tls = cert === undefined || key === undefined ? undefined : { cert: dec.decode(await readHostFile(cert, 1024 * 1024)), key: dec.decode(await readHostFile(key, 1024 * 1024)) };
  const interval = v["pull-interval"];
  const allowed = allowedOf(NODE_SERVE, v["allowed-host"], v["allowed-origin"]);
  const log = (line: string): void => io.stderr(`reach-wasm: ${line}\n`);
  const signals = abortOnSignals();
  try {
    const node = await startNode({ dir: v.dir, ...(v.listen === undefined ? {} : { listen: v.listen }), ...(tls === undefined ? {} : { tls }), insecureLoopback: v["insecure-loopback"], ...(v.ca === undefined ? {} : { ca: v.ca }), ...(interval === undefined ? {} : { pullIntervalMs: interval }), ...allowed, log });
    log(`node ${node.self.identity.nodeId} listening on ${node.url} (endpoint ${node.self.identity.endpoint}, dir ${resolve(v.dir)}); Ctrl-C stops it`);
    if (v.json) io.stdout(JSON.stringify({ nodeId: node.self.identity.nodeId, url: node.url, endpoint: node.self.identity.endpoint }) + "\n");
    await new Promise<void>((done) => signals.signal.addEventListener("abort", () => done(), { once: true }));
    log("stopping");
    await node.close();
    return 0;
  } finally {
    signals.dispose();
  }
}
