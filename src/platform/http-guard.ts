/**
 * The guard every HTTP face is served behind (`serveHttp` applies it before a face sees a request): who may address
 * the server, by `Host`, `Origin` and `Sec-Fetch-Site`. Web-standard (no runtime imports), so it is checked the same
 * on Node and Deno.
 *
 * - `Host` must name this server: the address it is bound to with its port, the loopback names (`localhost`,
 *   `127.0.0.1`, `[::1]`) when it listens on loopback, this machine's addresses and name when it listens on every
 *   interface, or a name allowed explicitly (`--allowed-host NAME[:PORT]`, for a DNS name or a reverse proxy). A page
 *   whose DNS name was rebound to this machine sends its own name, and is refused.
 * - `Origin`, when present, must be this server's own origin (its host equal to `Host`) or allowed explicitly
 *   (`--allowed-origin SCHEME://HOST[:PORT]`); `Origin: null` (sandboxed frames, `file:` pages, redirects) never is.
 *   Every browser sends `Origin` with a cross-origin request and with every POST (a form, `fetch` in `no-cors` mode),
 *   so no page on another origin reaches a state-changing endpoint, whatever the face's token setting.
 * - `Sec-Fetch-Site: cross-site` or `same-site` (a browser saying the request comes from another origin) is refused
 *   unless its `Origin` is allowed explicitly: that covers the requests that carry no `Origin` (a cross-site
 *   navigation, `<img>`, `<script>`).
 * Requests without `Origin` and `Sec-Fetch-Site` (command-line clients, peers, SDKs) pass when their `Host` does.
 * @module
 */

/** What the guard allows. */
export type HostPolicy = {
  /** `http` or `https`: the scheme of the server. */
  readonly scheme: "http" | "https";
  /** The port the server is bound to. */
  readonly port: number;
  /** Host names (lowercase; IPv6 in brackets) allowed with the bound port. */
  readonly names: ReadonlySet<string>;
  /** Names allowed explicitly with any port (`--allowed-host NAME`). */
  readonly anyPort: ReadonlySet<string>;
  /** `name:port` allowed explicitly (`--allowed-host NAME:PORT`). */
  readonly hostPorts: ReadonlySet<string>;
  /** Origins allowed explicitly (`--allowed-origin`), as `URL.origin` spells them. */
  readonly origins: ReadonlySet<string>;
};

/** Why a request was refused: an HTTP status and a message saying how to fix it. */
export type GuardRefusal = { status: number; message: string };

/** The option names the faces' command lines use (named in refusals). */
export const ALLOWED_HOST_OPTION = "--allowed-host";
/** See {@link ALLOWED_HOST_OPTION}. */
export const ALLOWED_ORIGIN_OPTION = "--allowed-origin";

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * Whether a host name or address is this machine's loopback interface.
 * @param hostname a name or IP address (IPv6 with or without brackets)
 * @returns true for `localhost`, 127.0.0.0/8 and `::1`
 * @example isLoopbackName("[::1]") // true
 */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
}

/** Whether an address means "every interface". */
function isWildcard(hostname: string): boolean {
  const h = hostname.replace(/^\[(.*)\]$/, "$1");
  return h === "0.0.0.0" || h === "::" || h === "";
}

/** A host name as the guard compares it: lowercase, IPv6 in brackets, no trailing dot. */
function normalName(name: string): string {
  const n = name.toLowerCase().replace(/\.$/, "");
  return n.includes(":") && !n.startsWith("[") ? `[${n}]` : n;
}

/**
 * Split a `Host` value (`name`, `name:port`, `[v6]`, `[v6]:port`).
 * @param host the header value
 * @returns the normalised name and the port (null when absent), or null when it is not a host
 */
function splitHost(host: string): { name: string; port: number | null } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(host.trim());
  if (m === null) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && port > 65535) return null;
  return { name: normalName(m[1]!), port };
}

/**
 * Check one `--allowed-host` value.
 * @param text `NAME` (any port) or `NAME:PORT`; IPv6 in brackets
 * @returns the normalised entry
 * @throws TypeError naming the expected form
 * @example parseAllowedHost("Runs.Example.com:443") // "runs.example.com:443"
 */
export function parseAllowedHost(text: string): string {
  const h = splitHost(text);
  if (h === null || text.includes("/")) throw new TypeError(`${ALLOWED_HOST_OPTION} expects NAME or NAME:PORT (a DNS name or address clients use, e.g. runs.example.com or [::1]:7411), got ${JSON.stringify(text)}`);
  return h.port === null ? h.name : `${h.name}:${h.port}`;
}

/**
 * Check one `--allowed-origin` value.
 * @param text `SCHEME://HOST[:PORT]` (the origin of a web page allowed to call the server)
 * @returns the origin as `URL.origin` spells it
 * @throws TypeError naming the expected form
 * @example parseAllowedOrigin("https://UI.example.com/") // "https://ui.example.com"
 */
