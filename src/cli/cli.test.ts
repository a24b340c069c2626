import { describe, expect, it } from "vitest";
import { main } from "./cli.ts";
import { COMMANDS } from "./commands.ts";

function run(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe("reach-wasm CLI", () => {
  it("--help lists every command of ARCHITECTURE.md and exits 0", () => {
    const { code, stdout } = run("--help");
    expect(code).toBe(0);
    for (const name of ["run", "replay", "verify", "wasi", "pack", "keygen", "node", "conformance"]) {
      expect(stdout).toMatch(new RegExp(`^  ${name}\\s`, "m"));
    }
  });

  it("no arguments prints the help and exits 2", () => {
    expect(run()).toMatchObject({ code: 2 });
    expect(run().stdout).toContain("Usage: reach-wasm");
  });

  it("commands that are not built say so on stderr and exit 2, without output on stdout", () => {
    for (const c of COMMANDS) {
      const r = run(c.name, "x");
      expect(r.code, c.name).toBe(2);
      expect(r.stdout, c.name).toBe("");
      expect(r.stderr, c.name).toContain("not built yet");
    }
  });

  it("with --json a refusal is one JSON object on stdout with the error code", () => {
    const r = run("run", "packs/hello", "--json");
    expect(r.code).toBe(2);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).error.code).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("an unknown command is PROTO_INVALID_ARGUMENT with exit 2", () => {
    const r = run("frobnicate");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("PROTO_INVALID_ARGUMENT");
    expect(r.stderr).toContain("reach-wasm --help");
  });

  it("<command> --help prints that command's usage and exits 0", () => {
    const r = run("wasi", "--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("reach-wasm wasi <module.wasm>");
  });
});
