/**
 * Host allowlist matching for `policies.allowedHosts` (seed 003 §4.1, §4.2 "Resource Boundaries").
 *
 * Every decision is taken on the host exactly as the WHATWG URL parser (the one `fetch` uses) serialises it,
 * so spelling tricks collapse before any comparison:
 * - IPv4 in any spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, `%31%32%37.0.0.1`) becomes the canonical
 *   dotted quad `127.0.0.1`; IPv6 (IPv4-mapped included) becomes its compressed bracketed form (`[::ffff:7f00:1]`).
 *   An IP host is refused unless the pattern list holds that same canonical address. An IPv4-mapped IPv6 address is
 *   a different host from the IPv4 address it maps (pattern `127.0.0.1` does not admit `[::ffff:127.0.0.1]`).
 * - Letter case, full-width characters and Unicode labels are folded by IDNA (`ＡＰＩ.example.com` → `api.example.com`,
 *   `bücher.example` → `xn--bcher-kva.example`); one trailing dot is stripped (`example.com.` → `example.com`).
 * - Credentials (`user@host`, `user:pw@host`) are refused outright, whatever the host.
 * - Matching is label by label: `*.example.com` admits `a.example.com` and `a.b.example.com` but neither the apex
 *   `example.com`, nor `evilexample.com`, nor `api.example.com.evil.com`.
 *
 * Ports are not part of a pattern: an allowed host is allowed on any port. Callers must fetch the normalised
 * `url` returned by {@link checkUrlAllowed}, never the string they passed in, and must run every redirect through
 * {@link checkRedirect} (fetch with `redirect: "manual"`).
 * @module
 */
import { policyViolation } from "../protocol/mod.ts";
import type { ReachError } from "../protocol/mod.ts";

/** A parsed `allowedHosts` entry. */
export type HostPattern =
  /** One host name, matched exactly (after normalisation). */
  | { readonly kind: "exact"; readonly host: string }
  /** `*.suffix`: any host with at least one more label in front of `suffix`. */
  | { readonly kind: "wildcard"; readonly suffix: string }
  /** One IP address in canonical URL form: `127.0.0.1` or `[::1]`. */
  | { readonly kind: "ip"; readonly host: string };

/** The outcome of a host check: the normalised host and URL to fetch, or a human-readable reason for refusal. */
export type HostCheck = { ok: true; host: string; url: string } | { ok: false; reason: string };

