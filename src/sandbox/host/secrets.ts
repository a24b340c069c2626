/**
 * Secrets (docs/authoring.md "Secrets"): a tool never sees a secret's value. It writes the placeholder
 * `{{secret:NAME}}` in a request; the host substitutes the value only on the way out, only to the hosts the pack
 * declared for that secret, and puts the placeholder back wherever the value comes back, before the tool, the tape,
 * the events or any output see it.
 *
 * - {@link SecretBox.prepare}: for one hop of `http.fetch` (the first request and every redirect, always from the
 *   placeholder form), every placeholder of the URL (path and query), the header values and the body must name a
 *   declared secret whose `hosts` admit the hop's URL, else `POLICY_VIOLATION` and nothing is sent; then the values
 *   go in (percent-encoded in the URL, as they are in headers and bodies).
 * - {@link SecretBox.scrubText} / {@link SecretBox.scrubBinary}: every value, raw and in the forms an echo takes —
 *   JSON-escaped, percent-encoded (upper and lower case hex, `+` for space), hex, base64 and base64url at each of the
 *   three byte alignments (what `Basic base64(user:value)` shows) — becomes the placeholder.
 * - Values shorter than {@link MIN_SECRET_BYTES} are refused: replacing a short string everywhere corrupts data.
 *
 * The box works on "binary strings" (one character per byte, 0–255) for bodies and header values, so a value is
 * found in any body, text or not.
 *
 * This file holds the box (check, substitute, scrub); the placeholder syntax and binary strings are in
 * `_placeholders.ts`, the check of supplied values in `_secret-values.ts`, the forms a value is found in and replaced
 * in `_secret-scrub.ts`.
 * @module
 */
import { checkUrlAllowed } from "../../policy/mod.ts";
import { policyViolation, ReachError, toReachError } from "../../protocol/mod.ts";
import type { SecretDeclarations } from "../../protocol/mod.ts";
import { binaryToBytes, bytesToBinary, PLACEHOLDER, placeholderNames } from "./_placeholders.ts";
import { checkSecretValues, MIN_SECRET_BYTES } from "./_secret-values.ts";
import type { SecretValues } from "./_secret-values.ts";
import { Scrubber } from "./_secret-scrub.ts";

export { binaryToBytes, bytesToBinary, isSecretName, placeholderNames, secretPlaceholder } from "./_placeholders.ts";
export { checkSecretValues, MAX_SECRET_BYTES, MIN_SECRET_BYTES } from "./_secret-values.ts";
export type { SecretValues } from "./_secret-values.ts";

const utf8 = new TextEncoder();

/** What crosses to another thread: the declarations and, in a live run, the values. */
export type SecretSpec = { readonly declared: SecretDeclarations; readonly values: SecretValues | null };

/** A request of one hop, as the host would send it. */
export type HopRequest = { url: string; headers: [string, string][]; body: Uint8Array | null };

/**
 * A run's secrets: what the pack declares and (live) the values. Replay holds the declarations only: the checks run
 * the same, nothing is substituted.
 */
export class SecretBox {
  readonly #declared: SecretDeclarations;
  readonly #values: ReadonlyMap<string, string> | null;
  #scrubber: Scrubber | null = null;

