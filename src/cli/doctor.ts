/**
 * `reach-wasm doctor [--json | --env]`: which toolchains for building tools are present on this machine (with
 * versions), and the exact commands that install the missing ones (`src/platform/toolchains.ts` probes each by
 * building something small). `--env` prints `export` lines for the templates' build.sh
 * (`eval "$(reach-wasm doctor --env)"`). Exit 0 whatever is missing; 2 only for a bad invocation.
 * @module
 */
import { parseCommand, usageError } from "./options.ts";
import { DOCTOR } from "./specs-federation.ts";
import { probeToolchains } from "../platform/toolchains.ts";
import type { Toolchain } from "../platform/toolchains.ts";
import type { CliIO } from "./io.ts";


/** A value quoted for a POSIX shell. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function report(toolchains: readonly Toolchain[]): string {
  const width = Math.max(...toolchains.map((t) => t.name.length));
  const lines = ["Toolchains for `reach-wasm pack init --template NAME` (each probed by building something small):", ""];
  for (const t of toolchains) {
    lines.push(`  ${t.name.padEnd(width)}  ${t.present ? "ok     " : "MISSING"}  ${t.title}${t.version === null ? "" : ` — ${t.version}`}`);
    if (!t.present) {
      if (t.problem !== null) lines.push(`  ${" ".repeat(width)}           ${t.problem}`);
      for (const cmd of t.install) lines.push(`  ${" ".repeat(width)}           install: ${cmd}`);
    }
  }
  const exports = Object.entries(Object.assign({}, ...toolchains.map((t) => t.env)) as Record<string, string>);
  if (exports.length > 0) lines.push("", "The templates' build.sh use these (eval \"$(reach-wasm doctor --env)\" sets them):", ...exports.map(([k, v]) => `  ${k}=${shellQuote(v)}`));
  const missing = toolchains.filter((t) => !t.present).map((t) => t.name);
  lines.push("", missing.length === 0 ? "Every template can be built here." : `Templates that cannot be rebuilt here: ${missing.join(", ")} (their prebuilt tools still run).`);
  return lines.join("\n") + "\n";
}

/**
 * The `doctor` command.
 * @param argv arguments after `doctor`
 * @param io output streams
 * @returns 0
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an unknown argument
 * @example process.exitCode = await runDoctorCommand(["--json"], io);
 */
export async function runDoctorCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommand(DOCTOR, argv);
  if (values.json && values.env) throw usageError(DOCTOR, "--json and --env exclude each other");
  const toolchains = await probeToolchains();
  if (values.json) {
    io.stdout(JSON.stringify({ ok: toolchains.every((t) => t.present), toolchains }) + "\n");
  } else if (values.env) {
    const exports = Object.entries(Object.assign({}, ...toolchains.map((t) => t.env)) as Record<string, string>);
    io.stdout(exports.map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join(""));
  } else {
    io.stderr(report(toolchains));
  }
  return 0;
}
