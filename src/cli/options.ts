/**
 * The one argument parser of every `reach-wasm` command: each command declares its options and positionals once
 * (`ArgsSpec`, in `specs-*.ts`), and this layer over `node:util`'s `parseArgs` (on Node and Deno) turns a command line
 * into typed values, refuses a bad one with the same `PROTO_INVALID_ARGUMENT` error shape (exit 2: ARCHITECTURE.md
 * "Command line"), and `help.ts` writes the usage line and `--help` from the same declaration.
 * @module
 */
import { parseArgs } from "node:util";
import { ReachError } from "../protocol/mod.ts";

/** One option: `--name VALUE` (`type: "string"`) or the switch `--name` (`type: "boolean"`). */
export type OptionSpec = {
  readonly type: "string" | "boolean";
  /** The value's name in the usage and help (`FILE`, `N`); string options only. */
  readonly value?: string;
  /** A one-letter alias (`q` for `-q`). */
  readonly short?: string;
  /** May be given more than once; the values are collected in order. */
  readonly multiple?: boolean;
  /** Must be given (string options only). */
  readonly required?: boolean;
  /** What it does, for `--help` (lines after the first continue the description). */
  readonly help: string;
  /** Check and convert a value; throws {@link ArgError} naming what is expected. */
  readonly parse?: (text: string) => unknown;
};

/** What a command (or one subcommand) accepts. */
export type ArgsSpec = {
  /** The command as typed after `reach-wasm`: `run`, `node serve`. */
  readonly name: string;
  /** Positional arguments in order: `<name>` is required, `[name]` optional, a last `[name...]` any number more. */
  readonly positionals?: readonly string[];
  /** Arguments after `--` are handed on (their name in the usage, e.g. `ARGS...`); without it `--` is refused. */
  readonly rest?: string;
  /** What the arguments after `--` are, for `--help`. */
  readonly restHelp?: string;
  /** The options by long name (without the dashes). */
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** One line for `--help`. */
  readonly summary?: string;
};

/** A value that does not fit its option; the parser adds the command and the option's name. */
export class ArgError extends Error {}

type ValueOf<O extends OptionSpec> = O extends { parse: (text: string) => infer T }
  ? O extends { multiple: true } ? T[] : O extends { required: true } ? T : T | undefined
  : O extends { type: "boolean" } ? boolean
  : O extends { multiple: true } ? string[]
  : O extends { required: true } ? string
  : string | undefined;

/** The parsed values of a spec's options, typed by their declarations. */
export type Values<S extends ArgsSpec> = { -readonly [K in keyof S["options"]]: ValueOf<S["options"][K]> };

/** A parsed command line. */
export type Parsed<S extends ArgsSpec> = { values: Values<S>; positionals: string[]; rest: string[] };

/**
 * Declare a command's arguments (keeps the literal types, so parsed values are typed).
 * @param spec the declaration
 * @returns the same declaration
 * @example const SHOW = defineArgs({ name: "show", positionals: ["<capsule>"], options: { json: { type: "boolean", help: "…" } } });
 */
export function defineArgs<const S extends ArgsSpec>(spec: S): S {
  return spec;
}

/**
 * The short usage of a command, for error messages.
 * @param spec the declaration
 * @returns e.g. `reach-wasm diff <capsuleA> <capsuleB> [options]`
 */
export function shortUsage(spec: ArgsSpec): string {
  const parts = [`reach-wasm ${spec.name}`, ...(spec.positionals ?? [])];
  for (const [name, o] of Object.entries(spec.options)) if (o.required === true) parts.push(`--${name} ${o.value ?? "VALUE"}`);
  if (Object.values(spec.options).some((o) => o.required !== true)) parts.push("[options]");
  if (spec.rest !== undefined) parts.push(`[-- ${spec.rest}]`);
  return parts.join(" ");
}

/**
 * The error of a bad invocation, in the one shape every command uses: what is wrong, the usage, where the help is.
 * @param spec the command's declaration
 * @param message what is wrong
 * @returns a ReachError `PROTO_INVALID_ARGUMENT` (the CLI exits 2)
 * @example throw usageError(DOCTOR, "--json and --env exclude each other");
 */
export function usageError(spec: ArgsSpec, message: string): ReachError {
  const top = spec.name.split(" ")[0]!;
  return new ReachError("PROTO_INVALID_ARGUMENT", `${spec.name}: ${message}; usage: ${shortUsage(spec)} (\`reach-wasm ${top} --help\` lists every option)`);
}

type Token = ReturnType<typeof parseArgs>["tokens"] extends (infer T)[] | undefined ? T : never;

/** Whether `arg` is one of the command's own options (`--json`, `--out=x`, `-h`): never a value taken by mistake. */
function namesOption(spec: ArgsSpec, arg: string): boolean {
  if (arg.startsWith("--")) return Object.hasOwn(spec.options, arg.slice(2).split("=")[0]!);
  return /^-[A-Za-z]$/.test(arg) && Object.values(spec.options).some((o) => o.short === arg.slice(1));
}