  /**
   * @param declared the pack's `secrets` (absent: none)
   * @param values the values (checked with {@link checkSecretValues}), or null (replay, or no secrets)
   * @throws ReachError as {@link checkSecretValues} when `values` is given
   */
  constructor(declared: SecretDeclarations | undefined, values: SecretValues | null = null) {
    this.#declared = declared ?? {};
    if (values !== null) checkSecretValues(this.#declared, values);
    this.#values = values === null ? null : new Map(Object.entries(values));
  }

  /**
   * A box from what crossed to another thread.
   * @param spec declarations and values
   * @returns the box
   */
  static from(spec: SecretSpec): SecretBox {
    return new SecretBox(spec.declared, spec.values);
  }

  /** What crosses to another thread (held in memory only, never recorded). */
  spec(): SecretSpec {
    return { declared: this.#declared, values: this.#values === null ? null : Object.fromEntries(this.#values) };
  }

  /** Declared names, sorted. */
  get names(): string[] {
    return Object.keys(this.#declared).sort();
  }

  /** Whether the box holds values (a live run with secrets). */
  get live(): boolean {
    return this.#values !== null && this.#values.size > 0;
  }

  /**
   * Check one hop: every placeholder names a declared secret whose hosts admit `url`.
   * @param req the hop in placeholder form
   * @returns the names used
   * @throws ReachError `POLICY_VIOLATION` (`RESOURCE_ACCESS`) for an undeclared name or a host outside the secret's hosts
   */
  check(req: HopRequest): string[] {
    const names = new Set<string>(placeholderNames(req.url));
    for (const [, v] of req.headers) for (const n of placeholderNames(v)) names.add(n);
    if (req.body !== null) for (const n of placeholderNames(bytesToBinary(req.body))) names.add(n);
    for (const name of names) this.#allow(name, req.url);
    return [...names].sort();
  }

  #allow(name: string, url: string): void {
    const d = Object.hasOwn(this.#declared, name) ? this.#declared[name] : undefined;
    const shown = url.replace(/[?#].*$/s, "").slice(0, 200);
    if (d === undefined) {
      throw policyViolation("RESOURCE_ACCESS", `http.fetch:secret:${name}`, `http.fetch to ${JSON.stringify(shown)} was refused: the request ` +
        `uses {{secret:${name}}} but the pack declares no secret ${name}; declare it under "secrets" in reach.json`, { url: shown, secret: name, reason: "undeclared secret" });
    }
    if (!checkUrlAllowed(url, d.hosts).ok) {
      throw policyViolation("RESOURCE_ACCESS", `http.fetch:secret:${name}`, `http.fetch to ${JSON.stringify(shown)} was refused: the request ` +
        `carries secret ${name}, which may only be sent to ${d.hosts.join(", ")} ("secrets" in reach.json); the request was not sent`,
        { url: shown, secret: name, reason: "host outside the secret's hosts" });
    }
  }

  /**
   * Check one hop and put the values in (see the module notes). Without values (replay) the hop is only checked.
   * @param req the hop in placeholder form
   * @returns the hop to send
   * @throws ReachError `POLICY_VIOLATION` as {@link check}; `PROTO_INVALID_ARGUMENT` for a value a header cannot hold
   */
  prepare(req: HopRequest): HopRequest {
    const used = this.check(req);
    if (used.length === 0 || this.#values === null) return req;
    const url = req.url.replace(PLACEHOLDER, (_m, n: string) => encodeURIComponent(this.#value(n)));
    const headers = req.headers.map(([k, v]): [string, string] => {
      const out = v.replace(PLACEHOLDER, (_m, n: string) => bytesToBinary(utf8.encode(this.#value(n))));
      // eslint-disable-next-line no-control-regex -- refusing control characters is the point
      if (out !== v && /[\u0000\r\n]/.test(out)) {
        throw new ReachError("PROTO_INVALID_ARGUMENT", `http.fetch: header "${k}": a secret's value holds CR, LF or NUL, which a header value cannot hold`, { details: { op: "http.fetch", header: k } });
      }
      return [k, out];
    });
    let body = req.body;
    if (body !== null) {
      const text = bytesToBinary(body);
      const out = text.replace(PLACEHOLDER, (_m, n: string) => bytesToBinary(utf8.encode(this.#value(n))));
      if (out !== text) body = binaryToBytes(out);
    }
    return { url, headers, body };
  }

  #value(name: string): string {
    const v = this.#values?.get(name);
    if (v === undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `no value was given for secret ${name}`, { details: { secret: name, reason: "missing" } });
    return v;
  }

  /**
   * Put the values of the placeholders in a text, for a destination that is not a URL (an MCP server's `env`: the
   * caller decides where the text goes). With `url`, the secrets' hosts must admit it, as for a fetch.
   * @param text text with placeholders
   * @param url where the text is sent, when it is sent over HTTP
   * @returns the text with the values
   * @throws ReachError `POLICY_VIOLATION` for an undeclared name or a URL outside the secret's hosts
   * @example box.substitute("Bearer {{secret:TOKEN}}")
   */
  substitute(text: string, url?: string): string {
    for (const name of placeholderNames(text)) {
      if (url !== undefined) this.#allow(name, url);
      else if (!Object.hasOwn(this.#declared, name)) this.#allow(name, "");
    }
    return text.replace(PLACEHOLDER, (_m, n: string) => this.#value(n));
  }

  /**
   * Replace every value, in every form the module notes list, by its placeholder.
   * @param text a binary string (bytes, header values) or an ASCII text
   * @returns the text without any value (the same string when none was found)
   */
  scrubBinary(text: string): string {
    this.#scrubber ??= new Scrubber(this.#values ?? []);
    return this.#scrubber.scrub(text);
  }

  /**
   * {@link scrubBinary} for a JavaScript string (UTF-16): its UTF-8 bytes are scrubbed.
   * @param text any text
   * @returns the text without any value
   */
  scrubText(text: string): string {
    if (!this.live) return text;
    const bin = bytesToBinary(utf8.encode(text));
    const out = this.scrubBinary(bin);
    return out === bin ? text : new TextDecoder().decode(binaryToBytes(out));
  }

  /**
   * Bytes without any value.
   * @param bytes a body
   * @returns the same array when nothing was found, else the scrubbed bytes
   */
  scrubBytes(bytes: Uint8Array): Uint8Array {
    if (!this.live || bytes.length < MIN_SECRET_BYTES) return bytes;
    const bin = bytesToBinary(bytes);
    const out = this.scrubBinary(bin);
    return out === bin ? bytes : binaryToBytes(out);
  }

  /**
   * An error without any value in its message or details (a fetch implementation's message may quote a header
   * value or the URL it was given).
   * @param err what was thrown
   * @returns the error as a ReachError, scrubbed
   */
  scrubError(err: unknown): ReachError {
    const e = toReachError(err, "EXEC_RESOURCE_UNAVAILABLE");
    if (!this.live) return e;
    const message = this.scrubText(e.message);
    const detailsText = JSON.stringify(e.details);
    const details = this.scrubText(detailsText);
    if (message === e.message && details === detailsText) return e;
    return new ReachError(e.code, message, { details: JSON.parse(details) as Record<string, unknown> });
  }
}

/**
 * Put secret values into a text (an MCP server's `env` value, a command argument): a standalone form of
 * {@link SecretBox.substitute}.
 * @param text text with `{{secret:NAME}}` placeholders
 * @param secrets the run's box
 * @param url where the text is sent over HTTP, if it is: the secrets' hosts must admit it
 * @returns the text with the values
 * @throws ReachError `POLICY_VIOLATION` for an undeclared secret or a URL outside its hosts
 * @example substituteSecrets("{{secret:TOKEN}}", box) // the value
 */
export function substituteSecrets(text: string, secrets: SecretBox, url?: string): string {
  return secrets.substitute(text, url);
}