/** One DNS-style label after URL normalisation: letters, digits, `-`, `_`, 1 to 63 characters. */
const LABEL = /^[a-z0-9_-]{1,63}$/;
/** Canonical dotted-quad IPv4 (no leading zeros, each part 0..255), as the URL serialiser writes it. */
const CANONICAL_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
/** Characters that would change the meaning of `http://<pattern>/` (authority delimiters, escapes, whitespace). */
// eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
const PATTERN_FORBIDDEN = /[\s/\\@:?#%[\]<>^|"'`{}\u0000-\u001f\u007f]/u;
/** Longest host name we accept (RFC 1035 §2.3.4: 255 octets on the wire, 253 in text). */
const MAX_HOST_LENGTH = 253;

/**
 * WHATWG URL "ends in a number" (URL Standard §3.5 host parsing): the last label, after dropping one empty
 * trailing label, is all digits or `0x` hex. Such a host is parsed as IPv4 by URL, never as a name.
 */
function endsInANumber(host: string): boolean {
  const labels = host.split(".");
  if (labels.length > 1 && labels[labels.length - 1] === "") labels.pop();
  const last = labels[labels.length - 1] ?? "";
  return /^\d+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

/** Host name of `http://<text>/` as the URL parser normalises it, or null when it does not parse. */
function urlHostname(text: string): string | null {
  try {
    return new URL(`http://${text}/`).hostname;
  } catch {
    return null;
  }
}

/** Why a normalised host name is unusable, or null when every label is well formed. */
function hostNameProblem(host: string): string | null {
  if (host.length === 0) return "the host is empty";
  if (host.length > MAX_HOST_LENGTH) return `the host is longer than ${MAX_HOST_LENGTH} characters`;
  const labels = host.split(".");
  if (labels.some((l) => l.length === 0)) return "the host has an empty label";
  if (!labels.every((l) => LABEL.test(l))) return "the host has a label that is not letters, digits, '-' or '_'";
  if (endsInANumber(host)) return "the host ends in a number but is not an IPv4 address";
  return null;
}

/** Strip exactly one trailing dot (the DNS root label). */
function stripOneDot(host: string): string {
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

/** Keep text short and printable for messages and details (never splits a surrogate pair). */
function clip(text: string, max = 200): string {
  // eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
  const printable = text.replace(/[\u0000-\u001f\u007f]/gu, "?").replace(/\p{Surrogate}/gu, "\ufffd");
  const chars = Array.from(printable);
  return chars.length <= max ? printable : chars.slice(0, max).join("") + "…";
}

/**
 * Parse one `allowedHosts` entry (seed 003 §4.1).
 *
 * Accepted forms: a host name (`api.example.com`, Unicode allowed and IDNA-normalised, one trailing dot allowed),
 * a wildcard `*.example.com` (any subdomain at any depth, not the apex; the suffix needs at least two labels, so
 * `*.com` is refused), a canonical dotted-quad IPv4 address (`10.0.0.1`) or a bracketed IPv6 address (`[::1]`,
 * stored in the URL's compressed form).
 * @param pattern the entry as written in the pack
 * @returns the parsed pattern
 * @throws TypeError when the entry is not a string or is malformed: empty labels, a `*` anywhere but a leading
 *   `*.` label, a bare `*`, a single-label wildcard suffix, an IPv4 address not in canonical dotted-quad form,
 *   a wildcard over an IP address, or characters such as `/`, `@`, `:` or spaces
 * @example parseHostPattern("*.Example.com") // { kind: "wildcard", suffix: "example.com" }
 */
export function parseHostPattern(pattern: string): HostPattern {
  if (typeof pattern !== "string") throw new TypeError(`"allowedHosts" entry expected a string, got ${typeof pattern}`);
  const shown = JSON.stringify(clip(pattern));
  const bad = (why: string): TypeError =>
    new TypeError(`"allowedHosts" entry ${shown} is malformed: ${why}; write a host such as "api.example.com", ` +
      `"*.example.com", "10.0.0.1" or "[::1]"`);

  if (pattern.startsWith("[")) {
    if (!/^\[[0-9a-fA-F:.]+\]$/.test(pattern)) throw bad("an IPv6 address must be written in brackets, without a port");
    const host = urlHostname(pattern);
    if (host === null || !host.startsWith("[")) throw bad("the bracketed text is not an IPv6 address");
    return { kind: "ip", host };
  }
  if (pattern.length === 0) throw bad("it is empty");
  if (PATTERN_FORBIDDEN.test(pattern)) throw bad("it contains a character that is not allowed in a host name");

  const text = stripOneDot(pattern);
  const wildcard = text.startsWith("*.");
  const rest = wildcard ? text.slice(2) : text;
  if (rest.includes("*")) throw bad("'*' is allowed only as the whole first label, as in \"*.example.com\"");
  if (rest.length === 0 || rest.split(".").some((l) => l.length === 0)) throw bad("it has an empty label");

  if (endsInANumber(rest)) {
    if (wildcard) throw bad("a wildcard cannot cover an IP address");
    if (!CANONICAL_IPV4.test(rest)) throw bad("an IPv4 address must be written as a canonical dotted quad");
    return { kind: "ip", host: rest };
  }
  const host = urlHostname(rest);
  if (host === null) throw bad("it is not a valid host name");
  const problem = hostNameProblem(host);
  if (problem !== null) throw bad(problem);
  if (!wildcard) return { kind: "exact", host };
  if (!host.includes(".")) throw bad("a wildcard needs a suffix of at least two labels (\"*.com\" is too broad)");
  return { kind: "wildcard", suffix: host };
}

/** True when `host` (already normalised) is admitted by `pattern`. */
function matches(pattern: HostPattern, host: string, isIp: boolean): boolean {
  if (pattern.kind === "ip") return isIp && pattern.host === host;
  if (isIp) return false;
  if (pattern.kind === "exact") return pattern.host === host;
  // Label-exact suffix match: the character before the suffix must be a dot, and at least one label precedes it.
  return host.length > pattern.suffix.length + 1 && host.endsWith("." + pattern.suffix);
}

/** Check an already parsed URL against parsed patterns. */
function checkParsed(url: URL, patterns: readonly HostPattern[]): HostCheck {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `the scheme "${clip(url.protocol)}" is not allowed; only http: and https: are` };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "URLs with credentials (user@host) are not allowed; send credentials in headers" };
  }
  const raw = url.hostname;
  const isIp = raw.startsWith("[") || CANONICAL_IPV4.test(raw);
  const host = isIp ? raw : stripOneDot(raw);
  if (!isIp) {
    const problem = hostNameProblem(host);
    if (problem !== null) return { ok: false, reason: `${problem}: ${JSON.stringify(clip(raw))}` };
  }
  if (!patterns.some((p) => matches(p, host, isIp))) {
    const what = isIp ? `the IP address ${host}` : `the host ${host}`;
    return { ok: false, reason: `${what} is not in allowedHosts` };
  }
  if (host !== raw) url.hostname = host;
  return { ok: true, host, url: url.href };
}

