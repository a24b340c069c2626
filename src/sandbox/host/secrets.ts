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
 * @module
 */
import { checkUrlAllowed } from "../../policy/mod.ts";
import { policyViolation, ReachError, toReachError } from "../../protocol/mod.ts";
import { SECRET_NAME_RE } from "../../protocol/mod.ts";
import type { SecretDeclarations } from "../../protocol/mod.ts";

/** Shortest value accepted, in UTF-8 bytes. */
export const MIN_SECRET_BYTES = 8;
/** Longest value accepted, in UTF-8 bytes. */
export const MAX_SECRET_BYTES = 64 * 1024;

/** Secret values by name, as the caller supplies them (never recorded). */
export type SecretValues = Readonly<Record<string, string>>;

/** What crosses to another thread: the declarations and, in a live run, the values. */
export type SecretSpec = { readonly declared: SecretDeclarations; readonly values: SecretValues | null };

/** Placeholders in text: `{{secret:NAME}}`, also as the URL parser writes it in a path (`%7B%7B…%7D%7D`). */
const PLACEHOLDER = /(?:\{\{|%7[Bb]%7[Bb])secret:([A-Za-z_][A-Za-z0-9_]{0,63})(?:\}\}|%7[Dd]%7[Dd])/g;
const utf8 = new TextEncoder();

/**
 * The placeholder a tool writes for a secret.
 * @param name the secret's name
 * @returns `{{secret:NAME}}`
 * @example secretPlaceholder("API_TOKEN") // "{{secret:API_TOKEN}}"
 */
export function secretPlaceholder(name: string): string {
  return `{{secret:${name}}}`;
}

/**
 * Bytes as a binary string (one character per byte).
 * @param bytes the bytes
 * @returns the string
 */
export function bytesToBinary(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

/**
 * A binary string as bytes.
 * @param text one character per byte (0–255)
 * @returns the bytes
 */
export function binaryToBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}

/**
 * The names a text's placeholders name, in order of first appearance.
 * @param text a URL, header value or body (binary string)
 * @returns the names
 * @example placeholderNames("Bearer {{secret:TOKEN}}") // ["TOKEN"]
 */
export function placeholderNames(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

const hex = (b: Uint8Array): string => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

function base64(bin: string): string {
  return btoa(bin);
}

/** The base64 characters of `value` that do not depend on the bytes around it, at each of the three alignments. */
function base64Cores(bin: string): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const text = base64("\0".repeat(k) + bin);
    const startBit = 8 * k;
    const endBit = 8 * (k + bin.length);
    const first = Math.ceil(startBit / 6);
    const last = Math.floor(endBit / 6); // exclusive: characters wholly inside the value's bits
    out.push(text.slice(first, last));
  }
  return out;
}

/** A base64 core and the alphabet of the word around it (its edge characters carry bits of the value). */
type Base64Word = { core: string; alphabet: RegExp };
const STD = /[A-Za-z0-9+/]/;
const URL_SAFE = /[A-Za-z0-9_-]/;