function optionToken(spec: ArgsSpec, t: Token & { kind: "option" }, values: Record<string, unknown>): void {
  const o = Object.hasOwn(spec.options, t.name) ? spec.options[t.name] : undefined;
  if (o === undefined) throw usageError(spec, `unknown option ${t.rawName}`);
  const shown = `--${t.name}`;
  if (o.type === "boolean") {
    if (t.inlineValue === true) throw usageError(spec, `${shown} takes no value`);
    values[t.name] = true;
    return;
  }
  if (t.value === undefined || t.value === "") throw usageError(spec, `${shown} needs a value (${shown} ${o.value ?? "VALUE"})`);
  if (t.inlineValue !== true && namesOption(spec, t.value)) {
    throw usageError(spec, `${shown} needs a value but is followed by the option ${t.value.split("=")[0]}; give the value ` +
      `(${shown} ${o.value ?? "VALUE"}), or write ${shown}=${t.value} if that is the value`);
  }
  let v: unknown = t.value;
  if (o.parse !== undefined) {
    try {
      v = o.parse(t.value);
    } catch (err) {
      if (err instanceof ArgError) throw usageError(spec, `${shown} ${err.message}, got ${JSON.stringify(t.value.slice(0, 80))}`);
      if (err instanceof ReachError) throw usageError(spec, `${shown}: ${err.message}`);
      throw err;
    }
  }
  if (o.multiple === true) (values[t.name] as unknown[]).push(v);
  else if (values[t.name] !== undefined) throw usageError(spec, `${shown} is given twice; give it once`);
  else values[t.name] = v;
}

function checkPositionals(spec: ArgsSpec, positionals: string[]): void {
  const declared = spec.positionals ?? [];
  const missing = declared.find((p, i) => p.startsWith("<") && positionals[i] === undefined);
  if (missing !== undefined) throw usageError(spec, `${missing} is missing`);
  // a last positional written `[NAME...]` takes any number of arguments
  if (positionals.length > declared.length && declared[declared.length - 1]?.endsWith("...]") !== true) {
    const extra = JSON.stringify(positionals[declared.length]);
    throw usageError(spec, `unexpected argument ${extra}${spec.rest === undefined ? "" : ` (pass ${spec.rest} after "--")`}`);
  }
}

/**
 * Parse a command line against a declaration: `--name VALUE`, `--name=VALUE`, switches, short aliases, repeated
 * options where declared, positionals, and what follows `--` where the command takes it.
 * @param spec the command's declaration
 * @param argv the arguments after the command (and subcommand) name
 * @returns the typed option values (absent: undefined, false or []), the positionals, the arguments after `--`
 * @throws ReachError `PROTO_INVALID_ARGUMENT` naming the option or argument and the usage, for an unknown option, a
 *   missing or malformed value, a single option given twice, a missing or extra positional, or a missing required option
 * @example parseCommand(SHOW, ["x.capsule.tar.gz", "--json"]).values.json // true
 */
export function parseCommand<const S extends ArgsSpec>(spec: S, argv: readonly string[]): Parsed<S> {
  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  const values: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(spec.options)) {
    options[name] = { type: o.type, ...(o.short === undefined ? {} : { short: o.short }) };
    values[name] = o.multiple === true ? [] : o.type === "boolean" ? false : undefined;
  }
  // not strict: a string option takes the next argument whatever it looks like (`--input -`, `--events -`), and the
  // errors are ours, in one shape, rather than the runtime's
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  let rest: string[] = [];
  for (const t of tokens) {
    if (t.kind === "option") optionToken(spec, t, values);
    else if (t.kind === "positional") positionals.push(t.value);
    else {
      if (spec.rest === undefined) throw usageError(spec, `"--" is not expected here`);
      rest = argv.slice(t.index + 1);
      break;
    }
  }
  checkPositionals(spec, positionals);
  for (const [name, o] of Object.entries(spec.options)) {
    if (o.required === true && values[name] === undefined) throw usageError(spec, `--${name} ${o.value ?? "VALUE"} is required`);
  }
  return { values: values as Values<S>, positionals, rest };
}

/**
 * Pick a subcommand: `reach-wasm pack init …` is `pack`'s subcommand `init` with the arguments after it.
 * @param command the command's declaration (for the error)
 * @param subcommands the subcommands' declarations (named `command sub`)
 * @param argv the arguments after the command name
 * @returns the subcommand's declaration and its arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` naming the subcommands when none or an unknown one is given
 */
export function subcommandOf<S extends ArgsSpec>(command: ArgsSpec, subcommands: readonly S[], argv: readonly string[]): { spec: S; argv: readonly string[] } {
  const [sub, ...rest] = argv;
  const spec = subcommands.find((s) => s.name.split(" ")[1] === sub);
  if (spec === undefined) {
    const names = subcommands.map((s) => s.name.split(" ")[1]).join(", ");
    throw usageError(command, `${sub === undefined ? "a subcommand is missing" : `unknown subcommand ${JSON.stringify(sub)}`}; choose one of ${names}`);
  }
  return { spec, argv: rest };
}

/**
 * A validator: a decimal integer from `min` to `max`.
 * @param min smallest allowed
 * @param max largest allowed
 * @returns the option's `parse`
 * @example { type: "string", value: "N", help: "…", parse: integer(1, 64) }
 */
export function integer(min: number, max: number): (text: string) => number {
  return (text) => {
    if (!/^(0|[1-9][0-9]{0,15})$/.test(text) || Number(text) < min || Number(text) > max) throw new ArgError(`expects an integer ${min}..${max}`);
    return Number(text);
  };
}

/**
 * A validator: a seed, a decimal integer 0..2^64-1 (kept as its text).
 * @param text the value
 * @returns the value
 * @throws ArgError otherwise
 */
export function seed(text: string): string {
  if (!/^(0|[1-9]\d{0,19})$/.test(text) || BigInt(text) > 18446744073709551615n) throw new ArgError("expects a decimal integer 0..18446744073709551615");
  return text;
}
