/**
 * `http.fetch` through an injected web-standard `fetch` (seed 003 §4.2 "Resource Boundaries").
 *
 * Every hop is checked before it is made: the first URL by `checkFetchUrl`, every redirect (`redirect: "manual"`)
 * by `checkFetchUrl(…, from)` (policy/hosts.ts `checkRedirect`), at most {@link HttpLimits.maxRedirects} hops; the
 * normalised URL is fetched, never the string the tool sent. 303 (and 301/302 after POST) continue as GET without a
 * body; `authorization` and `cookie` are dropped when a redirect changes origin (as the Fetch standard does for
 * `authorization`). The response body is read with a running byte count and refused over
 * {@link HttpLimits.maxResponseBytes}. Network failures and timeouts are `EXEC_RESOURCE_UNAVAILABLE`.
 *
 * With a run's secrets (`./secrets.ts`), every hop is checked and filled from the placeholder form (a redirect's
 * `Location` has its values put back as placeholders first), and the response's header names and values, its body
 * and any error are scrubbed before anyone sees them; the URL returned is the placeholder form.
 * @module
 */
import { bytesToBase64 } from "../../canonical/mod.ts";
import { checkFetchUrl } from "../../policy/mod.ts";
import type { CapabilityPolicy } from "../../policy/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import type { JsonObject } from "../../protocol/mod.ts";
import { body, invalid, shape, str } from "./_assert.ts";
import type { Req } from "./_assert.ts";
import type { FetchLike } from "../../protocol/mod.ts";
import { concatBytes } from "../../canonical/mod.ts";
import type { SecretBox } from "./secrets.ts";

/** Limits of `http.fetch`. */
export type HttpLimits = {
  /** Most redirects followed (default 5). */
  maxRedirects: number;
  /** Largest response body, in bytes (default 8 MiB). */
  maxResponseBytes: number;
  /** Largest request body, in bytes (default 8 MiB). */
  maxRequestBytes: number;
  /** Time allowed for the whole fetch, redirects and body included, in ms (default 30 s). */
  timeoutMs: number;
};

/** Default limits. */
export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = {
  maxRedirects: 5,
  maxResponseBytes: 8 * 1024 * 1024,
  maxRequestBytes: 8 * 1024 * 1024,
  timeoutMs: 30_000,
};

/** A validated `http.fetch` request. */
export type FetchRequest = { url: string; method: string; headers: [string, string][]; body: Uint8Array | null };

const OP = "http.fetch";
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/;
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const BAD_VALUE = /[\u0000\r\n]|[^\u0000-\u00ff]/;
/** Headers a tool may not set: framing, hop-by-hop and routing headers (request smuggling, host confusion). */
const FORBIDDEN_HEADERS = new Set([
  "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "expect",
  "proxy-authorization", "proxy-connection", "proxy-authenticate",
]);
const MAX_HEADERS = 64;
const MAX_URL_LENGTH = 8192;

/**
 * Validate an `http.fetch` request.
 * @param request the request
 * @param maxRequestBytes largest body
 * @returns the validated request (header names lower-cased, sorted)
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function validateFetch(request: unknown, maxRequestBytes: number): FetchRequest {
  const r: Req = shape(OP, request, ["url"], ["method", "headers", "data", "text"]);
  const url = str(OP, r, "url", MAX_URL_LENGTH, 1);
  const method = r["method"] === undefined ? "GET" : str(OP, r, "method", 16, 1);
  if (!METHODS.has(method)) throw invalid(OP, "method", `expected one of ${[...METHODS].join(", ")} (upper case)`);
  const headers: [string, string][] = [];
  if (Object.prototype.hasOwnProperty.call(r, "headers")) {
    const h = r["headers"];
    if (typeof h !== "object" || h === null || Array.isArray(h)) throw invalid(OP, "headers", "expected an object of strings");
    const entries = Object.entries(h as Record<string, unknown>);
    if (entries.length > MAX_HEADERS) throw invalid(OP, "headers", `expected at most ${MAX_HEADERS} headers`);
    const seen = new Set<string>();
    for (const [name, value] of entries) {
      if (!TOKEN.test(name)) throw invalid(OP, "headers", "has a name that is not an HTTP token");
      const lower = name.toLowerCase();
      if (FORBIDDEN_HEADERS.has(lower)) throw invalid(OP, "headers", `may not set "${lower}"; the host sets it`);
      if (seen.has(lower)) throw invalid(OP, "headers", `names "${lower}" twice (names are case-insensitive)`);
      seen.add(lower);
      if (typeof value !== "string" || value.length > 8192 || BAD_VALUE.test(value)) {
        throw invalid(OP, "headers", `"${lower}" must be a string of at most 8192 Latin-1 characters without CR, LF or NUL`);
      }
      headers.push([lower, value]);
    }
    headers.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }
  const b = body(OP, r, maxRequestBytes, true);
  if (b !== null && (method === "GET" || method === "HEAD")) throw invalid(OP, "data", `a ${method} request has no body`);
  return { url, method, headers, body: b };
}

function unavailable(url: string, message: string, extra: Record<string, unknown> = {}): ReachError {
  return new ReachError("EXEC_RESOURCE_UNAVAILABLE", `http.fetch ${JSON.stringify(url.slice(0, 200))}: ${message}`,
    { details: { op: OP, url: url.slice(0, 200), ...extra } });
}

async function readCapped(res: Response, url: string, max: number): Promise<Uint8Array> {
  const declared = res.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(url, max);
  }
  if (res.body === null) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(url, max);
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}

function tooLarge(url: string, max: number): ReachError {
  return new ReachError("EXEC_RESOURCE_EXHAUSTED", `http.fetch ${JSON.stringify(url.slice(0, 200))}: the response body is ` +
    `over the limit of ${max} bytes; ask for less (a range, a page) or raise the host's maxResponseBytes`,
    { details: { op: OP, url: url.slice(0, 200), limit: "responseBytes", max } });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Put placeholders back in a response's header values and body; a changed body gets its `content-length` fixed. */
