/**
 * What the process's terminal is: whether stdout and stderr are TTYs, how wide stderr is, and whether colour is
 * wanted (`NO_COLOR` set to anything non-empty, or `TERM=dumb`, turns it off: https://no-color.org). Node and Deno
 * (through its `node:` compatibility layer) alike.
 * @module
 */
import { fstatSync, writeSync } from "node:fs";
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
  const stderr = isTerminal(2);
  const columns = stderr ? process.stderr.columns : undefined;
  return {
    stdout: isTerminal(1),
    stderr,
    color: (noColor === undefined || noColor === "") && process.env["TERM"] !== "dumb",
    columns: typeof columns === "number" && columns > 20 ? columns : 80,
  };
}

/** `/dev/null` on Linux (major 1, minor 3): a character device, and never a terminal. */
const DEV_NULL_RDEV = (1 << 8) | 3;

/**
 * Whether `fd` is a terminal. Asking Node (`process.stderr.isTTY`) makes the process's stream object, which loads
 * Node's stream modules (~3 ms of a short run, and `node:tty` loads even more); a file, a pipe, a socket or `/dev/null`
 * is no terminal, and `fstat` says so without them. Only another character device is asked about.
 */
function isTerminal(fd: 1 | 2): boolean {
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice() || st.rdev === DEV_NULL_RDEV) return false;
  } catch {
    return false; // closed
  }
  return (fd === 1 ? process.stdout : process.stderr).isTTY === true;
}

/**
 * A writer to stdout (1) or stderr (2) for the CLI: synchronous writes to the file descriptor, as Node's own stream
 * makes them on Linux for files, pipes and terminals, without making that stream (which loads Node's stream modules,
 * ~3 ms of a short run). When the descriptor refuses (`EAGAIN` on a non-blocking pipe, anything but `EPIPE`), the rest
 * of this text and all later text go through the process's stream, in order. A reader that went away (`EPIPE`) loses
 * the text, and the command goes on.
 * @param fd 1 or 2
 * @returns the writer
 * @example const stderr = stdioWriter(2); stderr("reach-wasm: done\n");
 */
export function stdioWriter(fd: 1 | 2): (text: string) => void {
  let viaStream = false;
  const stream = (): NodeJS.WriteStream => (fd === 1 ? process.stdout : process.stderr);
  return (text) => {
    if (viaStream) {
      stream().write(text);
      return;
    }
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    try {
      while (at < bytes.length) at += writeSync(fd, bytes, at);
    } catch (err) {
      if ((err as { code?: unknown }).code === "EPIPE") return;
      viaStream = true;
      stream().write(bytes.subarray(at));
    }
  };
}
