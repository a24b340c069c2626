/**
 * Parsing at trust boundaries: zod validation that fails with a `ReachError` whose message lists every problem
 * with its path (CONVENTIONS "Validation", "Errors").
 * @module
 */
import type { z } from "zod";
import { ReachError } from "./errors.ts";
import type { ErrorCode } from "./errors.ts";

/**
 * Validate `value` with `schema`, or throw a `ReachError` that says what is wrong and where.
 * @param schema the zod schema
 * @param value the untrusted value (parsed JSON)
 * @param code the error code to throw with, e.g. `PACK_INVALID_MANIFEST`
 * @param what what the value is, for the message, e.g. `reach.json`
 * @returns the parsed value (defaults filled in)
 * @throws ReachError with `code`, and `details.issues` listing `{path, message}` for each problem
 * @example const pack = parseOrThrow(PackSchema, JSON.parse(text), "PACK_INVALID_MANIFEST", "reach.json");
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, code: ErrorCode, what: string): z.output<S> {
  // Without zod's JIT: it generates and compiles a parser per object schema on first use (`new Function`, which no
  // code cache keeps): ~5 ms of a short CLI run's start-up, and only microseconds per document after that.
  const result = schema.safeParse(value, { jitless: true });
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({ path: formatPath(i.path), message: issueMessage(i) }));
  const lines = issues.map((i) => (i.path === "" ? `- ${i.message}` : `- at ${i.path}: ${i.message}`));
  throw new ReachError(code, `${what} is invalid:\n${lines.join("\n")}`, { details: { issues } });
}

/**
 * A zod issue's message for people: an absent required member says it is missing (zod's own is "expected string,
 * received undefined"), a refused record key says which name and what a name must be (zod's: "Invalid key in record").
 * @param issue the issue
 * @returns the message
 * @example issueMessage(PackSchema().safeParse(doc).error!.issues[0]!)
 */
export function issueMessage(issue: z.core.$ZodIssue): string {
  // a required member that is absent: zod says "expected string, received undefined"
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) return `missing: add it (expected ${issue.expected})`;
  if (issue.code !== "invalid_key" || issue.issues.length === 0) return issue.message;
  const key = issue.path[issue.path.length - 1];
  return `the name ${JSON.stringify(String(key))} is not allowed: ${issue.issues.map((i) => i.message).join("; ")}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "string" && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}
