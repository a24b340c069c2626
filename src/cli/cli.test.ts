import { describe, expect, it } from "vitest";
import { isBuilt, main } from "./cli.ts";
import { COMMANDS } from "./commands.ts";

async function run(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe("reach-wasm CLI", () => {
  it("--help lists every command of ARCHITECTURE.md and exits 0", async () => {
    const { code, stdout } = await run("--help");
    expect(code).toBe(0);
    for (const name of ["run", "replay", "verify", "wasi", "pack", "keygen", "node", "conformance"]) {
      expect(stdout).toMatch(new RegExp(`^  ${name}\\s`, "m"));
    }
  });

  it("no arguments prints the help and exits 2", async () => {
    expect(await run()).toMatchObject({ code: 2 });
    expect((await run()).stdout).toContain("Usage: reach-wasm");
  });

  it("commands that are not built say so on stderr and exit 2, without output on stdout", async () => {
    for (const c of COMMANDS.filter((c) => !isBuilt(c.name))) {
      const r = await run(c.name, "x");
      expect(r.code, c.name).toBe(2);
      expect(r.stdout, c.name).toBe("");
      expect(r.stderr, c.name).toContain("not built yet");
    }
  });

  it("with --json a refusal is one JSON object on stdout with the error code", async () => {
    const r = await run("run", "packs/no-such-pack", "--json");
    expect(r.code).toBe(2);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).error.code).toBe("PACK_NOT_FOUND");
    const bad = await run("run", "packs/hello", "--seed", "minus one", "--json");
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.code).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("an unknown command is PROTO_INVALID_ARGUMENT with exit 2", async () => {
    const r = await run("frobnicate");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("PROTO_INVALID_ARGUMENT");
    expect(r.stderr).toContain("reach-wasm --help");
  });

  it("<command> --help prints that command's usage and exits 0", async () => {
    const r = await run("wasi", "--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("reach-wasm wasi <module.wasm>");
  });
});
