/**
 * `reach-wasm` command dispatch: the command-line face of the engine. Runs on Node (built to dist/) and on Deno (from src/).
 * Exit codes (ARCHITECTURE.md): 0 success; 1 run failed / replay diverged / verification failed; 2 bad invocation.
 * Human-readable output goes to stderr except `--help` and `--version`; `--json` prints one object on stdout.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { COMMANDS, findCommand } from "./commands.ts";
import { helpText as commandHelp } from "./help.ts";
import { VERSION } from "./version.ts";
import type { CliIO } from "./io.ts";
import { safeIO } from "./safe-output.ts";
import { redactSecrets } from "../platform/redact.ts";

type Handler = (argv: readonly string[], io: CliIO) => Promise<number>;

/**
 * The commands that are built, with their handlers (the others say "not built yet" and exit 2). Each command's
 * module is imported only when it runs, so that `reach-wasm run` does not load what `verify` needs and the other way round.
 */
const HANDLERS: Readonly<Record<string, () => Promise<Handler>>> = {
  conformance: async () => (await import("./conformance.ts")).runConformanceCommand,
  delegate: async () => (await import("./delegate.ts")).runDelegateCommand,
  diff: async () => (await import("./diff.ts")).runDiffCommand,
  doctor: async () => (await import("./doctor.ts")).runDoctorCommand,
  export: async () => (await import("./export.ts")).runExportCommand,
  fork: async () => (await import("./fork.ts")).runForkCommand,
  keygen: async () => (await import("./keygen.ts")).runKeygenCommand,
  approve: async () => (await import("./approve.ts")).runApproveCommand,
  attest: async () => (await import("./attest.ts")).runAttestCommand,
  trust: async () => (await import("./trust.ts")).runTrustCommand,
  mcp: async () => (await import("./mcp.ts")).runMcpCommand,
  node: async () => (await import("./node.ts")).runNodeCommand,
  pack: async () => (await import("./pack.ts")).runPackCommand,
  plan: async () => (await import("./plan.ts")).runPlanCommand,
  redact: async () => (await import("./redact.ts")).runRedactCommand,
  replay: async () => (await import("./capsule-commands.ts")).runReplayCommand,
  report: async () => (await import("./report.ts")).runReportCommand,
  resume: async () => (await import("./fork.ts")).runResumeCommand,
  revoke: async () => (await import("./delegate.ts")).runRevokeCommand,
  run: async () => (await import("./run.ts")).runRunCommand,
  "run --on": async () => (await import("./delegated-run.ts")).runDelegatedRunCommand,
  runs: async () => (await import("./runs.ts")).runRunsCommand,
  serve: async () => (await import("./serve.ts")).runServeCommand,
  submit: async () => (await import("./submit.ts")).runSubmitCommand,
  tokens: async () => (await import("./tokens.ts")).runTokensCommand,
  show: async () => (await import("./show.ts")).runShowCommand,
  verify: async () => (await import("./capsule-commands.ts")).runVerifyCommand,
  wasi: async () => (await import("./wasi.ts")).runWasiCommand,
  worker: async () => (await import("./worker.ts")).runWorkerCommand,
};

/**
 * Whether a command is built.
 * @param name the command name
 * @returns true when `reach-wasm <name>` does something
 * @example isBuilt("wasi") // true
 */
export function isBuilt(name: string): boolean {
  return Object.hasOwn(HANDLERS, name);
}

export type { CliIO } from "./io.ts";

function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = [
    `reach-wasm ${VERSION} — run agentic tool calls so that they can be trusted afterwards (Reach Protocol v1.0.0)`,
    "",
    "Usage: reach-wasm <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => {
      const state = isBuilt(c.name) ? "" : c.pendingIssue ? `  [not built yet: issue #${c.pendingIssue}]` : "  [not built yet]";
      return `  ${c.name.padEnd(width)}  ${c.summary}${state}`;
    }),
    "",
    "Options:",
    "  -h, --help     show this help, or a command's usage with `reach-wasm <command> --help`",
    "  -V, --version  print the version",
    "  -q, --quiet    no progress on stderr, before or after the command (errors still print)",
    "",
    "Exit codes: 0 success, 1 run failed / replay diverged / verification failed, 2 bad invocation or invalid input.",
  ];
  return lines.join("\n") + "\n";
}

