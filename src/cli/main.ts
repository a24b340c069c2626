#!/usr/bin/env node
/**
 * Entry point of the `reach-wasm` binary (Node: dist/cli/main.js; Deno: `deno task cli`).
 * @module
 */
import process from "node:process";
import { installNativeSha256 } from "../platform/native-sha256.ts";
import { main } from "./cli.ts";

installNativeSha256();
process.exitCode = await main(process.argv.slice(2), {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
});
