/**
 * The declarations of the commands that make a run from a recorded one (`fork`, `resume`): their arguments, parsed by
 * `options.ts`, and their help, written by `help.ts`.
 * @module
 */
import { ArgError, defineArgs, seed } from "./options.ts";
import { SECRET_OPTION } from "./secret-args.ts";

/** `NAME=MODULE` of `--tool`. */
function toolOf(text: string): [string, string] {
  const eq = text.indexOf("=");
  if (eq <= 0 || eq === text.length - 1 || text.includes("\0")) throw new ArgError("must be NAME=MODULE (a tool of the pack and the file of its other build)");
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** `K=FILE` of `--response`. */
function responseOf(text: string): [number, string] {
  const m = /^([1-9][0-9]{0,5})=(.+)$/s.exec(text);
  if (m === null || text.includes("\0")) throw new ArgError("must be K=FILE (the step's K-th host call, from 1, and a file holding its response as JSON)");
  return [Number(m[1]), m[2]!];
}

const out = { type: "string", value: "DIR", help: "where results go (default .reach): DIR/<runHash>.capsule.tar.gz and the run files under\nDIR/runs/<runHash>/" } as const;
const key = { type: "string", value: "FILE", help: "sign the new run (see keygen)" } as const;
const quiet = { type: "boolean", short: "q", help: "no progress on stderr (errors and the --json object still print)" } as const;
const json = { type: "boolean", help: "print one JSON object on stdout: {runId, status, runHash, parentRunHash, at, before, capsule, out, error?}" } as const;

/** `reach-wasm fork`. */
export const FORK = defineArgs({
  name: "fork",
  summary: "a new run from a recorded one: its steps before STEP taken from the parent's tape (checked), STEP onward live with changes",
  positionals: ["<capsule>"],
  options: {
    at: { type: "string", value: "STEP", required: true, help: "the step the fork starts at: a step id, or N for the N-th tool step (call N of an MCP session run)" },
    args: { type: "string", value: "JSON|FILE", help: "the step's arguments: a JSON object, given inline (starting with {) or in a file" },
    input: { type: "string", value: "JSON|FILE", help: "the run input from STEP on ($input references, replans): JSON inline or in a file" },
    tool: { type: "string", value: "NAME=MODULE", multiple: true, parse: toolOf, help: "run another build of tool NAME from STEP on (the module file; same kind)" },
    response: { type: "string", value: "K=FILE", multiple: true, parse: responseOf, help: "answer STEP's K-th host call (from 1) with the JSON response in FILE instead of running it" },
    seed: { type: "string", value: "N", parse: seed, help: "the seed of the random streams from STEP on (decimal 0..2^64-1)" },
    secret: SECRET_OPTION,
    out,
    key,
    json,
    quiet,
  },
});

/** `reach-wasm resume`. */
export const RESUME = defineArgs({
  name: "resume",
  summary: "continue an ABORTED or timed-out run from its last completed step (those from its tape, checked; the rest live)",
  positionals: ["<capsule>"],
  options: { secret: SECRET_OPTION, out, key, json, quiet },
});

/** The notes of `fork --help` and `resume --help`. */
export const LINEAGE_NOTES = [
  "The new run keeps its parent's run id; its request.json names the parent (forkedFrom {runHash, step, changes} or",
  "resumedFrom {runHash, status, completedSteps}; change files by SHA-256 under fork/ in the capsule), so its run hash",
  "commits to where it came from. It verifies and replays like any capsule; `reach-wasm diff PARENT CHILD` shows the",
  "first divergence at STEP. The steps before STEP are played against the parent's tape and must reproduce its events.",
  "Exit 0 COMPLETED, 1 FAILED or ABORTED (or the parent's steps no longer reproduce: REPLAY_DIVERGENCE), 2 bad",
  "invocation, an unreadable parent, or a run that cannot be resumed (COMPLETED, or failed for another reason:",
  "PROTO_SEQUENCE_ERROR).",
].join("\n");
