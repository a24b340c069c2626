#!/usr/bin/env node
/**
 * Entry point of the `reach-wasm` binary (Node: dist/cli/main.js; Deno: `deno task cli`).
 * @module
 */
import process from "node:process";
import { installNativeSha256 } from "../platform/native-sha256.ts";
import { setEngineWorkerUrl } from "../platform/engine-thread.ts";
import { stdioWriter } from "../platform/terminal.ts";
import { main } from "./cli.ts";
import { detectTerminal } from "./progress.ts";
import { installRealClock } from "../platform/real-clock.ts";
import { redactSecrets } from "../platform/redact.ts";
import { terminalSafe } from "./safe-output.ts";
import { signalAt } from "../platform/signal-hook.ts";

signalAt("start"); // a test hook (REACH_WASM_TEST_SIGNAL); nothing without it

// The engine thread's script: bundled beside this file in dist/cli/ (engine-worker.mjs), or the source file under Deno.
setEngineWorkerUrl(new URL(import.meta.url.endsWith(".ts") ? "../platform/engine-worker.ts" : "./engine-worker.mjs", import.meta.url));
installNativeSha256();
installRealClock();
// Whatever escapes a command is reported in one line, never as a stack trace (REACH_WASM_DEBUG=1 shows it).
const lastResort = (err: unknown): void => {
  if (process.env["REACH_WASM_DEBUG"] === "1") console.error(err);
  process.stderr.write(terminalSafe(redactSecrets(`reach-wasm: internal error: ${err instanceof Error ? err.message : String(err)}; this is a bug — please report it`)) + "\n");
  process.exit(1);
};
process.on("uncaughtException", lastResort);
process.on("unhandledRejection", lastResort);
const argv = process.argv.slice(2);
// `run` loads the engine when its run starts (on this thread first, else on an engine thread: `engine-inline.ts`);
// every other command may run engine code on this thread, with the platform's caches, set up here.
// No top-level await: the CLI bundle runs this entry as a script (with V8's code cache, `scripts/bundle/bundle.mjs`).
void (argv[0] === "run" ? Promise.resolve() : import("../platform/environment.ts").then((m) => void m.defaultEnvironment()))
  .then(() => main(argv, {
    stdout: stdioWriter(1),
    stderr: stdioWriter(2),
    terminal: detectTerminal(),
  }))
  .then((code) => void (process.exitCode = code), lastResort);
