/**
 * The conformance suite's host on Node and Deno (`src/conformance/` is web-standard): the implementation under test
 * as a command (this installation's own CLI, or `--impl CMD`), spawned with bounded output and a timeout; scratch
 * folders; free loopback ports; the installed package's `packs/` and `conformance/` folders; and the runtime-neutral
 * case suites of `conformance/lib/` with their file access.
 * @module
 */
import { spawn } from "node:child_process";
import { siblingScript } from "../platform/sibling.ts";
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { ConformanceHost, ExecResult, ServedProcess } from "../conformance/mod.ts";
import type { NeutralSuite } from "../conformance/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { writeFileAtomic } from "../platform/write.ts";

/** Most bytes kept of one process's stdout or stderr. */
const MAX_OUTPUT = 32 * 1024 * 1024;

/**
 * This installation's CLI as a command: `node <main.js>` on Node, `deno run -A <main.ts>` on Deno.
 * @returns the command words
 * @example selfCommand() // ["/usr/bin/node", "/x/dist/cli/main.js"]
 */
export function selfCommand(): string[] {
  const deno = (globalThis as { Deno?: { execPath(): string; mainModule: string } }).Deno;
  if (deno !== undefined) return [deno.execPath(), "run", "-A", fileURLToPath(deno.mainModule)];
  return [process.execPath, ...process.execArgv, process.argv[1]!];
}

/**
 * Split `--impl CMD` into words: spaces separate, '…' and "…" group, no shell is involved.
 * @param text the command
 * @returns its words
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an empty command or an unclosed quote
 * @example parseCommand("node 'my impl/cli.js'") // ["node", "my impl/cli.js"]
 */
export function parseCommand(text: string): string[] {
  const words: string[] = [];
  const re = /\s*(?:'([^']*)'|"([^"]*)"|([^\s'"]+))/gy;
  let word: string | null = null;
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const glued = m[0].length > 0 && !/^\s/.test(m[0]) && word !== null;
    const piece = m[1] ?? m[2] ?? m[3] ?? "";
    if (glued) word += piece;
    else {
      if (word !== null) words.push(word);
      word = piece;
    }
    last = re.lastIndex;
  }
  if (word !== null) words.push(word);
  if (text.slice(last).trim() !== "") throw new ReachError("PROTO_INVALID_ARGUMENT", `--impl ${JSON.stringify(text)}: an unclosed quote; quote words with '…' or "…"`);
  if (words.length === 0) throw new ReachError("PROTO_INVALID_ARGUMENT", "--impl needs a command, such as --impl \"node /path/to/cli.js\"");
  return words;
}

let root: Promise<string> | undefined;

/**
 * The installed reach-wasm package's root: the nearest folder above this module holding `packs/hello` and
 * `conformance/upstream-schemas`.
 * @returns its path
 * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the suite's files are not installed
 */
export function packageRoot(): Promise<string> {
  return (root ??= (async () => {
    let dir = dirname(fileURLToPath(import.meta.url));
    for (;;) {
      const ok = await Promise.all(["packs/hello/reach.json", "conformance/upstream-schemas/error.schema.json"].map((p) => stat(join(dir, p)).then((s) => s.isFile(), () => false)));
      if (ok.every(Boolean)) return dir;
      const up = dirname(dir);
      if (up === dir) throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the conformance suite's files (packs/, conformance/) are not installed with reach-wasm; reinstall it");
      dir = up;
    }
  })().catch((err: unknown) => {
    root = undefined;
    throw err;
  }));
}

function collect(child: ChildProcess): { out: () => string; err: () => string } {
  const chunks = { out: [] as Buffer[], err: [] as Buffer[], outBytes: 0, errBytes: 0 };
  child.stdout?.on("data", (d: Buffer) => {
    if ((chunks.outBytes += d.length) <= MAX_OUTPUT) chunks.out.push(d);
  });
  child.stderr?.on("data", (d: Buffer) => {
    if ((chunks.errBytes += d.length) <= MAX_OUTPUT) chunks.err.push(d);
  });
  return { out: () => Buffer.concat(chunks.out).toString("utf8"), err: () => Buffer.concat(chunks.err).toString("utf8") };
}

function runCommand(command: readonly string[], args: readonly string[], timeoutMs: number): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    const io = collect(child);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout: "", stderr: `cannot start ${command[0]}: ${err.message}`, timedOut: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: io.out(), stderr: io.err(), timedOut });
    });
  });
}