/** The base64 words holding a value (standard and URL-safe alphabets, each alignment). */
function base64WordsOf(value: string): Base64Word[] {
  const out: Base64Word[] = [];
  for (const core of base64Cores(bytesToBinary(utf8.encode(value)))) {
    out.push({ core, alphabet: STD });
    out.push({ core: core.replace(/\+/g, "-").replace(/\//g, "_"), alphabet: URL_SAFE });
  }
  return out;
}

/**
 * Replace every whole base64 word holding `core` (the core found literally, then widened over the word's alphabet
 * and its `=` padding): linear in the text, whatever it holds.
 */
function replaceWords(text: string, word: Base64Word, placeholder: string): string {
  let at = text.indexOf(word.core);
  if (at < 0) return text;
  let out = "";
  let done = 0;
  while (at >= 0) {
    let start = at;
    while (start > done && word.alphabet.test(text[start - 1]!)) start--;
    let end = at + word.core.length;
    while (end < text.length && word.alphabet.test(text[end]!)) end++;
    while (end < text.length && text[end] === "=") end++;
    out += text.slice(done, start) + placeholder;
    done = end;
    at = text.indexOf(word.core, end);
  }
  return out + text.slice(done);
}

/** Every literal form of a value the box replaces (binary strings), longest first. */
function formsOf(value: string): string[] {
  const bytes = utf8.encode(value);
  const bin = bytesToBinary(bytes);
  const json = JSON.stringify(value).slice(1, -1);
  const asciiJson = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const pct = encodeURIComponent(value);
  const forms = new Set<string>([
    bin,
    bytesToBinary(utf8.encode(json)),
    asciiJson,
    pct,
    pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    pct.replace(/%20/g, "+"),
    encodeURI(value),
    hex(bytes),
    hex(bytes).toUpperCase(),
  ]);
  return [...forms].filter((f) => f.length >= MIN_SECRET_BYTES).sort((a, b) => b.length - a.length);
}

/**
 * Check the values a caller supplies against what the pack declares: every declared secret has a value, every value
 * is declared, between {@link MIN_SECRET_BYTES} and {@link MAX_SECRET_BYTES} bytes. Messages never hold a value.
 * @param declared the pack's `secrets`
 * @param values the caller's values
 * @throws ReachError `PROTO_INVALID_ARGUMENT` naming the secret and how to supply it
 * @example checkSecretValues({ TOKEN: { hosts: ["api.example.com"] } }, { TOKEN: process.env.TOKEN })
 */
export function checkSecretValues(declared: SecretDeclarations, values: SecretValues | undefined): void {
  const given = values ?? {};
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", '"secrets" expected an object of secret values by name');
  }
  for (const [name, value] of Object.entries(given)) {
    if (!Object.hasOwn(declared, name)) {
      const names = Object.keys(declared);
      throw new ReachError("PROTO_INVALID_ARGUMENT", `a value was given for secret ${JSON.stringify(name.slice(0, 64))}, which the pack does not declare` +
        (names.length === 0 ? "; this pack declares no secrets" : `; it declares ${names.join(", ")}`), { details: { secret: name.slice(0, 64), reason: "undeclared" } });
    }
    if (typeof value !== "string") throw new ReachError("PROTO_INVALID_ARGUMENT", `secret ${name}: the value must be a string`, { details: { secret: name, reason: "type" } });
    const n = utf8.encode(value).length;
    if (n < MIN_SECRET_BYTES) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `secret ${name}: the value is ${n} bytes; a secret must be at least ${MIN_SECRET_BYTES} bytes, ` +
        "because the host replaces the value everywhere it comes back and replacing a short string would corrupt unrelated data", { details: { secret: name, reason: "short", min: MIN_SECRET_BYTES } });
    }
    if (n > MAX_SECRET_BYTES) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `secret ${name}: the value is ${n} bytes, over the limit of ${MAX_SECRET_BYTES}`, { details: { secret: name, reason: "long", max: MAX_SECRET_BYTES } });
    }
  }
  const missing = Object.keys(declared).filter((name) => !Object.hasOwn(given, name));
  if (missing.length > 0) {
    const first = missing[0]!;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `the pack needs secret${missing.length === 1 ? "" : "s"} ${missing.join(", ")} and no value was given; ` +
      `pass --secret ${first} (reads the environment variable ${first}), --secret ${first}=env:VAR or --secret ${first}=file:PATH ` +
      `(the library: the request's "secrets")`, { details: { secrets: missing, reason: "missing" } });
  }
}

/** A request of one hop, as the host would send it. */
export type HopRequest = { url: string; headers: [string, string][]; body: Uint8Array | null };

/**
 * A run's secrets: what the pack declares and (live) the values. Replay holds the declarations only: the checks run
 * the same, nothing is substituted.
 */
export class SecretBox {
  readonly #declared: SecretDeclarations;
  readonly #values: ReadonlyMap<string, string> | null;
  #forms: { form: string; placeholder: string }[] | null = null;
  #words: { word: Base64Word; placeholder: string }[] | null = null;

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

  #allForms(): { form: string; placeholder: string }[] {
    if (this.#forms !== null) return this.#forms;
    const all: { form: string; placeholder: string }[] = [];
    for (const [name, value] of this.#values ?? []) for (const form of formsOf(value)) all.push({ form, placeholder: secretPlaceholder(name) });
    all.sort((a, b) => b.form.length - a.form.length);
    return (this.#forms = all);
  }

  /**
   * Replace every value, in every form the module notes list, by its placeholder.
   * @param text a binary string (bytes, header values) or an ASCII text
   * @returns the text without any value (the same string when none was found)
   */
  scrubBinary(text: string): string {
    let out = text;
    this.#words ??= [...(this.#values ?? [])].flatMap(([name, value]) => base64WordsOf(value).map((word) => ({ word, placeholder: secretPlaceholder(name) })));
    for (const { word, placeholder } of this.#words) out = replaceWords(out, word, placeholder);
    for (const { form, placeholder } of this.#allForms()) if (out.includes(form)) out = out.split(form).join(placeholder);
    return out;
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

/**
 * Whether a name is a valid secret name.
 * @param name a name
 * @returns true for `[A-Za-z_][A-Za-z0-9_]{0,63}`
 */
export function isSecretName(name: string): boolean {
  return SECRET_NAME_RE.test(name);
}