function scrubResponse(secrets: SecretBox, headers: Map<string, string>, data: Uint8Array): Uint8Array {
  const entries = [...headers];
  headers.clear();
  for (const [k, v] of entries) headers.set(secrets.scrubBinary(k), secrets.scrubBinary(v));
  const out = secrets.scrubBytes(data);
  if (out !== data && headers.has("content-length")) headers.set("content-length", String(out.length));
  return out;
}

/**
 * Perform a validated fetch under the policy.
 * @param req the validated request
 * @param policy the capability policy (hosts, URL grants)
 * @param fetchFn the injected fetch
 * @param limits limits
 * @param signal aborts the fetch (the runner's stop signal), optional
 * @param secrets the run's secrets, optional (see the module notes)
 * @returns `{status, url, headers, data}` (headers: lower-case names, values joined with ", ")
 * @throws ReachError `POLICY_VIOLATION` for a refused URL or redirect; `EXEC_RESOURCE_EXHAUSTED` for a body over the
 *   limit; `EXEC_RESOURCE_UNAVAILABLE` for network failures, timeouts and too many redirects
 */
export async function performFetch(
  req: FetchRequest,
  policy: CapabilityPolicy,
  fetchFn: FetchLike,
  limits: HttpLimits,
  signal?: AbortSignal,
  secrets?: SecretBox,
): Promise<JsonObject> {
  if (secrets === undefined) return await fetchHops(req, policy, fetchFn, limits, signal, undefined);
  try {
    return await fetchHops(req, policy, fetchFn, limits, signal, secrets);
  } catch (err) {
    // A fetch implementation's message may quote what it was given (a header value, the URL with a value in it).
    throw secrets.scrubError(err);
  }
}

/** The hops of {@link performFetch}; with `secrets`, each hop is checked and filled from the placeholder form. */
async function fetchHops(
  req: FetchRequest,
  policy: CapabilityPolicy,
  fetchFn: FetchLike,
  limits: HttpLimits,
  signal: AbortSignal | undefined,
  secrets: SecretBox | undefined,
): Promise<JsonObject> {
  let url = checkFetchUrl(policy, req.url, req.method);
  let method = req.method;
  let payload: Uint8Array | null = req.body;
  let headers = req.headers;
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const abort = signal === undefined ? timeout : AbortSignal.any([timeout, signal]);
  for (let hop = 0; ; hop++) {
    let res: Response;
    // Secrets go in per hop, from the placeholder form (a value never rides a redirect to another host).
    const sent = secrets === undefined ? { url, headers, body: payload } : secrets.prepare({ url, headers, body: payload });
    try {
      const init: RequestInit = { method, headers: sent.headers, redirect: "manual", signal: abort };
      if (sent.body !== null) init.body = sent.body as Uint8Array<ArrayBuffer>;
      res = await fetchFn(sent.url, init);
    } catch (err) {
      const why = abort.aborted ? (timeout.aborted ? `timed out after ${limits.timeoutMs} ms` : "aborted") : (err as Error)?.message ?? "failed";
      throw unavailable(url, `the request failed: ${why}`, { reason: abort.aborted ? "aborted" : "network" });
    }
    if (res.type === "opaqueredirect" || res.status === 0) {
      throw unavailable(url, "the fetch implementation hid the redirect (opaque); inject a fetch that honours redirect: manual");
    }
    const raw = REDIRECTS.has(res.status) ? res.headers.get("location") : null;
    const location = raw === null || secrets === undefined ? raw : secrets.scrubBinary(raw);
    if (location === null) {
      let data: Uint8Array;
      try {
        data = method === "HEAD" ? new Uint8Array(0) : await readCapped(res, url, limits.maxResponseBytes);
      } catch (err) {
        if (err instanceof ReachError) throw err;
        throw unavailable(url, `reading the body failed: ${abort.aborted ? "timed out or aborted" : (err as Error)?.message}`);
      }
      const seen = new Map<string, string>();
      res.headers.forEach((value, name) => {
        const k = name.toLowerCase();
        const before = seen.get(k);
        seen.set(k, before === undefined ? value : `${before}, ${value}`);
      });
      if (secrets?.live === true) data = scrubResponse(secrets, seen, data);
      // From entries (CreateDataProperty): a header named "__proto__" is a member like any other.
      return { status: res.status, url, headers: Object.fromEntries(seen), data: bytesToBase64(data) };
    }
    await res.body?.cancel().catch(() => undefined);
    if (hop >= limits.maxRedirects) {
      throw unavailable(url, `more than ${limits.maxRedirects} redirects; fetch the final URL directly`, { reason: "redirects" });
    }
    const next = checkFetchUrl(policy, location, method, url);
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      payload = null;
      headers = headers.filter(([n]) => n !== "content-type");
    }
    if (new URL(next).origin !== new URL(url).origin) headers = headers.filter(([n]) => n !== "authorization" && n !== "cookie");
    url = next;
  }
}
