/**
 * What the process's terminal is: whether stdout and stderr are TTYs, how wide stderr is, and whether colour is
 * wanted (`NO_COLOR` set to anything non-empty, or `TERM=dumb`, turns it off: https://no-color.org). Node and Deno
 * (through its `node:` compatibility layer) alike.
 * @module
 */
import process from "node:process";

/** The process's terminal. */
export type TerminalInfo = {
  /** stdout is a TTY (colour for `show` and `diff` only then). */
  stdout: boolean;
  /** stderr is a TTY (progress is one line updated in place only then). */
  stderr: boolean;
  /** Colour is allowed by the environment (`NO_COLOR` unset or empty, `TERM` not `dumb`). */
  color: boolean;
  /** Columns of stderr (80 when unknown). */
  columns: number;
};

/**
 * Inspect the process's terminal.
 * @returns the terminal facts
 * @example const t = terminalInfo(); if (t.stdout && t.color) paint();
 */
export function terminalInfo(): TerminalInfo {
  const noColor = process.env["NO_COLOR"];
  const columns = process.stderr.columns;
  return {
    stdout: process.stdout.isTTY === true,
    stderr: process.stderr.isTTY === true,
    color: (noColor === undefined || noColor === "") && process.env["TERM"] !== "dumb",
    columns: typeof columns === "number" && columns > 20 ? columns : 80,
  };
}
