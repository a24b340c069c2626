/**
 * The declarations of `reach-wasm export` (standard formats of a run: `export otel`) and of `--otlp-endpoint`, the
 * live OpenTelemetry export that `run`, `mcp`, `serve` and `worker` take: parsed by `options.ts`, their help written
 * by `help.ts`.
 * @module
 */
import { ArgError, defineArgs } from "./options.ts";

/**
 * A validator: an http(s) URL without credentials (an OTLP/HTTP traces endpoint).
 * @param text the value
 * @returns the URL's text as given
 * @throws ArgError otherwise
 */
export function otlpUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ArgError("expects an http:// or https:// URL (e.g. http://localhost:4318/v1/traces)");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ArgError("expects an http:// or https:// URL (e.g. http://localhost:4318/v1/traces)");
  if (url.username !== "" || url.password !== "") throw new ArgError("must not hold credentials (user:password@)");
  return text;
}

/** `--otlp-endpoint URL`, as `run`, `mcp`, `serve` and `worker` declare it. */
export const OTLP_ENDPOINT = {
  "otlp-endpoint": {
    type: "string",
    value: "URL",
    parse: otlpUrl,
    help: "send each run's trace to this OTLP/HTTP endpoint (e.g. http://localhost:4318/v1/traces) as it\nends, through the OpenTelemetry SDK; never recorded, and a failed export is only a warning",
  },
} as const;

/** `reach-wasm export otel`. */
export const EXPORT_OTEL = defineArgs({
  name: "export otel",
  summary: "a run as OpenTelemetry traces (OTLP/JSON): spans for the run, its steps, tool and MCP calls",
  positionals: ["<capsule|run-dir>"],
  options: {
    out: { type: "string", value: "FILE", help: "write the OTLP/JSON document here (default: stdout)" },
    json: { type: "boolean", help: "print one JSON object on stdout: the OTLP/JSON document, or with --out {out, spans, traceId}" },
  },
});

/** The subcommands of `export`. */
export const EXPORT_SUBCOMMANDS = [EXPORT_OTEL] as const;
