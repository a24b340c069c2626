/**
 * `reach-wasm <command> --help` and the usage lines, written from the same declarations the parser reads
 * (`options.ts`): every option a command accepts is in its help, in one shape for every command.
 * @module
 */
import type { ArgsSpec, OptionSpec } from "./options.ts";

/** One command of the CLI: what it accepts (or its subcommands), and the text of its help. */
export type CommandSpec = ArgsSpec & {
  readonly summary: string;
  /** The subcommands (`pack init`, `node serve`), each with its own arguments; the command's own options are none. */
  readonly subcommands?: readonly ArgsSpec[];
  /** Behaviour notes printed after the options (exit codes, output, examples). */
  readonly notes?: string;
  /** The issue that builds it, while it is not built. */
  readonly pendingIssue?: number;
};

/** The options every command takes, handled before the command runs (`cli.ts`). */
const GLOBAL: Readonly<Record<string, OptionSpec>> = {
  quiet: { type: "boolean", short: "q", help: "no progress on stderr (errors and the --json object still print)" },
  help: { type: "boolean", short: "h", help: "show this help" },
};

function optionLabel(name: string, o: OptionSpec): string {
  return `${o.short === undefined ? "" : `-${o.short}, `}--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`;
}

/**
 * The full usage line of a command or subcommand: every positional and every option.
 * @param spec the declaration
 * @returns e.g. `reach-wasm diff <capsuleA> <capsuleB> [--json]`
 */
export function fullUsage(spec: ArgsSpec): string {
  const parts = [`reach-wasm ${spec.name}`, ...(spec.positionals ?? [])];
  for (const [name, o] of Object.entries(spec.options)) {
    const label = `--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`;
    parts.push(o.required === true ? label : `[${label}]${o.multiple === true ? "..." : ""}`);
  }
  if (spec.rest !== undefined) parts.push(`[-- ${spec.rest}]`);
  return parts.join(" ");
}

/**
 * The usage of a command: its own, or each subcommand's joined by ` | `.
 * @param command the command
 * @returns the usage line(s)
 */
export function commandUsage(command: CommandSpec): string {
  if (command.subcommands === undefined) return fullUsage(command);
  return `reach-wasm ${command.name} ` + command.subcommands.map((s) => fullUsage(s).slice(`reach-wasm ${command.name} `.length)).join(" | ");
}

function optionLines(options: Readonly<Record<string, OptionSpec>>, indent: string, rest?: [string, string]): string[] {
  const entries: Array<[string, string]> = Object.entries(options).map(([n, o]) => [optionLabel(n, o), `${o.help}${o.multiple === true ? " (repeatable)" : ""}`]);
  if (rest !== undefined) entries.push(rest);
  const width = Math.min(24, Math.max(0, ...entries.map(([label]) => label.length)));
  const lines: string[] = [];
  for (const [label, help] of entries) {
    const [first = "", ...more] = help.split("\n");
    const pad = `${indent}${" ".repeat(width)}  `;
    if (label.length > width) lines.push(`${indent}${label}`, `${pad}${first}`);
    else lines.push(`${indent}${label.padEnd(width)}  ${first}`);
    for (const line of more) lines.push(`${pad}${line}`);
  }
  return lines;
}

/**
 * The `--help` text of a command.
 * @param command the command
 * @returns the text: usage, summary, options (or each subcommand with its options), the global options, notes
 * @example helpText(findCommand("diff")!)
 */
export function helpText(command: CommandSpec): string {
  const lines = [`Usage: ${commandUsage(command)}`, "", command.summary, ""];
  const own = Object.fromEntries(Object.entries(command.options).filter(([n]) => !Object.hasOwn(GLOBAL, n)));
  if (command.subcommands !== undefined) {
    lines.push("Subcommands:");
    for (const s of command.subcommands) {
      lines.push(`  ${fullUsage(s).slice("reach-wasm ".length)}`);
      if (s.summary !== undefined) lines.push(`      ${s.summary.split("\n").join("\n      ")}`);
      lines.push(...optionLines(s.options, "      "));
    }
    lines.push("");
  } else if (Object.keys(own).length > 0 || command.rest !== undefined) {
    const rest: [string, string] | undefined = command.rest === undefined ? undefined : [`-- ${command.rest}`, command.restHelp ?? "what follows is handed on as it is"];
    lines.push("Options:", ...optionLines(own, "  ", rest));
    lines.push("");
  }
  // a command may say what --quiet does for it; it is listed with the global options all the same
  const json = [command, ...(command.subcommands ?? [])].some((s) => Object.hasOwn(s.options, "json"));
  const quiet = json ? GLOBAL["quiet"]! : { ...GLOBAL["quiet"]!, help: "no progress on stderr (errors still print)" };
  const global = Object.fromEntries(Object.entries({ ...GLOBAL, quiet }).map(([n, o]) => [n, Object.hasOwn(command.options, n) ? command.options[n]! : o]));
  lines.push("Global options:", ...optionLines(global, "  "), "");
  if (command.notes !== undefined) lines.push(command.notes, "");
  return lines.join("\n");
}
