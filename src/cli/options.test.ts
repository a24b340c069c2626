// The one argument parser (options.ts over node:util parseArgs) and the help written from the same declarations
// (help.ts): every command refuses a bad command line in one shape and prints its help in one shape.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { main } from "./cli.ts";
import { COMMANDS } from "./commands.ts";
import { commandUsage, helpText } from "./help.ts";
import { ArgError, defineArgs, integer, parseCommand, subcommandOf } from "./options.ts";

const SPEC = defineArgs({
  name: "demo",
  positionals: ["<file>", "[more]"],
  rest: "ARGS...",
  options: {
    out: { type: "string", value: "DIR", help: "where" },
    count: { type: "string", value: "N", help: "how many", parse: integer(1, 9) },
    tag: { type: "string", value: "T", multiple: true, help: "a tag" },
    json: { type: "boolean", help: "JSON" },
    quiet: { type: "boolean", short: "q", help: "quiet" },
    key: { type: "string", value: "FILE", required: true, help: "the key" },
    pair: { type: "string", value: "K=V", help: "a pair", parse: (t: string) => { if (!t.includes("=")) throw new ArgError("must be K=V"); return t.split("="); } },
  },
});

function refusal(argv: string[]): string {
  try {
    parseCommand(SPEC, argv);
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).code).toBe("PROTO_INVALID_ARGUMENT");
    return (err as ReachError).message;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
}

describe("parseCommand", () => {
  it("types and collects values: strings, --name=value, switches, short aliases, repeats, converted values, -- rest", () => {
    const p = parseCommand(SPEC, ["f", "--out", "-", "--count=3", "--tag", "a", "-q", "--tag", "b", "--key", "k", "--json", "--pair", "x=1", "g", "--", "--out", "z"]);
    expect(p.positionals).toEqual(["f", "g"]);
    expect(p.rest).toEqual(["--out", "z"]);
    expect(p.values).toEqual({ out: "-", count: 3, tag: ["a", "b"], json: true, quiet: true, key: "k", pair: ["x", "1"] });
    expect(parseCommand(SPEC, ["f", "--key", "k"]).values).toEqual({ out: undefined, count: undefined, tag: [], json: false, quiet: false, key: "k", pair: undefined });
  });

  it("a string option takes the next argument whatever it looks like, unless it is one of the command's options", () => {
    expect(parseCommand(SPEC, ["f", "--key", "-"]).values.key).toBe("-");
    expect(parseCommand(SPEC, ["f", "--key", "--not-ours"]).values.key).toBe("--not-ours");
    expect(parseCommand(SPEC, ["f", "--key=--json"]).values.key).toBe("--json");
    // `run pack --out --json` used to write a folder named --json and print no JSON
    for (const next of ["--json", "--out=x", "--quiet", "-q"]) {
      expect(() => parseCommand(SPEC, ["f", "--key", next])).toThrow(new RegExp(`--key needs a value but is followed by the option ${next.split("=")[0]}; give the value \\(--key FILE\\), or write --key=`));
    }
  });

  it("refuses every bad command line with the command, what is wrong, the usage and where the help is", () => {
    const shape = /^demo: .+; usage: reach-wasm demo <file> \[more\] --key FILE \[options\] \[-- ARGS\.\.\.\] \(`reach-wasm demo --help` lists every option\)$/;
    const cases: Array<[string[], RegExp]> = [
      [["f", "--key", "k", "--nope"], /unknown option --nope/],
      [["f", "--key", "k", "-x"], /unknown option -x/],
      [["f", "--key"], /--key needs a value \(--key FILE\)/],
      [["f", "--key", "k", "--json=yes"], /--json takes no value/],
      [["f", "--key", "k", "--count", "10"], /--count expects an integer 1\.\.9, got "10"/],
      [["f", "--key", "k", "--pair", "x"], /--pair must be K=V, got "x"/],
      [["f", "--key", "k", "--out", "a", "--out", "b"], /--out is given twice; give it once/],
      [["--key", "k"], /<file> is missing/],
      [["f", "g", "h", "--key", "k"], /unexpected argument "h" \(pass ARGS\.\.\. after "--"\)/],
      [["f"], /--key FILE is required/],
    ];
    for (const [argv, what] of cases) {
      const message = refusal(argv);
      expect(message, argv.join(" ")).toMatch(shape);
      expect(message, argv.join(" ")).toMatch(what);
    }
  });

  it("refuses -- where a command takes nothing after it", () => {
    const plain = defineArgs({ name: "plain", options: {} });
    expect(() => parseCommand(plain, ["--", "x"])).toThrow(/plain: "--" is not expected here/);
  });

  it("subcommandOf names the subcommands when none or an unknown one is given", () => {
    const group = defineArgs({ name: "grp", positionals: ["<subcommand>"], options: {} });
    const subs = [defineArgs({ name: "grp one", options: {} }), defineArgs({ name: "grp two", options: {} })];
    expect(subcommandOf(group, subs, ["two", "x"])).toEqual({ spec: subs[1], argv: ["x"] });
    expect(() => subcommandOf(group, subs, [])).toThrow(/^grp: a subcommand is missing; choose one of one, two; usage: reach-wasm grp <subcommand>/);
    expect(() => subcommandOf(group, subs, ["three"])).toThrow(/unknown subcommand "three"; choose one of one, two/);
  });
});

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe("every command: the same help and the same refusal", () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))("%s", async (name, c) => {
    const help = await cli(name, "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(helpText(c));
    const lines = help.stdout.split("\n");
    expect(lines[0]).toBe(`Usage: ${commandUsage(c)}`);
    expect(lines[2]).toBe(c.summary);
    expect(help.stdout).toMatch(c.subcommands === undefined ? /\n(Options|Global options):\n/ : /\nSubcommands:\n/);
    expect(help.stdout).toMatch(/\nGlobal options:\n {2}-q, --quiet +.+\n {2}-h, --help +show this help\n/);
    // --quiet speaks of the --json object only where the command has --json
    const json = [c, ...(c.subcommands ?? [])].some((s) => Object.hasOwn(s.options, "json"));
    expect(/--json object/.test(help.stdout.split("Global options:")[1]!), name).toBe(json);
    // the same unknown option, refused in the same words by every command (after its subcommand, if it has them)
    const sub = c.subcommands?.[0]?.name.split(" ")[1];
    const bad = await cli(name, ...(sub === undefined ? [] : [sub]), "--no-such-option");
    expect(bad.code).toBe(2);
    const who = sub === undefined ? name : `${name} ${sub}`;
    expect(bad.stderr).toMatch(new RegExp(`^reach-wasm: PROTO_INVALID_ARGUMENT: ${who}: unknown option --no-such-option; usage: reach-wasm ${who}\\b.*\\(\`reach-wasm ${name} --help\` lists every option\\)\\n$`));
  });
});
