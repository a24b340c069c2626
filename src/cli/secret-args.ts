/**
 * `--secret` of `run`, `mcp` and `submit`: where a declared secret's value comes from, never the command line
 * (docs/authoring.md "Secrets"). `--secret NAME` reads the environment variable NAME, `--secret NAME=env:VAR` the
 * variable VAR, `--secret NAME=file:PATH` the file PATH (`readSecretFile`: no link, a regular file, one trailing
 * newline stripped). The values go to the engine in memory; nothing here prints or writes them.
 * @module
 */
import process from "node:process";
import { readSecretFile } from "../platform/secret-file.ts";
import { SECRET_NAME_RE } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { ArgError } from "./options.ts";

/** Where one secret's value comes from. */
export type SecretSource = { name: string; from: { env: string } | { file: string } };

/**
 * Parse one `--secret` value (its syntax only; nothing is read yet).
 * @param text `NAME`, `NAME=env:VAR` or `NAME=file:PATH`
 * @returns the source
 * @throws ArgError for a bad name; ReachError for a value written on the command line (never quoted back)
 */
function parseSecretSource(text: string): SecretSource {
  const eq = text.indexOf("=");
  const name = eq < 0 ? text : text.slice(0, eq);
  if (!SECRET_NAME_RE.test(name)) throw new ArgError("expects NAME, NAME=env:VAR or NAME=file:PATH with NAME letters, digits and _");
  if (eq < 0) return { name, from: { env: name } };
  const where = text.slice(eq + 1);
  if (where.startsWith("env:") && SECRET_NAME_RE.test(where.slice(4))) return { name, from: { env: where.slice(4) } };
  if (where.startsWith("file:") && where.length > 5) return { name, from: { file: where.slice(5) } };
  // a ReachError, not an ArgError: the parser would quote the argument, and what follows "=" may be the value itself
  throw new ReachError("PROTO_INVALID_ARGUMENT", `expects ${name}, ${name}=env:VAR or ${name}=file:PATH; a value never goes on the command line (others can read it there)`);
}

/** The `--secret` option, as `run`, `mcp` and `submit` declare it. */
export const SECRET_OPTION = {
  type: "string",
  value: "NAME[=env:VAR|file:PATH]",
  multiple: true,
  help: "a secret the pack declares: from the environment variable NAME (or VAR), or from the file\nPATH (one trailing newline stripped); tools see only {{secret:NAME}}, and the value is never recorded",
  parse: parseSecretSource,
} as const;

/**
 * Read the values of `--secret` options.
 * @param sources the parsed options
 * @param command the command, for messages
 * @returns the values by name (never printed)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a name given twice, an unset variable or an unreadable file
 * @example const secrets = readSecrets(args.secrets, "run");
 */
export function readSecrets(sources: readonly SecretSource[], command: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of sources) {
    if (Object.hasOwn(out, s.name)) throw new ReachError("PROTO_INVALID_ARGUMENT", `${command}: --secret ${s.name} is given twice; give each secret once`);
    if ("env" in s.from) {
      const v = process.env[s.from.env];
      if (v === undefined || v === "") {
        throw new ReachError("PROTO_INVALID_ARGUMENT", `${command}: --secret ${s.name}: the environment variable ${s.from.env} is not set; ` +
          `export it, or pass --secret ${s.name}=file:PATH`, { details: { secret: s.name, reason: "unset" } });
      }
      out[s.name] = v;
    } else {
      out[s.name] = readSecretFile(s.from.file, `${command}: --secret ${s.name}=file:…`);
    }
  }
  return out;
}
