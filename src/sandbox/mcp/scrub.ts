/**
 * Taking host values out of what an MCP server answers: each value (a stdio server's scratch path, a secret's
 * value) becomes its placeholder (`{{scratch}}`, `{{secret:NAME}}`) in every string and key of the answer, before
 * the tool, the tape, the events or any output see it. Longer values are replaced first (a value that contains
 * another is not left half-replaced).
 * @module
 */

/** Values and the placeholders that replace them. */
export type Scrub = readonly { readonly value: string; readonly placeholder: string }[];

/**
 * A scrub, longest value first; values shorter than 4 characters are left out (replacing them would corrupt
 * unrelated text).
 * @param pairs value → placeholder
 * @returns the scrub
 * @example makeScrub([["/tmp/reach-mcp-x1", "{{scratch}}"]])
 */
export function makeScrub(pairs: Iterable<readonly [string, string]>): Scrub {
  return [...pairs].filter(([v]) => v.length >= 4).sort((a, b) => b[0].length - a[0].length).map(([value, placeholder]) => ({ value, placeholder }));
}

function scrubText(text: string, scrub: Scrub): string {
  let out = text;
  for (const { value, placeholder } of scrub) if (out.includes(value)) out = out.split(value).join(placeholder);
  return out;
}

/**
 * A copy of a JSON value with every string (and object key) scrubbed.
 * @param value a JSON value
 * @param scrub what to replace
 * @returns the scrubbed copy (the value itself when the scrub is empty)
 * @example scrubJson({ path: "/tmp/reach-mcp-x1/a" }, scrub) // { path: "{{scratch}}/a" }
 */
export function scrubJson(value: unknown, scrub: Scrub): unknown {
  if (scrub.length === 0) return value;
  if (typeof value === "string") return scrubText(value, scrub);
  if (Array.isArray(value)) return value.map((v) => scrubJson(v, scrub));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubText(k, scrub), scrubJson(v, scrub)]));
}
