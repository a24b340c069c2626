/**
 * The federation benchmark: `reach-wasm run packs/hello` delegated to a second node on loopback (sign, send the pack,
 * validate the chain, run, sign the proof, return and verify the capsule, write it) against the same run done locally,
 * both through the CLI, each writing its capsule and run files. Prints medians and their ratio; asserts nothing.
 *
 *   npx vite-node scripts/bench-federation.ts [--runs N] [--tls]     (default 15 runs of each, alternating, after 2 warm-ups; --tls: HTTPS)
 *   deno run -A scripts/bench-federation.ts [--runs N] [--tls]
 * @module
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { main } from "../src/cli/cli.ts";
import { startNode } from "../src/cli/node-serve.ts";

// Both sides run in this process from the sources: the engine runs inline (a thread cannot start from TypeScript on
// Node, src/host/engine-thread.ts), with the platform the CLI hands it (native SHA-256, the disk caches).
const args = process.argv.slice(2);
const runs = args.includes("--runs") ? Number(args[args.indexOf("--runs") + 1]) : 15;
const useTls = args.includes("--tls");
const root = new URL("../", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "reach-bench-fed-"));
const at = (...p: string[]): string => join(dir, ...p);

async function cli(...argv: string[]): Promise<void> {
  let out = "";
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: () => {} });
  if (code !== 0) throw new Error(`reach-wasm ${argv.join(" ")} exited ${code}: ${out}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function tlsMaterial(): { cert: string; key: string } {
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", at("key.pem"), "-out", at("cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:TRUE"], { stdio: "ignore" });
  return { cert: readFileSync(at("cert.pem"), "utf8"), key: readFileSync(at("key.pem"), "utf8") };
}

/** Times `a` and `b` alternately (so that the machine's changing load falls on both alike), after 2 warm-ups each. */
async function timedPair(a: () => Promise<void>, b: () => Promise<void>): Promise<[number[], number[]]> {
  for (let i = 0; i < 2; i++) {
    await a();
    await b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < runs; i++) {
    for (const [fn, out] of [[a, ta], [b, tb]] as const) {
      const t0 = performance.now();
      await fn();
      out.push(performance.now() - t0);
    }
  }
  return [ta.sort((x, y) => x - y), tb.sort((x, y) => x - y)];
}

const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)]!;
const scheme = useTls ? "https" : "http";
await cli("node", "init", "--dir", at("a"), "--endpoint", `${scheme}://127.0.0.1:${await freePort()}`);
await cli("node", "init", "--dir", at("b"), "--endpoint", `${scheme}://127.0.0.1:${await freePort()}`);
await cli("node", "trust", "--dir", at("a"), at("b", "node.json"));
await cli("node", "trust", "--dir", at("b"), at("a", "node.json"));
const b = await startNode({ dir: at("b"), ...(useTls ? { tls: tlsMaterial(), ca: at("cert.pem") } : { insecureLoopback: true }) });
const bId = (JSON.parse(readFileSync(at("b", "node.json"), "utf8")) as { nodeId: string }).nodeId;
await cli("delegate", "--dir", at("a"), "--to", bId, "--scope", "tool:wordcount", "--expires", "1h", "--out", at("a-to-b.json"));
writeFileSync(at("input.json"), JSON.stringify({ text: "a delegated hello" }));
const pack = join(root, "packs/hello");
const common = ["--seed", "7", "--input", at("input.json")];
try {
  const [local, delegated] = await timedPair(
    () => cli("run", pack, ...common, "--out", at("out-local")),
    () => cli("run", pack, ...common, "--out", at("out-delegated"), "--on", bId, "--delegation", at("a-to-b.json"), "--dir", at("a"), ...(useTls ? ["--ca", at("cert.pem")] : [])),
  );
  const runtime = "Deno" in globalThis ? "deno" : `node ${process.version}`;
  console.log(`[${runtime}] federation: packs/hello, ${runs} runs each (${useTls ? "HTTPS" : "HTTP"} on loopback, load ${loadavg().map((l) => l.toFixed(2)).join(" ")})`);
  console.log(`[${runtime}]   local      median ${median(local).toFixed(1)} ms (min ${local[0]!.toFixed(1)}, max ${local[local.length - 1]!.toFixed(1)})`);
  console.log(`[${runtime}]   delegated  median ${median(delegated).toFixed(1)} ms (min ${delegated[0]!.toFixed(1)}, max ${delegated[delegated.length - 1]!.toFixed(1)})`);
  console.log(`[${runtime}]   ratio delegated/local ${(median(delegated) / median(local)).toFixed(2)}×`);
} finally {
  await b.close();
  rmSync(dir, { recursive: true, force: true });
}
