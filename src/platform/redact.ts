/**
 * Credentials out of text, in one place: every message and log line that may hold a database URL (`--db`,
 * `$REACH_WASM_DB`) or any other connection string goes through {@link redactSecrets} — the store's own errors
 * (`postgres.ts`), the CLI's stderr and error documents (`src/cli/safe-output.ts`), the service's and workers' logs.
 *
 * What is redacted (each value becomes `***`):
 * - the password of a URL's user information (`scheme://user:password@host`), whatever the scheme (`postgres://`,
 *   `postgresql://`, `https://`, …), percent-encoded or not, even when it holds an unencoded `@` or `/`;
 * - the value of every query parameter whose name (percent-decoded) contains `pass`, `pwd`, `secret`, `token`, `key`,
 *   `auth` or `credential` (`?password=`, `?sslpassword=`, `?sslkey=`, `?api_token=`, …), socket-style URLs
 *   (`postgresql:///db?host=/run/postgresql&password=…`) included;
 * - libpq `key=value` connection strings and JSON fields: `password=…`, `sslpassword='…'`, `"password": "…"`.
 * Pure string work (no runtime import); the user name and host stay, so a message still says where it tried.
 * @module
 */

/** Query parameter names whose values are secrets. */
const SECRET_PARAM = /pass|pwd|secret|token|key|auth|credential/i;

/** A URL's start: `scheme://`. */
const URL_START = /\b[a-z][a-z0-9+.-]*:\/\//gi;

/** Where a URL ends in running text: white space, `<>`, a backtick, or a quote that is not escaped (JSON). */
const URL_END = /[\s<>`]|(?<!\\)["']/;

/** `name=value` in a libpq connection string (value quoted with `'…'` or bare), for password-like names. */
const CONNINFO = /\b([\w.-]*(?:pass(?:word|wd)?|pwd|secret))(\s*=\s*)('(?:[^'\\]|\\.)*'?|(?:[^\s'"&\\]|\\(?!"))+)/gi;

/** `"password": "…"` in JSON text, and `\"password\": \"…\"` in JSON text inside a JSON string. */
const JSON_FIELD = /("[\w.-]*(?:pass(?:word|wd)?|pwd|secret)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
const JSON_FIELD_ESCAPED = /(\\"[\w.-]*(?:pass(?:word|wd)?|pwd|secret)\\"\s*:\s*)\\"(?:(?!\\")[^\n])*\\"/gi;

function decoded(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
}

/** Redact a query string (without its `?`): the values of secret-named parameters. */
function redactQuery(query: string): string {
  return query
    .split(/([&;])/)
    .map((part) => {
      const eq = part.indexOf("=");
      if (eq < 0) return part;
      // a JSON-escaped quote (\") ends the value: what follows is not the URL's
      const end = part.indexOf("\\", eq);
      return SECRET_PARAM.test(decoded(part.slice(0, eq))) ? `${part.slice(0, eq)}=***${end < 0 ? "" : part.slice(end)}` : part;
    })
    .join("");
}

/** Redact one URL (from its `scheme://` to where it ends). */
function redactUrlText(url: string): string {
  const start = url.indexOf("://") + 3;
  const q = url.search(/[?#]/);
  const beforeQuery = q < 0 ? url : url.slice(0, q);
  // user information ends at the last "@" before the query (a password may hold an unencoded "@" or "/")
  const at = beforeQuery.lastIndexOf("@");
  let out = url;
  if (at >= start) {
    const info = url.slice(start, at);
    const colon = info.indexOf(":");
    if (colon >= 0) out = `${url.slice(0, start)}${info.slice(0, colon)}:***${url.slice(at)}`;
  }
  const q2 = out.search(/\?/);
  if (q2 < 0) return out;
  const hash = out.indexOf("#", q2);
  const query = hash < 0 ? out.slice(q2 + 1) : out.slice(q2 + 1, hash);
  return `${out.slice(0, q2 + 1)}${redactQuery(query)}${hash < 0 ? "" : out.slice(hash)}`;
}

/**
 * Redact every credential of every connection URL and connection string in a text.
 * @param text a message or log line
 * @returns the text with each password, secret query parameter and `password=` value as `***`
 * @example redactSecrets("cannot connect to postgres://app:s3cret@db:5432/runs?sslpassword=k") // "cannot connect to postgres://app:***@db:5432/runs?sslpassword=***"
 */
export function redactSecrets(text: string): string {
  let out = text;
  if (out.includes("://")) {
    let result = "";
    let last = 0;
    URL_START.lastIndex = 0;
    for (let m = URL_START.exec(out); m !== null; m = URL_START.exec(out)) {
      const rest = out.slice(m.index);
      const endAt = rest.search(URL_END);
      const url = endAt < 0 ? rest : rest.slice(0, endAt);
      result += out.slice(last, m.index) + redactUrlText(url);
      last = m.index + url.length;
      URL_START.lastIndex = last;
    }
    out = result + out.slice(last);
  }
  if (/pass|pwd|secret/i.test(out)) {
    out = out.replace(CONNINFO, (_m, name: string, eq: string) => `${name}${eq}***`).replace(JSON_FIELD, (_m, head: string) => `${head}"***"`)
      .replace(JSON_FIELD_ESCAPED, (_m, head: string) => `${head}\\"***\\"`);
  }
  return out;
}

/**
 * A connection URL without its credentials, for messages.
 * @param url a connection URL
 * @returns the URL with `***` for the password and for secret query parameters
 * @example redactUrl("postgres://u:secret@h/db?password=x") // "postgres://u:***@h/db?password=***"
 */
export function redactUrl(url: string): string {
  return redactSecrets(url);
}
