/**
 * The echo API of `secret-server.ts` as its own process (`deno run -A tests/support/secret-server-main.ts TOKEN…`):
 * prints its port on stdout and serves until killed. For tests whose CLI runs hold the test process's thread.
 * @module
 */
import process from "node:process";
import { startEchoServer } from "./secret-server.ts";

const server = await startEchoServer(process.argv.slice(2));
process.stdout.write(`${server.port}\n`);
