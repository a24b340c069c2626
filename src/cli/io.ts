/**
 * Where the CLI writes: the entry point passes the process streams and the terminal (`progress.ts` decides what a
 * terminal gets), tests pass buffers (no terminal: plain progress, no colour).
 * @module
 */
import type { TerminalInfo } from "../platform/terminal.ts";

/**
 * The CLI's output streams. `quiet` (`--quiet` or `-q` anywhere before `--`, taken out of the arguments by `main`)
 * silences progress; `terminal` says whether stdout and stderr are TTYs (absent: neither).
 */
export type CliIO = { stdout(text: string): void; stderr(text: string): void; quiet?: boolean; terminal?: TerminalInfo };