export function parseAllowedOrigin(text: string): string {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    url = null;
  }
  const bare = url !== null && (url.pathname === "/" || url.pathname === "") && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
  if (url === null || !bare || (url.protocol !== "http:" && url.protocol !== "https:") || url.origin === "null") {
    throw new TypeError(`${ALLOWED_ORIGIN_OPTION} expects an origin such as https://ui.example.com or http://localhost:3000 (scheme, host and port only), got ${JSON.stringify(text)}`);
  }
  return url.origin;
}

/** What {@link hostPolicy} is built from. */
export type HostPolicyOptions = {
  /** The address the server is bound to. */
  hostname: string;
  /** The port it is bound to (the real one when 0 was asked for). */
  port: number;
  tls: boolean;
  /** This machine's names and addresses, used when it listens on every interface. */
  localNames?: readonly string[];
  /** Extra names (`NAME` or `NAME:PORT`, as {@link parseAllowedHost} gives them). */
  allowedHosts?: readonly string[];
  /** Extra origins (as {@link parseAllowedOrigin} gives them). */
  allowedOrigins?: readonly string[];
};

/**
 * The policy of a bound server.
 * @param o the bound address and what is allowed besides
 * @returns the policy for {@link checkHostOrigin}
 * @example const policy = hostPolicy({ hostname: "127.0.0.1", port: 7411, tls: false });
 */
export function hostPolicy(o: HostPolicyOptions): HostPolicy {
  const names = new Set<string>();
  if (!isWildcard(o.hostname)) names.add(normalName(o.hostname));
  if (isLoopbackName(o.hostname) || isWildcard(o.hostname)) for (const n of LOOPBACK_NAMES) names.add(n);
  if (isWildcard(o.hostname)) for (const n of o.localNames ?? []) names.add(normalName(n));
  const anyPort = new Set<string>();
  const hostPorts = new Set<string>();
  for (const entry of o.allowedHosts ?? []) (/:\d+$/.test(entry) ? hostPorts : anyPort).add(parseAllowedHost(entry));
  const origins = new Set((o.allowedOrigins ?? []).map(parseAllowedOrigin));
  return { scheme: o.tls ? "https" : "http", port: o.port, names, anyPort, hostPorts, origins };
}

function hostAllowed(policy: HostPolicy, host: { name: string; port: number | null }): boolean {
  const port = host.port ?? (policy.scheme === "https" ? 443 : 80);
  return (policy.names.has(host.name) && port === policy.port) || policy.anyPort.has(host.name) || policy.hostPorts.has(`${host.name}:${port}`);
}

const HOW_HOST = `a client that reaches this server by another name (a DNS name, a reverse proxy) must be allowed with ${ALLOWED_HOST_OPTION} NAME`;
const HOW_ORIGIN = `a web page on another origin must be allowed with ${ALLOWED_ORIGIN_OPTION} SCHEME://HOST[:PORT]`;

/**
 * Whether a request may reach the face behind the guard.
 * @param request the request (its `Host`, `Origin` and `Sec-Fetch-Site` headers)
 * @param policy the server's policy
 * @returns null to pass it, or why it is refused (400 without a usable `Host`, 403 otherwise)
 * @example checkHostOrigin(new Request("http://x/", { headers: { host: "evil.test" } }), policy) // { status: 403, … }
 */
export function checkHostOrigin(request: Request, policy: HostPolicy): GuardRefusal | null {
  const hostText = request.headers.get("host");
  if (hostText === null || hostText === "") return { status: 400, message: "the request has no Host header; send the server's address as Host" };
  const host = splitHost(hostText);
  if (host === null) return { status: 400, message: `the Host header ${JSON.stringify(hostText.slice(0, 100))} is not NAME[:PORT]` };
  if (!hostAllowed(policy, host)) {
    return { status: 403, message: `Host ${JSON.stringify(hostText.slice(0, 100))} does not name this server (a page whose DNS name points here is refused); ${HOW_HOST}` };
  }
  const origin = request.headers.get("origin");
  let allowedOrigin = false;
  if (origin !== null) {
    if (origin === "null") return { status: 403, message: `Origin "null" (a sandboxed or local page, or a redirect) may not call this server; ${HOW_ORIGIN}` };
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return { status: 403, message: `the Origin header ${JSON.stringify(origin.slice(0, 100))} is not an origin` };
    }
    allowedOrigin = policy.origins.has(url.origin);
    const sameOrigin = normalName(url.hostname) === host.name && (url.port === "" ? null : Number(url.port)) === host.port;
    if (!allowedOrigin && !sameOrigin) return { status: 403, message: `a page from ${JSON.stringify(url.origin)} may not call this server; ${HOW_ORIGIN}` };
  }
  const site = request.headers.get("sec-fetch-site");
  if ((site === "cross-site" || site === "same-site") && !allowedOrigin) {
    return { status: 403, message: `a request from another site (Sec-Fetch-Site: ${site}) may not call this server; ${HOW_ORIGIN}` };
  }
  return null;
}
