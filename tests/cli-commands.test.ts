// keygen, pack init|validate|build|sign, and run of a pack archive and of a signed pack through a trust store.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, appendFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { COMMANDS } from "../src/cli/commands.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; json: Record<string, unknown> | null; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, json: stdout.trim() === "" ? null : (JSON.parse(stdout) as Record<string, unknown>), stderr };
}

describe("keygen", () => {
  it("writes a 0600 private key and a public key, and never overwrites without --force", async () => {
    const key = join(scratch, "a.key");
    const r = await cli("keygen", "--out", key, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(`${key}.pub`, "utf8")).publicKey).toBe(r.json!["publicKey"]);
    expect(JSON.parse(readFileSync(key, "utf8")).type).toBe("reach-wasm/ed25519-private-key");
    const again = await cli("keygen", "--out", key);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists/);
    expect((await cli("keygen", "--out", key, "--force")).code).toBe(0);
  });

  it("--force never leaves half a pair: a public key path it may not write keeps the old private key; a directory is named", async () => {
    const key = join(scratch, "pair.key");
    expect((await cli("keygen", "--out", key)).code).toBe(0);
    const before = readFileSync(key);
    rmSync(`${key}.pub`);
    symlinkSync(join(scratch, "elsewhere.pub"), `${key}.pub`);
    const r = await cli("keygen", "--out", key, "--force", "--json");
    expect(r.code).toBe(2);
    expect(JSON.stringify(r.json)).toMatch(/is a symbolic link/);
    expect(readFileSync(key).equals(before)).toBe(true);
    expect(readdirSync(scratch).filter((n) => n.includes(".tmp-"))).toEqual([]);
    const dir = await cli("keygen", "--out", scratch, "--json");
    expect(dir.code).toBe(2);
    expect(JSON.stringify(dir.json)).toMatch(/is a directory; give --out a file name/);
  });
});

describe("pack init", () => {
  it("derives the pack id from the folder name without a leading or trailing '-' (ünï → n, ü → my-pack)", async () => {
    for (const [name, id] of [["ünï", "n"], ["ü", "my-pack"], ["a  b", "a-b"]] as const) {
      const r = await cli("pack", "init", join(scratch, name), "--json");
      expect(r.code, r.stderr).toBe(0);
      expect(r.json!["id"]).toBe(id);
      expect((await cli("pack", "validate", join(scratch, name))).code).toBe(0);
    }
  });
});

