/**
 * What the CLI prints is made safe at one choke point, so that every face — `run`, `pack test`, `submit`, `runs`,
 * `node`, `delegate`, `mcp`, `serve`, `worker`, and any later one — gets it by default:
 *
 * - Terminal escaping (both streams): C0 controls except newline (ESC, BEL, CR, BS, …), DEL, C1 controls (U+0080–
 *   U+009F: a lone U+009B is a CSI on many terminals), the bidirectional controls (which reorder what is shown) and
 *   U+2028/U+2029 are written as `\uXXXX`. A tool's error message with an OSC 52 clipboard write, a title change or
 *   a screen clear prints as text. The escape is JSON's own, so `--json` output stays JSON and means the same
 *   (`JSON.stringify` escapes U+0000–U+001F but leaves DEL, C1, bidi controls and U+2028 raw; here they are escaped
 *   too, and `JSON.parse` gives back the same strings).
 * - Credentials (stderr, which carries every message and log line, and the error document of `--json`): connection
 *   URLs and connection strings lose their passwords (`redactSecrets`). stdout's data (a run record, a new token) is
 *   the user's and is left as it is.
 * @module
 */
import { redactSecrets } from "../platform/redact.ts";
import type { CliIO } from "./io.ts";

// C0 except \n, DEL, C1, ALM, LRM/RLM, LS/PS, the bidi embeddings/overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Escape every character that a terminal would act on.
 * @param text untrusted text (a line, or JSON)
 * @returns the text with each such character as `\uXXXX` (newlines kept)
 * @example terminalSafe("a\u001b]52;c;eA==\u0007b") // "a\\u001b]52;c;eA==\\u0007b"
 */
export function terminalSafe(text: string): string {
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The streams every command is given: escaped for the terminal, stderr also redacted; the originals stay reachable
 * as `raw` for the CLI's own control sequences.
 * @param io the process's (or a test's) streams
 * @returns the escaping streams
 * @example const safe = safeIO(io); safe.stderr(`reach-wasm: ${toolMessage}\n`);
 */
export function safeIO(io: CliIO): CliIO {
  if (io.raw !== undefined) return io; // already escaping
  const raw = { stdout: (t: string) => io.stdout(t), stderr: (t: string) => io.stderr(t) };
  return {
    ...io,
    stdout: (text) => io.stdout(terminalSafe(text)),
    stderr: (text) => io.stderr(terminalSafe(redactSecrets(text))),
    raw,
  };
}
