import { mkdtempSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { main } from "./cli.ts";
import { parseWasiArgs } from "./wasi.ts";

const build = (name: string): string => fileURLToPath(new URL(`../../wasm-tools/build/${name}.wasm`, import.meta.url));

async function run(...argv: string[]) {
  return await runOn(undefined, ...argv);
}

async function runOn(terminal: { stdout: boolean; stderr: boolean; color: boolean; columns: number } | undefined, ...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), ...(terminal === undefined ? {} : { terminal }) });
  return { code, stdout, stderr };
}

function hostDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "reach-wasi-"));
  writeFileSync(join(dir, "input.txt"), "abc");
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "sub", "b.bin"), new Uint8Array([1, 2, 3]));
  return dir;
}

describe("reach-wasm wasi", () => {
  it("runs the C tool with --dir HOST::GUEST and returns its exit code and stdout", async () => {
    const dir = hostDir();
    const r = await run("wasi", build("c-sha"), "--dir", `${dir}::/data`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      path: "/data/input.txt",
      size: 3,
      sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    const again = await run("wasi", build("c-sha"), "--dir", `${dir}::/data`);
    expect(again).toEqual(r);
    const missing = await run("wasi", build("c-sha"), "--dir", `${dir}::/data`, "--", "/data/none.txt");
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("cannot open /data/none.txt");
  });

  it("the guest's output is escaped on a terminal and passed byte for byte into a file or a pipe", async () => {
    const dir = hostDir();
    const hostile = "/data/\u001b]52;c;cm0gLXJmIH4K\u0007\u009b2J.txt"; // the C tool names the file it cannot open
    const piped = await run("wasi", build("c-sha"), "--dir", `${dir}::/data`, "--", hostile);
    expect(piped.code).toBe(3);
    expect(piped.stderr).toContain(`cannot open ${hostile}`);
    const tty = await runOn({ stdout: true, stderr: true, color: false, columns: 80 }, "wasi", build("c-sha"), "--dir", `${dir}::/data`, "--", hostile);
    expect(tty.code).toBe(3);
    expect(tty.stderr).toContain("cannot open /data/\\u001b]52;c;cm0gLXJmIH4K\\u0007\\u009b2J.txt");
    // eslint-disable-next-line no-control-regex
    expect(tty.stderr).not.toMatch(/[\u001b\u0007\u009b]/);
  });

  it("the escape tool is refused everywhere and nothing reaches the host directory", async () => {
    const dir = hostDir();
    const before = readdirSync(dir).sort();
    const r = await run("wasi", build("escape"), "--dir", `${dir}::/data`);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, number>;
    expect(out["dotdot"]).toBe(76);
    expect(out["create_outside"]).toBe(76);
    expect(out["symlink"]).toBe(63);
    expect(r.stderr).toContain("POLICY_VIOLATION");
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it("the guest exit code passes through (empty stdin: the AS tool exits 2 itself)", async () => {
    const r = await run("wasi", build("as-wordcount")); // empty stdin: the tool exits 2 itself
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("expected JSON");
  });

  it("bad invocations exit 2 with PROTO_INVALID_ARGUMENT", async () => {
    for (const argv of [[], ["--dir"], ["x.wasm", "--bogus"], [build("c-sha"), "--env", "NOEQUALS"], [build("c-sha"), "--seed", "-1"], ["/nonexistent/x.wasm"]]) {
      const r = await run("wasi", ...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr, argv.join(" ")).toContain("PROTO_INVALID_ARGUMENT");
    }
    const dir = hostDir();
    symlinkSync("/etc", join(dir, "up"));
    const r = await run("wasi", build("c-sha"), "--dir", `${dir}::/data`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("points outside the directory");
  });

  it("parses --dir, --env, --seed and guest arguments", () => {
    expect(parseWasiArgs(["m.wasm", "--dir", "a", "--dir", "b::/x", "--env", "K=V=1", "--seed", "42", "--", "--dir", "y"])).toEqual({
      module: "m.wasm",
      dirs: [{ host: "a", guest: "a" }, { host: "b", guest: "/x" }],
      env: [["K", "V=1"]],
      seed: "42",
      args: ["--dir", "y"],
    });
    // a variable given twice would leave the guest one value, silently: refused
    expect(() => parseWasiArgs(["m.wasm", "--env", "A=1", "--env", "B=2", "--env", "A=3"])).toThrow(/--env A=… is given twice; give each variable once/);
  });
});