describe("pack", () => {
  it("validate compiles the planner and every js tool, and names the line and column of a syntax error (run names them too)", async () => {
    const dir = join(scratch, "syntax");
    cpSync("packs/notes", dir, { recursive: true });
    expect((await cli("pack", "validate", dir)).code).toBe(0);
    const planner = readFileSync(join(dir, "planner.js"), "utf8").split("\n");
    planner.splice(2, 0, "function (( broken");
    writeFileSync(join(dir, "planner.js"), planner.join("\n"));
    const r = await cli("pack", "validate", dir, "--json");
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ error: { code: "PACK_MALFORMED", details: { syntaxErrors: [{ path: "planner.js", line: 3, column: 10 }] } } });
    expect((r.json!["error"] as { message: string }).message).toMatch(/^planner\.js:3:10: SyntaxError: /);
    const run = await cli("run", dir, "--unrestricted", "--json", "--quiet", "--out", join(scratch, "syntax-out"));
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ error: { code: "PLAN_PLANNER_FAILED" } });
    expect((run.json!["error"] as { message: string }).message).toMatch(/SyntaxError: .* at line 3, column 10 of its module/);
  });

  it("init makes a pack that validates and runs", async () => {
    const dir = join(scratch, "greeter");
    expect((await cli("pack", "init", dir)).code).toBe(0);
    const v = await cli("pack", "validate", dir, "--json");
    expect(v.code, v.stderr).toBe(0);
    expect(v.json).toMatchObject({ valid: true, id: "greeter", signed: false });
    const input = join(scratch, "in.json");
    writeFileSync(input, JSON.stringify({ text: "Hello, Ada!" }));
    const r = await cli("run", dir, "--input", input, "--json", "--out", join(scratch, "out"));
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(r.json!["out"] as string, "result.json"), "utf8"));
    expect(result.outputs.count).toEqual({ words: 2 });
    expect((await cli("pack", "init", dir)).code).toBe(2); // not empty
  });

  it("build writes a deterministic archive that runs with the same run hash as the directory", async () => {
    const a = join(scratch, "hello-a.tar.gz");
    const b = join(scratch, "hello-b.tar.gz");
    expect((await cli("pack", "build", "packs/hello", "--out", a)).code).toBe(0);
    expect((await cli("pack", "build", "packs/hello", "--out", b)).code).toBe(0);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    const fromDir = await cli("run", "packs/hello", "--json", "--out", join(scratch, "o1"));
    const fromArchive = await cli("run", a, "--json", "--out", join(scratch, "o2"));
    expect(fromArchive.code, fromArchive.stderr).toBe(0);
    expect(fromArchive.json!["runHash"]).toBe(fromDir.json!["runHash"]);
  });

  it("build refuses an archive inside the pack it is made from (it would join the pack and change its digest)", async () => {
    const dir = join(scratch, "build-inside");
    cpSync("packs/hello", dir, { recursive: true });
    symlinkSync(dir, join(scratch, "build-inside-link"));
    const before = readdirSync(dir, { recursive: true }).map(String).sort();
    for (const out of [join(dir, "hello.pack.tar.gz"), join(dir, "tools", "new", "hello.pack.tar.gz"), join(scratch, "build-inside-link", "hello.pack.tar.gz")]) {
      const r = await cli("pack", "build", dir, "--out", out, "--json");
      expect(r.code, out).toBe(2);
      expect(JSON.stringify(r.json)).toMatch(/PROTO_INVALID_ARGUMENT.*is inside the pack.*write it elsewhere/);
    }
    expect(readdirSync(dir, { recursive: true }).map(String).sort()).toEqual(before);
  });

  it("trust add creates the store --trust names (as its own error message says to); list shows a missing one empty", async () => {
    const key = join(scratch, "store-maker.key");
    await cli("keygen", "--out", key);
    const store = join(scratch, "new-trust.json");
    const listed = await cli("trust", "list", "--trust", store, "--json");
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json!["keys"]).toEqual([]);
    const added = await cli("trust", "add", `${key}.pub`, "--trust", store, "--json");
    expect(added.code, added.stderr).toBe(0);
    expect((JSON.parse(readFileSync(store, "utf8")) as { keys: unknown[] }).keys).toHaveLength(1);
    // run and verify still refuse a --trust file that does not exist, with the command that makes it
    const missing = await cli("run", "packs/hello", "--trust", join(scratch, "nope.json"), "--json", "--out", join(scratch, "t0"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist; create it with `reach-wasm trust add KEY\.pub --trust /);
  });

  it("sign + a trust store: the pack runs unrestricted; a changed file is a hard PACK_INVALID_SIGNATURE (exit 2)", async () => {
    const dir = join(scratch, "notes");
    cpSync("packs/notes", dir, { recursive: true });
    const key = join(scratch, "signer.key");
    const k = await cli("keygen", "--out", key, "--json");
    const trust = join(scratch, "trust.json");
    writeFileSync(trust, JSON.stringify({ version: 1, keys: [{ publicKey: k.json!["publicKey"], name: "ci signer" }] }));
    expect((await cli("pack", "sign", dir, "--key", key)).code).toBe(0);
    const untrusted = await cli("run", dir, "--json", "--out", join(scratch, "s0"));
    expect(untrusted.json!["status"]).toBe("FAILED"); // signed, but the key is not trusted: restricted
    expect(untrusted.stderr).toMatch(/not in the trust store/);
    const trusted = await cli("run", dir, "--trust", trust, "--json", "--out", join(scratch, "s1"));
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toMatch(/trusted key ci signer/);
    const verify = await cli("verify", dir, "--trust", trust, "--json");
    expect(verify.code).toBe(0);
    appendFileSync(join(dir, "tools/slugify.js"), "\n// changed\n");
    const tampered = await cli("run", dir, "--trust", trust, "--json", "--out", join(scratch, "s2"));
    expect(tampered.code).toBe(2);
    expect((tampered.json!["error"] as { code: string; details: { changed: string[] } }).code).toBe("PACK_INVALID_SIGNATURE");
    expect((tampered.json!["error"] as { details: { changed: string[] } }).details.changed).toEqual(["tools/slugify.js"]);
    const v2 = await cli("verify", dir, "--trust", trust);
    expect(v2.code).toBe(1);
  });

  it("verify of an unsigned pack fails its signature check", async () => {
    const r = await cli("verify", "packs/hello", "--json");
    expect(r.code).toBe(1);
    expect((r.json!["checks"] as { name: string; ok: boolean }[]).find((c) => c.name === "pack.signature")?.ok).toBe(false);
  });
});

// `reach-wasm <command> --help` documents every option the command accepts: every option its declaration names
// (specs-*.ts, read by the one parser, options.ts) appears in its help, and every "--name" literal in the command's
// files under src/cli/ appears in the help of a command that file serves. A new file with options must be placed
// here, so no option escapes the check.
describe("--help names every option a command accepts", () => {
  const SERVES: Record<string, string[]> = {
    "cli.ts": ["", "run"], // the global options, and run's --on
    "run-args.ts": ["run"], "run.ts": ["run"], "delegated-run.ts": ["run"],
    "capsule-commands.ts": ["replay", "verify"], "options.ts": ["doctor", "show"],
    "show.ts": ["show"], "report.ts": ["report"], "diff.ts": ["diff"], "wasi.ts": ["wasi"],
    "pack.ts": ["pack"], "pack-init.ts": ["pack"], "pack-test.ts": ["pack"],
    "trust.ts": ["trust"], "mcp-args.ts": ["mcp"], "approve.ts": ["approve"], "attest.ts": ["attest"],
    "commands.ts": ["mcp"], // the notes: mcp's client configuration quotes npx's "--no" "keygen.ts": ["keygen"],
    "serve.ts": ["serve"], "worker.ts": ["worker"], "submit.ts": ["submit"], "runs.ts": ["runs"], "tokens.ts": ["tokens"],
    "_service-args.ts": ["serve", "worker", "submit", "runs", "tokens"],
    "node.ts": ["node"], "node-serve.ts": ["node"], "federation-host.ts": ["node", "delegate", "revoke"],
    "delegate.ts": ["delegate", "revoke"], "doctor.ts": ["doctor"], "conformance.ts": ["conformance"], "export.ts": ["export"],
    "fork.ts": ["fork", "resume"],
  };
  const dir = "src/cli";
  const optionsOf = (file: string): string[] => [...new Set([...readFileSync(join(dir, file), "utf8").matchAll(/"(--[a-z][a-z0-9-]*)"/g)].map((m) => m[1]!))];
  const helpOf = async (command: string): Promise<string> => {
    let out = "";
    const code = await main(command === "" ? ["--help"] : [command, "--help"], { stdout: (t) => void (out += t), stderr: () => {} });
    expect(code).toBe(0);
    return out;
  };

  it.each(COMMANDS.map((c) => [c.name, c] as const))("%s: every declared option (and subcommand's) is in its help", async (name, c) => {
    const help = await helpOf(name);
    const declared = [c, ...(c.subcommands ?? [])].flatMap((s) => Object.keys(s.options).map((o) => `--${o}`));
    expect(declared.filter((o) => !new RegExp(`${o}(?![a-z0-9-])`).test(help))).toEqual([]);
  });

  it("every file of src/cli/ that names an option is checked", () => {
    const files = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && optionsOf(f).length > 0);
    expect(files.filter((f) => !Object.hasOwn(SERVES, f))).toEqual([]);
  });

  it.each(Object.entries(SERVES))("%s: each of its options is in the help of %j", async (file, commands) => {
    const helps = await Promise.all(commands.map(helpOf));
    const missing = optionsOf(file).filter((o) => !helps.some((h) => new RegExp(`${o}(?![a-z0-9-])`).test(h)));
    expect(missing, `${file}: not in ${commands.map((c) => `reach-wasm ${c} --help`).join(" / ")}`).toEqual([]);
  });
});
