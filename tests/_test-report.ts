// Helpers of the show / report / diff / progress tests: the CLI with captured streams (and an optional terminal),
// and one run of packs/notes shared by a test file.
import { join } from "node:path";
import { main } from "../src/cli/cli.ts";
import type { TerminalInfo } from "../src/platform/terminal.ts";

/** What a CLI call printed. */
export type CliResult = { code: number; stdout: string; stderr: string };

/**
 * Run the CLI in-process.
 * @param args the arguments
 * @param terminal the terminal to pretend (default: none, as when piped)
 * @returns exit code and captured output
 */
export async function cli(args: string[], terminal?: TerminalInfo): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), ...(terminal === undefined ? {} : { terminal }) });
  return { code, stdout, stderr };
}

/** A terminal: both streams TTYs with colour, 100 columns. */
export const TTY: TerminalInfo = { stdout: true, stderr: true, color: true, columns: 100 };

/** The repository root. */
export const ROOT = new URL("../", import.meta.url).pathname;

/**
 * Run packs/notes (unrestricted) into `out`.
 * @param out the --out directory
 * @returns the capsule path, the run directory and the run hash
 */
export async function runNotes(out: string): Promise<{ capsule: string; runDir: string; runHash: string }> {
  const r = await cli(["run", join(ROOT, "packs/notes"), "--unrestricted", "--json", "--out", out]);
  if (r.code !== 0) throw new Error(`packs/notes did not complete: ${r.stderr}`);
  const json = JSON.parse(r.stdout) as { capsule: string; out: string; runHash: string };
  return { capsule: json.capsule, runDir: json.out, runHash: json.runHash };
}
