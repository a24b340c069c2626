/**
 * The declarations of the pack and key commands (`pack`, `trust`, `mcp`, `approve`, `keygen`): their arguments,
 * parsed by `options.ts`, and their help, written by `help.ts`.
 * @module
 */
import { ArgError, defineArgs, integer } from "./options.ts";
import { OTLP_ENDPOINT } from "./specs-export.ts";
import { SECRET_OPTION } from "./secret-args.ts";

const json = (shape: string) => ({ type: "boolean", help: `print one JSON object on stdout: ${shape}` }) as const;
const trustStore = { type: "string", value: "FILE", help: "the trust store (default $REACH_WASM_TRUST_STORE or ~/.config/reach-wasm/trust.json)" } as const;

/** `reach-wasm pack`: its subcommands. */
export const PACK_INIT = defineArgs({
  name: "pack init",
  summary: "a new runnable pack: one tool in NAME, its source, build.sh (offline; see doctor) and tests/",
  positionals: ["<dir>"],
  options: {
    template: { type: "string", value: "NAME", help: "js (default), python, c, rust, as (AssemblyScript), wat (WebAssembly text)\nor component (C, world reach:tool/tool)" },
    json: json("{dir, id, template, files}"),
  },
});
export const PACK_VALIDATE = defineArgs({
  name: "pack validate",
  summary: "load and check it exactly as run does, its static plan included (exit 0 valid, 2 invalid)",
  positionals: ["<dir|archive>"],
  options: { trust: { ...trustStore, help: `${trustStore.help}: says whether its signer is trusted` }, json: json("{valid, id, version, manifestHash, packDigest, tools, plan?, …}") },
});
export const PACK_BUILD = defineArgs({
  name: "pack build",
  summary: "a deterministic .tar.gz",
  positionals: ["<dir>"],
  options: { out: { type: "string", value: "FILE", help: "the archive (default <id>-<version>.pack.tar.gz)" }, json: json("{archive, bytes, packDigest}") },
});
export const PACK_SIGN = defineArgs({
  name: "pack sign",
  summary: "sign the pack digest into <dir>/.reach/signature (Ed25519)",
  positionals: ["<dir>"],
  options: {
    key: { type: "string", value: "FILE", required: true, help: "the private key (see keygen)" },
    "signed-at": { type: "string", value: "ISO", help: "the signature's time (default now)" },
    json: json("{packDigest, publicKey, signature}"),
  },
});
export const PACK_TEST = defineArgs({
  name: "pack test",
  summary: "run tests/*.json ({\"input\", \"seed\"?, \"expect\": {\"output\"} | {\"error\": CODE}}) through the engine; a table of\nname, result, duration, difference; exit 1 when a case fails, 2 for a malformed test file",
  positionals: ["[dir]"],
  options: { trust: trustStore, json: json("{pack, passed, cases: [...]}") },
});
export const PACK_ADD_MCP = defineArgs({
  name: "pack add-mcp",
  summary: "start an MCP server (COMMAND ARGS... over stdio, or --url), list its tools, and write them into <dir>/reach.json:\nmcpServers.NAME, and one tool of kind mcp per listed tool with its description and input/output schemas",
  positionals: ["<dir>"],
  rest: "COMMAND ARGS...",
  restHelp: "the stdio server's command and arguments (found on PATH; it gets only --env plus PATH, in a scratch directory)",
  options: {
    name: { type: "string", value: "NAME", required: true, help: "the server's name in mcpServers (letters, digits, . _ -)" },
    url: { type: "string", value: "URL", help: "a Streamable HTTP server's endpoint (instead of COMMAND)" },
    env: { type: "string", value: "NAME=VALUE", multiple: true, help: "an environment variable of the stdio server (recorded in the pack; write {{secret:NAME}}\nfor a secret: its value is read from $NAME to list the tools and never written)" },
    json: json("{dir, server, serverInfo, tools}"),
  },
});
export const PACK_SUBCOMMANDS = [PACK_INIT, PACK_VALIDATE, PACK_BUILD, PACK_SIGN, PACK_TEST, PACK_ADD_MCP] as const;

/** `reach-wasm trust`: its subcommands. */
const trustOptions = { trust: trustStore, json: json("{store, keys} | {store, added} | {store, removed}") } as const;
export const TRUST_ADD = defineArgs({
  name: "trust add",
  summary: "trust a public key (a .pub file from keygen, or 64 hex digits)",
  positionals: ["<KEY.pub|HEX>"],
  options: { name: { type: "string", value: "NAME", help: "the key's name in the store (default: the file's name)" }, ...trustOptions },
});
export const TRUST_LIST = defineArgs({ name: "trust list", summary: "the trusted keys", options: trustOptions });
export const TRUST_REMOVE = defineArgs({ name: "trust remove", summary: "stop trusting a key (exit 1 when there is no such key)", positionals: ["<HEX|NAME>"], options: trustOptions });
export const TRUST_SUBCOMMANDS = [TRUST_ADD, TRUST_LIST, TRUST_REMOVE] as const;

