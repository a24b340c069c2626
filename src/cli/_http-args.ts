/**
 * The options every HTTP face's command shares (`serve`, `node serve`, `mcp --http`; declared as `HTTP_GUARD` in
 * `specs-pack.ts`): which `Host` names and which web page origins the server answers besides its own address
 * (`src/platform/http-guard.ts`). Not a command itself.
 * @module
 */
import { parseAllowedHost, parseAllowedOrigin } from "../platform/http-guard.ts";
import { usageError } from "./options.ts";
import type { ArgsSpec } from "./options.ts";

function list(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s !== "");
}

function checked(values: string[], parse: (text: string) => string, spec: ArgsSpec): string[] {
  return values.map((v) => {
    try {
      return parse(v);
    } catch (err) {
      throw usageError(spec, (err as Error).message);
    }
  });
}

/**
 * The allowed hosts and origins of a command line.
 * @param spec the command's declaration, for errors
 * @param hosts the `--allowed-host` values, each comma-separated (given twice, the lists join)
 * @param origins the `--allowed-origin` values, each comma-separated
 * @returns the checked lists, for `serveHttp`
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a malformed entry
 * @example allowedOf(SERVE, ["runs.example.com"], []) // { allowedHosts: ["runs.example.com"], allowedOrigins: [] }
 */
export function allowedOf(spec: ArgsSpec, hosts: readonly string[], origins: readonly string[]): { allowedHosts: string[]; allowedOrigins: string[] } {
  return { allowedHosts: checked(list(hosts), parseAllowedHost, spec), allowedOrigins: checked(list(origins), parseAllowedOrigin, spec) };
}
