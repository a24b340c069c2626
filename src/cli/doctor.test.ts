// `reach-wasm doctor`: what is present, how to install what is not, export lines for build.sh; exit 0 either way.
import { afterEach, describe, expect, it } from "vitest";
import { main } from "./cli.ts";

async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}
const saved = { CLANG: process.env["CLANG"], ASC: process.env["ASC"] };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("reach-wasm doctor", () => {
  it("--json lists every template's toolchain; a missing one comes with its install command, and the exit is 0", async () => {
    process.env["CLANG"] = "/nonexistent/clang";
    process.env["ASC"] = "/nonexistent/asc";
    const r = await cli("doctor", "--json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; toolchains: Array<{ name: string; present: boolean; install: string[]; problem: string | null; version: string | null }> };
    expect(report.toolchains.map((t) => t.name)).toEqual(["js", "python", "c", "rust", "as", "wat", "component"]);
    const by = Object.fromEntries(report.toolchains.map((t) => [t.name, t]));
    expect(report.ok).toBe(false);
    expect(by["c"]).toMatchObject({ present: false });
    expect(by["c"]!.problem).toContain("/nonexistent/clang");
    expect(by["c"]!.install.join(" ")).toContain("apt-get install -y clang lld wasi-libc libclang-rt-dev-wasm32");
    expect(by["component"]).toMatchObject({ present: false });
    expect(by["as"]!.install.join(" ")).toContain("npm install -g assemblyscript@0.28.20");
    // Shipped with reach-wasm: always there.
    expect(by["js"]).toMatchObject({ present: true });
    expect(by["python"]).toMatchObject({ present: true });
    expect(by["wat"]!.version).toMatch(/wasm-as version/);
  }, 120_000);

  it("prints a readable report on stderr, and --env prints only shell export lines on stdout", async () => {
    const human = await cli("doctor");
    expect(human.code).toBe(0);
    expect(human.stdout).toBe("");
    expect(human.stderr).toMatch(/^ {2}wat +ok +the WebAssembly text format/m);
    const env = await cli("doctor", "--env");
    expect(env.code).toBe(0);
    for (const line of env.stdout.trim().split("\n")) expect(line).toMatch(/^export (CLANG|RUSTC|RUST_TARGET|ASC|WASM_AS|JCO)=\S+$/);
    expect(env.stdout).toMatch(/^export WASM_AS=\S*wasm-as$/m);
  }, 120_000);

  it("exits 2 for an unknown argument", async () => {
    const r = await cli("doctor", "--frobnicate");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/PROTO_INVALID_ARGUMENT.*usage: reach-wasm doctor/);
  });
});
