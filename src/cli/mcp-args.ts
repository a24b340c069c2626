/**
 * The arguments of `reach-wasm mcp` (parsing only; `mcp.ts` runs the server).
 * @module
 */
import { ReachError } from "../protocol/errors.ts";
import { allowedOf, HTTP_GUARD_USAGE } from "./_http-args.ts";

/** The usage line of `reach-wasm mcp`. */
export const MCP_USAGE = `reach-wasm mcp <pack-dir|pack.tar.gz> [--out DIR] [--key FILE] [--trust FILE] [--unrestricted] [--http HOST:PORT] [--token TOKEN] ${HTTP_GUARD_USAGE} [--max-sessions N] [--max-sessions-per-client N] [--idle-timeout SECONDS] [--step-timeout MS] [--quiet]`;

/** Shortest bearer token accepted. */
export const MIN_TOKEN_LENGTH = 16;

/** Parsed `mcp` arguments. */
export type McpArgs = {
  pack: string;
  out: string;
  key: string | undefined;
  trust: string | undefined;
  unrestricted: boolean;
  /** Streamable HTTP on this address; null: stdio. */
  http: { hostname: string; port: number } | null;
  /** The bearer token (`--token`, else `$REACH_WASM_MCP_TOKEN`); null: none. */
  token: string | null;
  /** Each call's time limit (ms, counted in fuel; recorded in each run's request); undefined: 30 s. */
  stepTimeoutMs: number | undefined;
  /** `Host` names allowed besides the listen address (`--allowed-host`). */
  allowedHosts: string[];
  /** Web page origins allowed to call the server (`--allowed-origin`). */
  allowedOrigins: string[];
  /** `--max-sessions`, `--max-sessions-per-client`, `--idle-timeout` (ms); undefined: the defaults. */
  maxSessions: number | undefined;
  maxSessionsPerClient: number | undefined;
  idleTimeoutMs: number | undefined;
  quiet: boolean;
};

const HTTP_ONLY = ["--allowed-host", "--allowed-origin", "--max-sessions", "--max-sessions-per-client", "--idle-timeout"];

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `mcp: ${message}; usage: ${MCP_USAGE}`);
}

/**
 * Whether an address is this machine's loopback interface.
 * @param hostname a host name or IP address (IPv6 without brackets)
 * @returns true for localhost, 127.0.0.0/8 and ::1
 * @example isLoopback("127.0.0.1") // true
 */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function listenOf(text: string): { hostname: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  if (m === null || Number(m[2]) > 65535) throw bad(`--http expects HOST:PORT such as 127.0.0.1:7412 or [::1]:7412 (port 0 picks a free one), got ${JSON.stringify(text)}`);
  return { hostname: m[1]!.replace(/^\[(.*)\]$/, "$1"), port: Number(m[2]) };
}

function count(flag: string, text: string, min: number, max: number): number {
  if (!/^[1-9][0-9]{0,5}$/.test(text) || Number(text) < min || Number(text) > max) throw bad(`${flag} expects an integer ${min}..${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

function tokenOf(token: string, from: string): string {
  if (token.length < MIN_TOKEN_LENGTH || token.length > 4096 || !/^[\x21-\x7e]+$/.test(token)) {
    throw bad(`${from} must be ${MIN_TOKEN_LENGTH} to 4096 printable ASCII characters without spaces (e.g. openssl rand -hex 32)`);
  }
  return token;
}

function stepTimeoutOf(text: string): number {
  const n = Number(text);
  if (!/^\d{1,7}$/.test(text) || n < 1 || n > 3_600_000) throw bad(`--step-timeout expects milliseconds from 1 to 3600000 (each call's time limit, counted in fuel), got ${JSON.stringify(text)}`);
  return n;
}

/**
 * Parse the arguments after `mcp`.
 * @param argv the arguments
 * @param envToken `$REACH_WASM_MCP_TOKEN` (used when `--token` is absent)
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad option, a token on stdio, or a non-loopback `--http` without a token
 * @example parseMcpArgs(["packs/hello", "--http", "127.0.0.1:0"], undefined).http // { hostname: "127.0.0.1", port: 0 }
 */
export function parseMcpArgs(argv: readonly string[], envToken: string | undefined): McpArgs {
  const out: McpArgs = {
    pack: "", out: ".reach", key: undefined, trust: undefined, unrestricted: false, http: null, token: null, stepTimeoutMs: undefined,
    allowedHosts: [], allowedOrigins: [], maxSessions: undefined, maxSessionsPerClient: undefined, idleTimeoutMs: undefined, quiet: false,
  };
  let token: string | undefined;
  const hosts: string[] = [];
  const origins: string[] = [];
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      return v;
    };
    if (a === "--out") out.out = value();
    else if (a === "--key") out.key = value();
    else if (a === "--trust") out.trust = value();
    else if (a === "--unrestricted") out.unrestricted = true;
    else if (a === "--http") out.http = listenOf(value());
    else if (a === "--token") token = tokenOf(value(), "--token");
    else if (a === "--step-timeout") out.stepTimeoutMs = stepTimeoutOf(value());
    else if (a === "--allowed-host") hosts.push(value());
    else if (a === "--allowed-origin") origins.push(value());
    else if (a === "--max-sessions") out.maxSessions = count(a, value(), 1, 1024);
    else if (a === "--max-sessions-per-client") out.maxSessionsPerClient = count(a, value(), 1, 1024);
    else if (a === "--idle-timeout") out.idleTimeoutMs = count(a, value(), 1, 86_400) * 1000;
    else if (a === "--quiet" || a === "-q") out.quiet = true;
    else if (a.startsWith("-")) throw bad(`unknown option ${a}`);
    else if (out.pack === "") out.pack = a;
    else throw bad(`unexpected argument ${JSON.stringify(a)}`);
    if (a.startsWith("--")) given.add(a);
  }
  if (out.pack === "") throw bad("the pack directory or archive is missing");
  if (out.http === null) {
    if (token !== undefined) throw bad("--token applies to --http only (stdio is private to the process that started the server)");
    const httpOnly = HTTP_ONLY.find((o) => given.has(o));
    if (httpOnly !== undefined) throw bad(`${httpOnly} applies to --http only`);
    return out;
  }
  ({ allowedHosts: out.allowedHosts, allowedOrigins: out.allowedOrigins } = allowedOf(hosts.length === 0 ? undefined : hosts.join(","), origins.length === 0 ? undefined : origins.join(","), MCP_USAGE));
  out.token = token ?? (envToken === undefined || envToken === "" ? null : tokenOf(envToken, "$REACH_WASM_MCP_TOKEN"));
  if (out.token === null && !isLoopback(out.http.hostname)) {
    throw bad(`--http ${out.http.hostname}:${out.http.port} is not a loopback address: anyone who can reach it could run the pack's tools; configure a bearer token (--token TOKEN or $REACH_WASM_MCP_TOKEN) or listen on 127.0.0.1`);
  }
  return out;
}