/** Parse every pattern up front (a malformed list is a configuration error, not a denial). */
function parseAll(allowedHosts: readonly string[]): HostPattern[] {
  if (!Array.isArray(allowedHosts)) throw new TypeError(`"allowedHosts" expected an array of strings`);
  return allowedHosts.map(parseHostPattern);
}

/**
 * Decide whether a URL may be fetched under `allowedHosts` (seed 003 §4.2 "Resource Boundaries").
 * @param url the URL a tool asked for
 * @param allowedHosts the pack's `policies.allowedHosts`
 * @returns `{ ok: true, host, url }` with the normalised host and the URL to fetch, or `{ ok: false, reason }`
 * @throws TypeError when `url` is not a string or an `allowedHosts` entry is malformed (see {@link parseHostPattern})
 * @example
 * checkUrlAllowed("https://API.example.com./v1", ["*.example.com"]) // { ok: true, host: "api.example.com", … }
 * checkUrlAllowed("http://2130706433/", ["*.example.com"]).ok      // false
 */
export function checkUrlAllowed(url: string, allowedHosts: readonly string[]): HostCheck {
  if (typeof url !== "string") throw new TypeError(`"url" expected a string, got ${typeof url}`);
  const patterns = parseAll(allowedHosts);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: `${JSON.stringify(clip(url))} is not an absolute URL` };
  }
  return checkParsed(parsed, patterns);
}

/**
 * Decide whether a redirect may be followed: resolve `location` against `fromUrl` and apply
 * {@link checkUrlAllowed} to the result (seed 003 §4.2 "Resource Boundaries": a redirect never reaches a host that is
 * not allowed).
 * @param fromUrl the URL that answered with the redirect
 * @param location the `Location` header value (absolute or relative)
 * @param allowedHosts the pack's `policies.allowedHosts`
 * @returns the same shape as {@link checkUrlAllowed}, for the resolved target
 * @throws TypeError when an argument is not a string or an `allowedHosts` entry is malformed
 * @example checkRedirect("https://a.example.com/x", "//evil.com/", ["*.example.com"]).ok // false
 */
export function checkRedirect(fromUrl: string, location: string, allowedHosts: readonly string[]): HostCheck {
  if (typeof fromUrl !== "string") throw new TypeError(`"fromUrl" expected a string, got ${typeof fromUrl}`);
  if (typeof location !== "string") throw new TypeError(`"location" expected a string, got ${typeof location}`);
  const patterns = parseAll(allowedHosts);
  let target: URL;
  try {
    target = new URL(location, fromUrl);
  } catch {
    return { ok: false, reason: `the redirect ${JSON.stringify(clip(location))} does not resolve to a URL` };
  }
  return checkParsed(target, patterns);
}

/**
 * The `POLICY_VIOLATION` for a refused host (seed 003 §4.3). Its `violationType` is `RESOURCE_ACCESS`: a host
 * outside `allowedHosts` is a resource outside the declared boundary (§4.2 "Resource Boundaries");
 * `PERMISSION_DENIED` is kept for a declared resource used without the needed permission.
 * @param url the URL that was refused (clipped to 200 characters in the error)
 * @param reason the `reason` from {@link checkUrlAllowed} or {@link checkRedirect}
 * @returns the error, with details `{ violationType, attemptedCapability: "http.fetch", url, reason }`
 * @throws TypeError when an argument is not a string
 * @example
 * const check = checkUrlAllowed(u, hosts);
 * if (!check.ok) throw policyViolationForHost(u, check.reason);
 */
export function policyViolationForHost(url: string, reason: string): ReachError {
  if (typeof url !== "string") throw new TypeError(`"url" expected a string, got ${typeof url}`);
  if (typeof reason !== "string") throw new TypeError(`"reason" expected a string, got ${typeof reason}`);
  const shown = clip(url);
  return policyViolation(
    "RESOURCE_ACCESS",
    "http.fetch",
    `http.fetch to ${JSON.stringify(shown)} was refused: ${reason}; add the host to "policies.allowedHosts" ` +
      `in reach.json if the tool needs it`,
    { url: shown, reason },
  );
}
