/**
 * Where the CLI writes: the entry point passes the process streams and the terminal (`progress.ts` decides what a
 * terminal gets), tests pass buffers (no terminal: plain progress, no colour).
 *
 * `main` hands every command streams that escape what they print (`safe-output.ts`): control characters from a
 * tool, a server, a peer or a capsule reach the terminal as `\u001b`-style text, never as commands, and connection
 * URLs on stderr lose their credentials. The few writers that emit the CLI's own control sequences — the progress
 * line updated in place, `show` and `diff` in colour, the guest's own output under `wasi` — write through
 * {@link rawIO} and escape what they put between those sequences themselves.
 * @module
 */
import type { TerminalInfo } from "../platform/terminal.ts";

/** Unescaped output streams (see {@link rawIO}). */
export type RawStreams = { stdout(text: string): void; stderr(text: string): void };

/**
 * The CLI's output streams. `quiet` (`--quiet` or `-q` anywhere before `--`, taken out of the arguments by `main`)
 * silences progress; `terminal` says whether stdout and stderr are TTYs (absent: neither); `raw` are the streams
 * without escaping (absent: `stdout`/`stderr` are not escaping either, as in tests that call a command directly).
 */
export type CliIO = { stdout(text: string): void; stderr(text: string): void; quiet?: boolean; terminal?: TerminalInfo; raw?: RawStreams };

/**
 * The streams that write exactly what they are given, for the CLI's own control sequences. Whatever is written here
 * that came from outside must have been escaped already.
 * @param io the command's streams
 * @returns the raw streams (the same streams when `io` does not escape)
 * @example rawIO(io).stderr("\r\u001b[2K"); io.stderr(text);
 */
export function rawIO(io: CliIO): RawStreams {
  return io.raw ?? io;
}