/**
 * Write a ReachError the way every command does: message on stderr, and with --json one object on stdout, the upstream
 * error document (`error.schema.json`: `{specVersion, error: {code, message, details, category, severity, …}}`).
 * Both are escaped for the terminal (`io` is `safeIO`'s) and lose any connection credentials (a message may quote a
 * `--db` URL or a driver's error).
 */
function report(io: CliIO, err: ReachError, json: boolean): void {
  if (json) io.stdout(redactSecrets(JSON.stringify(err.toJSON())) + "\n");
  io.stderr(`reach-wasm: ${err.code}: ${err.message}\n`);
}

/**
 * Run the CLI with the given arguments.
 * @param argv arguments after the program name
 * @param io output streams
 * @returns the process exit code
 * @example process.exitCode = await main(process.argv.slice(2), io);
 */
export async function main(argv: readonly string[], given: CliIO): Promise<number> {
  // every command writes through the escaping streams (`safe-output.ts`): what a tool, a server or a peer says never
  // reaches the terminal as control characters, and stderr never shows a connection credential
  const io = safeIO(given);
  // an error goes out as a JSON document when --json is asked for, also when it is misspelt `--json=…` (the error)
  const end = argv.indexOf("--");
  const json = (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "--json" || a.startsWith("--json="));
  // `reach-wasm --quiet <command> …` is `reach-wasm <command> --quiet …`
  if ((argv[0] === "--quiet" || argv[0] === "-q") && argv.length > 1) return await main([argv[1]!, "--quiet", ...argv.slice(2)], io);
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    io.stdout(helpText());
    return first === undefined ? 2 : 0;
  }
  if (first === "-V" || first === "--version") {
    io.stdout(`reach-wasm ${VERSION}\n`);
    return 0;
  }
  const command = findCommand(first);
  if (!command) {
    report(io, new ReachError("PROTO_INVALID_ARGUMENT", `unknown command "${first}"; run \`reach-wasm --help\` for the list`), json);
    return 2;
  }
  const dashdash = rest.indexOf("--");
  const own = dashdash < 0 ? rest : rest.slice(0, dashdash);
  if (own.includes("-h") || own.includes("--help")) {
    io.stdout(commandHelp(command));
    return 0;
  }
  // `run --on NODE` is the delegated form of run: its own command module (no command module imports another).
  const name = command.name === "run" && own.some((a) => a === "--on" || a.startsWith("--on=")) ? "run --on" : command.name;
  const load = Object.hasOwn(HANDLERS, name) ? HANDLERS[name] : undefined;
  if (load !== undefined) {
    const quiet = own.includes("--quiet") || own.includes("-q");
    const args = quiet ? [...own.filter((a) => a !== "--quiet" && a !== "-q"), ...(dashdash < 0 ? [] : rest.slice(dashdash))] : rest;
    try {
      return await (await load())(args, quiet ? { ...io, quiet: true } : io);
    } catch (err) {
      if (err instanceof ReachError) {
        report(io, err, json);
        return 2;
      }
      // A bug of ours, never the user's input: one line, no stack trace (REACH_WASM_DEBUG=1 prints it).
      report(io, new ReachError("EXEC_RESOURCE_UNAVAILABLE", `reach-wasm failed unexpectedly (${err instanceof Error ? err.message : String(err)}); this is a bug — please report it with the command you ran`, { cause: err }), json);
      return 1;
    }
  }
  const where = command.pendingIssue ? ` (tracked in issue #${command.pendingIssue})` : "";
  report(
    io,
    new ReachError("PROTO_INVALID_ARGUMENT", `"${command.name}" is not built yet in reach-wasm ${VERSION}${where}; nothing was done`),
    json,
  );
  return 2;
}