function serveCommand(command: readonly string[], args: readonly string[], timeoutMs: number): Promise<ServedProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    const io = collect(child);
    const exited = new Promise<void>((done) => child.once("close", () => done()));
    const stop = async (): Promise<void> => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const hard = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(hard);
    };
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${args.slice(0, 2).join(" ")} printed no line within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.stdout?.on("data", () => {
      const text = io.out();
      if (!text.includes("\n")) return;
      clearTimeout(timer);
      resolve({ line: text.slice(0, text.indexOf("\n")), stop });
    });
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${command[0]}: ${err.message}`));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.slice(0, 2).join(" ")} exited with ${code} before it was ready: ${io.err().trim().split("\n").at(-1) ?? ""}`));
    });
  });
}

async function filesUnder(dir: string, prefix = ""): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const rel = prefix === "" ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory()) out.push(...(await filesUnder(dir, rel)));
    else if (e.isFile()) out.push(rel);
  }
  return out.sort();
}

/**
 * The host for one suite run.
 * @param command the implementation's command words ({@link selfCommand} or {@link parseCommand})
 * @param pkg the package root ({@link packageRoot})
 * @returns the host
 * @example const host = conformanceHost(selfCommand(), await packageRoot());
 */
export function conformanceHost(command: readonly string[], pkg: string): ConformanceHost {
  const scratch: string[] = [];
  return {
    exec: (args, o) => runCommand(command, args, o?.timeoutMs ?? 180_000),
    serve: (args, o) => serveCommand(command, args, o?.timeoutMs ?? 60_000),
    readFile: async (p) => await readFile(p).then((b) => new Uint8Array(b), () => null),
    writeFile: async (p, bytes) => await writeFileAtomic(p, bytes), // never through a link (write.ts)
    exists: async (p) => await stat(p).then(() => true, () => false),
    list: async (p) => (await readdir(p).catch(() => [] as string[])).sort(),
    listFiles: (p) => filesUnder(p),
    copyDir: async (from, to) => await cp(from, to, { recursive: true }),
    scratchDir: async () => {
      const dir = await mkdtemp(join(tmpdir(), "reach-conformance-"));
      scratch.push(dir);
      return dir;
    },
    cleanup: async () => {
      for (const d of scratch.splice(0)) await rm(d, { recursive: true, force: true });
    },
    freePort: () =>
      new Promise((resolve, reject) => {
        const s = createServer();
        s.on("error", reject);
        s.listen(0, "127.0.0.1", () => {
          const port = (s.address() as AddressInfo).port;
          s.close(() => resolve(port));
        });
      }),
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    packageRoot: pkg,
  };
}

/**
 * The runtime-neutral suites of `conformance/lib/` (bundled beside the CLI as `conformance-cases.mjs`; from source
 * under Deno), with file access rooted at the package's `conformance/` folder. A path under `../node_modules/` is
 * resolved like an import, wherever the package manager put the dependency.
 * @param pkg the package root
 * @returns the suites and the committed fingerprints
 * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when they are not installed
 */
export async function neutralSuites(pkg: string): Promise<{ suites: NeutralSuite[]; fingerprints: Record<string, string> }> {
  const here = import.meta.url;
  const candidates = here.endsWith(".ts") ? [new URL("../../conformance/lib/all.ts", here)] : [siblingScript("./conformance-cases", here), new URL("../conformance-cases.js", here)];
  const found = (await Promise.all(candidates.map((u) => stat(u).then((s) => (s.isFile() ? u : null), () => null)))).find((u) => u !== null);
  if (found === undefined || found === null) throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the in-process conformance cases are not installed (no conformance-cases.mjs beside the CLI); reinstall reach-wasm, or test with --impl");
  const mod = (await import(found.href)) as { allSuites(io: unknown): NeutralSuite[] };
  const base = join(pkg, "conformance");
  const locate = (p: string): string => {
    if (!p.startsWith("../node_modules/")) return join(base, p);
    // the node_modules lookup of Node's resolver: the package's own, then each folder above it
    const rel = p.slice("../node_modules/".length);
    for (let dir = pkg; ; dir = dirname(dir)) {
      const candidate = join(dir, "node_modules", rel);
      if (existsSync(candidate)) return candidate;
      if (dirname(dir) === dir) return join(pkg, "node_modules", rel);
    }
  };
  const io = {
    readBytes: (p: string) => new Uint8Array(readFileSync(locate(p))),
    readText: (p: string) => readFileSync(locate(p), "utf8"),
    list: (p: string) => readdirSync(locate(p)).sort(),
  };
  const fingerprints = JSON.parse(await readFile(join(base, "fingerprints.json"), "utf8")) as Record<string, string>;
  return { suites: mod.allSuites(io), fingerprints };
}
