/**
 * Which tool-building toolchains this machine has (`reach-wasm doctor`, the template build scripts): each is probed
 * by really building something small with it (a toolchain that answers `--version` but cannot link for wasm32 is
 * not present), with the same environment variables the templates' `build.sh` reads (`CLANG`, `RUSTC`,
 * `RUST_TARGET`, `ASC`, `WASM_AS`, `JCO`). jco and binaryen's wasm-as ship with reach-wasm and are found in its own
 * dependencies. Nothing is installed or downloaded here; a missing toolchain comes with the commands that install it.
 * @module
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";

/** One toolchain as found (or not) on this machine. */
export type Toolchain = {
  /** Short name: `c`, `rust`, `as`, `wat`, `component`, `js`, `python`. */
  name: string;
  /** The templates (`pack init --template`) whose build needs it. */
  templates: string[];
  /** What it is, for people. */
  title: string;
  present: boolean;
  /** Its version line, when present. */
  version: string | null;
  /** Environment variables that make the templates' build.sh use it (e.g. `{ RUSTC: "/usr/bin/rustc" }`). */
  env: Record<string, string>;
  /** Why it is missing (what failed), when it is. */
  problem: string | null;
  /** Commands that install it (Debian 12 / npm). */
  install: string[];
};

const PROBE_TIMEOUT_MS = 60_000;
const CLANG_INSTALL = "apt-get update && apt-get install -y clang lld wasi-libc libclang-rt-dev-wasm32";

type Ran = { ok: boolean; stdout: string; stderr: string };

/** Run a program (no shell), never throwing: a missing program or a failure is `ok: false`. */
async function run(file: string, args: readonly string[], cwd?: string): Promise<Ran> {
  const { execFile } = await import("node:child_process"); // only `doctor` probes: not loaded with this module
  return await new Promise((resolve) => {
    execFile(file, [...args], { cwd, timeout: PROBE_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, env: { ...process.env, LC_ALL: "C" } }, (err, stdout, stderr) => {
      resolve({ ok: err === null, stdout: String(stdout), stderr: err !== null && stderr === "" ? (err as Error).message : String(stderr) });
    });
  });
}

const firstLine = (text: string): string => text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
const lastLine = (text: string): string => text.trim().split("\n").pop()?.trim().slice(0, 300) ?? "";

function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

/** A path inside an installed package of reach-wasm's own dependencies, or null. */
function packageFile(specifier: string, ...rest: string[]): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve(specifier);
    let dir = dirname(entry);
    // up to the package root (the folder holding its package.json with the package's name)
    for (let i = 0; i < 6; i++) {
      if (dir.endsWith(specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/"))) return join(dir, ...rest);
      dir = dirname(dir);
    }
    return null;
  } catch {
    return null;
  }
}

async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "reach-doctor-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function probeClang(name: "c" | "component"): Promise<Toolchain> {
  const clang = env("CLANG") ?? "clang";
  const c = name === "c";
  const base = {
    name,
    templates: [name],
    title: c ? "C for WASI preview1 (clang, lld, wasi-libc, compiler-rt for wasm32)" : "C core modules for components (clang, lld), then jco",
    install: [CLANG_INSTALL],
  };
  const version = await run(clang, ["--version"]);
  if (!version.ok) return { ...base, present: false, version: null, env: {}, problem: `${clang}: ${lastLine(version.stderr)}` };
  const built = await withTemp(async (dir) => {
    const src = join(dir, "probe.c");
    await writeFile(src, c ? "#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }\n" : "__attribute__((export_name(\"f\"))) int f(void) { return 1; }\n");
    const args = c
      ? ["--target=wasm32-wasi", `--sysroot=${env("WASI_SYSROOT") ?? "/usr"}`, "-O2", "-o", join(dir, "probe.wasm"), src]
      : ["--target=wasm32-unknown-unknown", "-nostdlib", "-Wl,--no-entry", "-o", join(dir, "probe.wasm"), src];
    return await run(clang, args);
  });
  return built.ok
    ? { ...base, present: true, version: firstLine(version.stdout), env: { CLANG: clang }, problem: null }
    : { ...base, present: false, version: firstLine(version.stdout), env: {}, problem: `${clang} cannot build for ${c ? "wasm32-wasi" : "wasm32"}: ${lastLine(built.stderr)}` };
}

