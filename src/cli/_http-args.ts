/**
 * The options every HTTP face's command shares (`serve`, `node serve`, `mcp --http`): which `Host` names and which
 * web page origins the server answers besides its own address (`src/platform/http-guard.ts`). Not a command itself.
 * @module
 */
import { parseAllowedHost, parseAllowedOrigin } from "../platform/http-guard.ts";
import { ReachError } from "../protocol/errors.ts";

/** The usage fragment of the shared options. */
export const HTTP_GUARD_USAGE = "[--allowed-host LIST] [--allowed-origin LIST]";

function list(text: string | undefined): string[] {
  return text === undefined ? [] : text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

function checked(values: string[], parse: (text: string) => string, usage: string): string[] {
  return values.map((v) => {
    try {
      return parse(v);
    } catch (err) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `${(err as Error).message}; usage: ${usage}`);
    }
  });
}

/**
 * The allowed hosts and origins of a command line.
 * @param hosts the `--allowed-host` value(s), comma-separated (undefined: none)
 * @param origins the `--allowed-origin` value(s), comma-separated (undefined: none)
 * @param usage the command's usage line, for errors
 * @returns the checked lists, for `serveHttp`
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a malformed entry
 * @example allowedOf("runs.example.com", undefined, USAGE) // { allowedHosts: ["runs.example.com"], allowedOrigins: [] }
 */
export function allowedOf(hosts: string | undefined, origins: string | undefined, usage: string): { allowedHosts: string[]; allowedOrigins: string[] } {
  return { allowedHosts: checked(list(hosts), parseAllowedHost, usage), allowedOrigins: checked(list(origins), parseAllowedOrigin, usage) };
}