/** Shortest bearer token accepted. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * A bearer token's form.
 * @param token the token
 * @returns it
 * @throws ArgError when it is shorter than {@link MIN_TOKEN_LENGTH}, over 4096 or not printable ASCII without spaces
 */
export function tokenOf(token: string): string {
  if (token.length < MIN_TOKEN_LENGTH || token.length > 4096 || !/^[\x21-\x7e]+$/.test(token)) {
    throw new ArgError(`must be ${MIN_TOKEN_LENGTH} to 4096 printable ASCII characters without spaces (e.g. openssl rand -hex 32)`);
  }
  return token;
}

/**
 * A listen address `HOST:PORT` (`[::1]:PORT` for IPv6).
 * @param text the value
 * @returns the host name (without brackets) and port
 * @throws ArgError otherwise
 */
export function listenOf(text: string): { hostname: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  if (m === null || Number(m[2]) > 65535) throw new ArgError("expects HOST:PORT such as 127.0.0.1:7412 or [::1]:7412 (port 0 picks a free one)");
  return { hostname: m[1]!.replace(/^\[(.*)\]$/, "$1"), port: Number(m[2]) };
}

/** `--allowed-host` and `--allowed-origin`, shared by the HTTP faces (`serve`, `node serve`, `mcp --http`). */
export const HTTP_GUARD = {
  "allowed-host": { type: "string", value: "LIST", multiple: true, help: "Host names (a DNS name, a reverse proxy) answered besides the listen address\n(comma-separated); any other Host (DNS rebinding) is refused" },
  "allowed-origin": { type: "string", value: "LIST", multiple: true, help: "web page origins answered (comma-separated); any other page origin is refused" },
} as const;

/** `reach-wasm mcp`. */
export const MCP = defineArgs({
  name: "mcp",
  positionals: ["<pack-dir|pack.tar.gz>"],
  options: {
    out: { type: "string", value: "DIR", help: "where each run's capsule and run files go (default .reach), as `run` writes them; each\nsession's runs are listed in DIR/sessions/<first run hash>.json (-2, -3, … for sessions that began alike)" },
    key: { type: "string", value: "FILE", help: "sign every session run (see keygen)" },
    trust: { ...trustStore, help: `${trustStore.help};\na pack signed by one of its keys runs unrestricted` },
    unrestricted: { type: "boolean", help: "grant an unsigned or untrusted pack its declared capabilities" },
    ...OTLP_ENDPOINT,
    secret: SECRET_OPTION,
    http: { type: "string", value: "HOST:PORT", parse: listenOf, help: "Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0 picks one); each MCP\nsession is its own chain of runs, ended by the client's DELETE or when the server stops" },
    token: { type: "string", value: "TOKEN", parse: tokenOf, help: "require Authorization: Bearer TOKEN on every HTTP request (default $REACH_WASM_MCP_TOKEN);\nwithout a token only a loopback address is served" },
    ...HTTP_GUARD,
    "max-sessions": { type: "string", value: "N", parse: integer(1, 1024), help: "sessions at once (default 16)" },
    "max-sessions-per-client": { type: "string", value: "N", parse: integer(1, 1024), help: "sessions of one client address (default 4; on a loopback address, where every\nclient has the same address, the whole server's)" },
    "idle-timeout": { type: "string", value: "SECONDS", parse: integer(1, 86_400), help: "a session without a request for SECONDS expires: its run ends and its capsule is\nwritten as for a DELETE (default 600)" },
    "step-timeout": { type: "string", value: "MS", parse: integer(1, 3_600_000), help: "each call's time limit (default 30000), counted in fuel; recorded in every run's request" },
    quiet: { type: "boolean", short: "q", help: "no notes on stderr (errors and each capsule's path still print)" },
  },
});

/** `reach-wasm approve`. */
export const APPROVE = defineArgs({
  name: "approve",
  positionals: ["<PLAN_HASH>"],
  options: {
    key: { type: "string", value: "FILE", required: true, help: "the private key that signs the approval (see keygen)" },
    out: { type: "string", value: "FILE", help: "write the approval record there (default: print it on stdout)" },
    json: json("the approval record (with out when --out is given)"),
  },
});

/** `reach-wasm keygen`. */
export const KEYGEN = defineArgs({
  name: "keygen",
  options: {
    out: { type: "string", value: "FILE", help: "the private key file (default reach-wasm.key, mode 0600); the public key goes to FILE.pub" },
    force: { type: "boolean", help: "replace existing key files" },
    json: json("{publicKey, privateKeyFile, publicKeyFile}"),
  },
});
