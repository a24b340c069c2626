/**
 * The values of secrets a caller supplies (`secrets.ts`): checked against what the pack declares before a run uses
 * them. Values shorter than {@link MIN_SECRET_BYTES} are refused: the host replaces a value everywhere it comes back,
 * and replacing a short string everywhere corrupts data. Messages never hold a value.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import type { SecretDeclarations } from "../../protocol/mod.ts";

/** Shortest value accepted, in UTF-8 bytes. */
export const MIN_SECRET_BYTES = 8;
/** Longest value accepted, in UTF-8 bytes. */
export const MAX_SECRET_BYTES = 64 * 1024;

/** Secret values by name, as the caller supplies them (never recorded). */
export type SecretValues = Readonly<Record<string, string>>;

const utf8 = new TextEncoder();

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