async function probeRust(): Promise<Toolchain> {
  const base = {
    name: "rust",
    templates: ["rust"],
    title: "Rust std for WASI preview1 (rustc, no cargo)",
    install: ["apt-get update && apt-get install -y rustc libstd-rust-dev-wasm32", "or with rustup: rustup target add wasm32-wasip1 (then RUSTC=rustc RUST_TARGET=wasm32-wasip1)"],
  };
  const compilers = [...new Set([env("RUSTC"), "/usr/bin/rustc", "rustc"].filter((r): r is string => r !== undefined))];
  const targets = [...new Set([env("RUST_TARGET"), "wasm32-wasi", "wasm32-wasip1"].filter((t): t is string => t !== undefined))];
  let problem = "no rustc found";
  for (const rustc of compilers) {
    const version = await run(rustc, ["--version"]);
    if (!version.ok) continue;
    for (const target of targets) {
      const built = await withTemp(async (dir) => {
        await writeFile(join(dir, "probe.rs"), "fn main() { println!(\"ok\"); }\n");
        return await run(rustc, ["--target", target, "-o", join(dir, "probe.wasm"), join(dir, "probe.rs")]);
      });
      if (built.ok) return { ...base, present: true, version: firstLine(version.stdout), env: { RUSTC: rustc, RUST_TARGET: target }, problem: null };
      problem = `${rustc} (${firstLine(version.stdout)}) cannot build for ${targets.join(" or ")}: ${lastLine(built.stderr)}`;
    }
  }
  return { ...base, present: false, version: null, env: {}, problem };
}

async function probeVersion(name: string, title: string, candidates: Array<string | null | undefined>, install: string[], envName: string): Promise<Toolchain> {
  const base = { name, templates: [name], title, install };
  let problem = "not found";
  for (const file of [...new Set(candidates.filter((c): c is string => typeof c === "string"))]) {
    const version = await run(file, ["--version"]);
    if (version.ok) return { ...base, present: true, version: firstLine(version.stdout), env: { [envName]: file }, problem: null };
    problem = `${file}: ${lastLine(version.stderr)}`;
  }
  return { ...base, present: false, version: null, env: {}, problem };
}

async function bundledVersion(name: string, specifier: string): Promise<string | null> {
  const pkg = packageFile(specifier, "package.json");
  if (pkg === null) return null;
  try {
    return `${name} ${(JSON.parse(await readFile(pkg, "utf8")) as { version: string }).version} (bundled with reach-wasm)`;
  } catch {
    return null;
  }
}

async function bundled(name: string, title: string, specifier: string, label: string): Promise<Toolchain> {
  const version = await bundledVersion(label, specifier);
  return { name, templates: [name], title, present: version !== null, version, env: {}, problem: version === null ? `${specifier} is not installed` : null, install: ["npm ci (reinstall reach-wasm's dependencies)"] };
}

/**
 * Probe every toolchain the templates use (a few seconds: each is asked to build something small).
 * @returns one entry per toolchain, in the order of the templates
 * @throws nothing: a probe that fails is a missing toolchain
 * @example for (const t of await probeToolchains()) console.log(t.name, t.present);
 */
export async function probeToolchains(): Promise<Toolchain[]> {
  const jco = env("JCO") ?? packageFile("@bytecodealliance/jco", "src", "jco.js");
  const wasmAs = env("WASM_AS") ?? packageFile("binaryen/package.json", "bin", "wasm-as");
  const [c, component, rust, as, wat, jcoTool, js, python] = await Promise.all([
    probeClang("c"),
    probeClang("component"),
    probeRust(),
    probeVersion("as", "AssemblyScript (asc)", [env("ASC"), "asc"], ["npm install -g assemblyscript@0.28.20 (or ASC=path/to/node_modules/.bin/asc)"], "ASC"),
    probeVersion("wat", "the WebAssembly text format (binaryen wasm-as)", [wasmAs, "wasm-as"], ["bundled with reach-wasm (npm ci); or npm install -g binaryen"], "WASM_AS"),
    probeVersion("component", "jco (componentEmbed, componentNew)", [jco], ["bundled with reach-wasm (npm ci); or npm install -g @bytecodealliance/jco@1.17.0"], "JCO"),
    bundled("js", "JavaScript tools (QuickJS; no toolchain needed)", "@jitl/quickjs-wasmfile-release-sync", "QuickJS"),
    bundled("python", "Python tools (MicroPython; no toolchain needed)", "@micropython/micropython-webassembly-pyscript", "MicroPython"),
  ]);
  // jco's CLI reports a stale version of itself; the bundled package's own is the truth.
  if (jcoTool.present && jco === packageFile("@bytecodealliance/jco", "src", "jco.js")) jcoTool.version = await bundledVersion("jco", "@bytecodealliance/jco");
  // The component template needs clang (core module) and jco (the component around it).
  const both: Toolchain = {
    ...component,
    title: "components in C (clang, lld; jco)",
    present: component.present && jcoTool.present,
    version: [component.version, jcoTool.version].filter((v) => v !== null).join("; ") || null,
    env: { ...component.env, ...jcoTool.env },
    problem: [component.problem, jcoTool.problem === null ? null : `jco: ${jcoTool.problem}`].filter((p) => p !== null).join("; ") || null,
    install: [...(component.present ? [] : component.install), ...(jcoTool.present ? [] : jcoTool.install)],
  };
  return [js, python, c, rust, as, wat, both];
}
