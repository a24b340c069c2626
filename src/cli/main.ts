#!/usr/bin/env node
/**
 * Entry point of the `reach-wasm` binary (Node: dist/cli/main.js; Deno: `deno task cli`).
 * @module
 */
import process from "node:process";
import { installFuelStore } from "../platform/fuel-store.ts";
import { installNativeSha256 } from "../platform/native-sha256.ts";
import { main } from "./cli.ts";

installNativeSha256();
installFuelStore();
process.exitCode = await main(process.argv.slice(2), {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
});
