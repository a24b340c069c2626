#!/usr/bin/env node
/**
 * Entry point of the `reach-wasm` binary (Node: dist/cli/main.js; Deno: `deno task cli`).
 * @module
 */
import process from "node:process";
import { stdioWriter } from "../platform/terminal.ts";
import { main } from "./cli.ts";
import { detectTerminal } from "./progress.ts";
import { redactSecrets } from "../platform/redact.ts";
import { terminalSafe } from "./safe-output.ts";
import { signalAt } from "../platform/signal-hook.ts";

signalAt("start"); // a test hook (REACH_WASM_TEST_SIGNAL); nothing without it

// Whatever escapes a command is reported in one line, never as a stack trace (REACH_WASM_DEBUG=1 shows it).
const lastResort = (err: unknown): void => {
  if (process.env["REACH_WASM_DEBUG"] === "1") console.error(err);
  process.stderr.write(terminalSafe(redactSecrets(`reach-wasm: internal error: ${err instanceof Error ? err.message : String(err)}; this is a bug — please report it`)) + "\n");
  process.exit(1);
};
process.on("uncaughtException", lastResort);
process.on("unhandledRejection", lastResort);
const argv = process.argv.slice(2);
// Nothing is installed for the process: a command that calls the engine hands it the platform (`src/host/`: the
// environment object, the engine threads, whose module sits beside this file in dist/cli/ as engine-worker.mjs).
// No top-level await: the CLI bundle runs this entry as a script (with V8's code cache, `scripts/bundle/bundle.mjs`).
void main(argv, {
  stdout: stdioWriter(1),
  stderr: stdioWriter(2),
  terminal: detectTerminal(),
})
  .then((code) => void (process.exitCode = code), lastResort);
