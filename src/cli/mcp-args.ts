/**
 * The arguments of `reach-wasm mcp` (parsing only; `mcp.ts` runs the server).
 * @module
 */
import { allowedOf } from "./_http-args.ts";
import { parseCommand, usageError } from "./options.ts";
import { MCP, tokenOf } from "./specs-pack.ts";
import type { SecretSource } from "./secret-args.ts";

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
  /** Where each session run's trace goes (`--otlp-endpoint URL`, OTLP/HTTP), live; undefined: nowhere. */
  otlpEndpoint: string | undefined;
  /** Where the declared secrets' values come from (`--secret`). */
  secrets: SecretSource[];
};

const HTTP_ONLY = ["allowed-host", "allowed-origin", "max-sessions", "max-sessions-per-client", "idle-timeout"] as const;

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

/**
 * Parse the arguments after `mcp`.
 * @param argv the arguments
 * @param envToken `$REACH_WASM_MCP_TOKEN` (used when `--token` is absent)
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad option, a token on stdio, or a non-loopback `--http` without a token
 * @example parseMcpArgs(["packs/hello", "--http", "127.0.0.1:0"], undefined).http // { hostname: "127.0.0.1", port: 0 }
 */
export function parseMcpArgs(argv: readonly string[], envToken: string | undefined): McpArgs {
  const { values: v, positionals } = parseCommand(MCP, argv);
  const out: McpArgs = {
    pack: positionals[0]!, out: v.out ?? ".reach", key: v.key, trust: v.trust, unrestricted: v.unrestricted, http: v.http ?? null, token: null,
    stepTimeoutMs: v["step-timeout"], allowedHosts: [], allowedOrigins: [], maxSessions: v["max-sessions"], maxSessionsPerClient: v["max-sessions-per-client"],
    idleTimeoutMs: v["idle-timeout"] === undefined ? undefined : v["idle-timeout"] * 1000, quiet: v.quiet, otlpEndpoint: v["otlp-endpoint"], secrets: v.secret,
  };
  if (out.http === null) {
    if (v.token !== undefined) throw usageError(MCP, "--token applies to --http only (stdio is private to the process that started the server)");
    const httpOnly = HTTP_ONLY.find((o) => (Array.isArray(v[o]) ? v[o].length > 0 : v[o] !== undefined));
    if (httpOnly !== undefined) throw usageError(MCP, `--${httpOnly} applies to --http only`);
    return out;
  }
  ({ allowedHosts: out.allowedHosts, allowedOrigins: out.allowedOrigins } = allowedOf(MCP, v["allowed-host"], v["allowed-origin"]));
  out.token = v.token ?? (envToken === undefined || envToken === "" ? null : envTokenOf(envToken));
  if (out.token === null && !isLoopback(out.http.hostname)) {
    throw usageError(MCP, `--http ${out.http.hostname}:${out.http.port} is not a loopback address: anyone who can reach it could run the pack's tools; configure a bearer token (--token TOKEN or $REACH_WASM_MCP_TOKEN) or listen on 127.0.0.1`);
  }
  return out;
}

function envTokenOf(token: string): string {
  try {
    return tokenOf(token);
  } catch (err) {
    throw usageError(MCP, `$REACH_WASM_MCP_TOKEN ${(err as Error).message}`);
  }
}
