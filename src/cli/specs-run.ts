/**
 * The declarations of the commands that run and read runs (`run`, `replay`, `verify`, `show`, `report`, `diff`,
 * `wasi`): their arguments, parsed by `options.ts`, and their help, written by `help.ts`.
 * @module
 */
import { ArgError, defineArgs, integer, seed } from "./options.ts";
import { OTLP_ENDPOINT } from "./specs-export.ts";
import { SECRET_OPTION } from "./secret-args.ts";

function requestId(text: string): string {
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(text)) throw new ArgError("expects 1-128 characters from A-Z a-z 0-9 . _ : -");
  return text;
}

const json = (shape: string) => ({ type: "boolean", help: `print one JSON object on stdout: ${shape}` }) as const;
const trust = { type: "string", value: "FILE", help: "the trust store (default $REACH_WASM_TRUST_STORE or ~/.config/reach-wasm/trust.json)" } as const;

/** `reach-wasm run`, local and delegated (`--on`). */
export const RUN = defineArgs({
  name: "run",
  summary: "plan and execute a pack in the sandbox; writes {runHash}.capsule.tar.gz",
  positionals: ["<pack-dir|pack.tar.gz>"],
  options: {
    input: { type: "string", value: "FILE|-|JSON", help: "the run's input / objective as JSON (default {}): a file, - for stdin, or the JSON itself\nwhen it starts with { [ or \"" },
    seed: { type: "string", value: "N", help: "seed of every random stream (decimal 0..2^64-1; default: derived from the input hash)", parse: seed },
    out: { type: "string", value: "DIR", help: "where results go (default .reach): DIR/<runHash>.capsule.tar.gz and the readable\nrun files under DIR/runs/<runHash>/ (events, evidence, plan, tape, artifacts, workspace)" },
    key: { type: "string", value: "FILE", help: "sign the run: proof.json with a run proof and one step proof per step (see keygen)" },
    approve: { type: "boolean", help: "explicitly approve a risk-3 plan (seed 001 §4); risk 4 and 5 never run" },
    approval: { type: "string", value: "FILE", multiple: true, help: "a signed approval record of the plan (reach-wasm approve); counts when its key is trusted" },
    unrestricted: { type: "boolean", help: "grant an unsigned or untrusted pack its declared capabilities (default: restricted\nexecutor: no network, no writes outside temp/, no memory writes)" },
    secret: SECRET_OPTION,
    trust: { ...trust, help: `${trust.help};\na pack signed by one of its keys runs unrestricted; a bad signature is refused (exit 2)` },
    "max-steps": { type: "string", value: "N", help: "the plan gate's step limit (default: the pack's run.maxSteps, else 10)", parse: integer(1, 100) },
    "step-timeout": { type: "string", value: "MS", help: "the step timeout when the plan sets none (its execution.step_timeout_ms; default 30000):\neach step's fuel budget and wall-clock watchdog, restarted with each step", parse: integer(1, 3_600_000) },
    parallel: { type: "string", value: "N", help: "independent steps at once, on step threads (default: the machine's cores); the record is\nthe same for every N", parse: integer(1, 64) },
    "request-id": { type: "string", value: "ID", help: "the caller's correlation id (seed 004 requestId; default derived from the run id)", parse: requestId },
    events: { type: "string", value: "FILE|-", help: "write seed 004's live event stream as JSONL (run_started … run_completed, mapped from\nthe hashed events; heartbeats never hashed)" },
    heartbeat: { type: "string", value: "MS", help: "milliseconds between the event stream's heartbeats (default 5000)", parse: integer(1, 3_600_000) },
    ...OTLP_ENDPOINT,
    json: json("{runId, status, runHash, capsule, out, error?}"),
    quiet: { type: "boolean", short: "q", help: "no progress on stderr (errors and the --json object still print)" },
    on: { type: "string", value: "NODE_ID|URL", help: "delegated run: the registered node that runs the pack (with --delegation and --dir)" },
    delegation: { type: "string", value: "FILE", help: "delegated run: the delegation chain's last link, granted to this node" },
    dir: { type: "string", value: "NODE_DIR", help: "delegated run: this node's directory (reach-wasm node init), which signs the request" },
    ca: { type: "string", value: "FILE", help: "delegated run: extra CA certificates (PEM) to trust for the node" },
  },
});

/** The notes of `run --help`. */
export const RUN_NOTES = [
  "Delegated run (federation, seed 003 §6.2): --on NODE_ID|URL --delegation FILE --dir NODE_DIR [--ca FILE]",
  "  sends the pack and the request to the registered node NODE_ID, signed by the node in NODE_DIR, under the",
  "  delegation chain ending in FILE (parents are found in NODE_DIR/delegations/ or beside FILE). The capsule",
  "  that comes back is verified before it is written; its run hash is that of the same run done locally.",
  "  A refusal (FED_*, POLICY_VIOLATION, PACK_*) writes nothing and exits 2.",
  "",
  "Progress goes to stderr. Exit 0 COMPLETED, 1 FAILED or ABORTED (Ctrl-C aborts cleanly; twice exits at once),",
  "2 bad invocation or invalid pack (unreadable, schema error, unsupported specVersion).",
  "Example: reach-wasm run packs/hello --json",
].join("\n");

/** `reach-wasm replay`. */
export const REPLAY = defineArgs({
  name: "replay",
  positionals: ["<capsule>"],
  options: {
    "no-exec": { type: "boolean", help: "check the capsule without running tools (chain, outputs, tape, pack, proof)" },
    json: json("{runHash, expectedRunHash, matches, status, durationMs, divergence?}"),
  },
});

/** `reach-wasm verify`. */
export const VERIFY = defineArgs({
  name: "verify",
  positionals: ["<capsule|pack-dir>"],
  options: {
    trust: { ...trust, help: `${trust.help}: judges the proof's and the pack's signer,\nand who may sign an --attestation` },
    attestation: { type: "string", value: "FILE", help: "also check this in-toto attestation of the capsule (reach-wasm attest): its DSSE\nsignature by a trusted key, its subject digest (the capsule file) and its predicate" },
    key: { type: "string", value: "KEY.pub|HEX", help: "with --attestation: the public key that must have signed it, instead of the trust store" },
    json: json("{valid, checks: [{name, ok, message, location?, code?}], …}"),
  },
});

/** `reach-wasm show`. */
export const SHOW = defineArgs({
  name: "show",
  positionals: ["<capsule|run-dir>"],
  options: {
    json: json("{runHash, status, steps: [...], stops, terminal, …}; inputs and outputs over\n4096 characters become a preview unless --full"),
    full: { type: "boolean", help: "print inputs and outputs whole, and every host call" },
  },
});

/** `reach-wasm report`. */
export const REPORT = defineArgs({
  name: "report",
  positionals: ["<capsule|run-dir>", "[more...]"],
  options: {
    out: { type: "string", value: "FILE.html", help: "the page (default: <capsule without .capsule.tar.gz>.report.html beside the capsule)" },
    "out-dir": { type: "string", value: "DIR", help: "write each run's page as DIR/<runHash>.report.html, linking a fork, a resumed\nrun or a session run to its parent and children among the runs given\n(the default with more than one run: the first run's folder)" },
    trust: { ...trust, help: `${trust.help}: judges the proof's signer` },
    "no-replay": { type: "boolean", help: "show only the states the record gives (by default, when it leaves the workspace or\nmemory after a step unknown, the capsule is replayed to give them)" },
    json: json("{out, runHash, status, verified, bytes, lineage, replay, states: [...]}; with more than\none run, {reports: [...]}"),
  },
});

/** `reach-wasm diff`. */
export const DIFF = defineArgs({
  name: "diff",
  positionals: ["<capsuleA>", "<capsuleB>"],
  options: { json: json("{identical, firstDivergence, …}") },
});

function dirOf(text: string): { host: string; guest: string } {
  const at = text.indexOf("::");
  const host = at < 0 ? text : text.slice(0, at);
  const guest = at < 0 ? text : text.slice(at + 2);
  if (host === "" || guest === "") throw new ArgError("needs HOST or HOST::GUEST");
  return { host, guest };
}

function envOf(text: string): [string, string] {
  const eq = text.indexOf("=");
  if (eq <= 0 || text.includes("\0")) throw new ArgError("must be NAME=VALUE");
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** `reach-wasm wasi`. */
export const WASI = defineArgs({
  name: "wasi",
  positionals: ["<module.wasm>"],
  rest: "ARGS...",
  restHelp: "the guest's arguments after the program name (argv[1..])",
  options: {
    dir: { type: "string", value: "HOST[::GUEST]", multiple: true, parse: dirOf, help: "copy the host directory HOST into the virtual workspace and preopen it as GUEST\n(default: the same name); nothing is ever written back to the host" },
    env: { type: "string", value: "K=V", multiple: true, parse: envOf, help: "give the guest this environment variable (only these exist)" },
    seed: { type: "string", value: "N", parse: seed, help: "seed of random_get (decimal 0..2^64-1; default 0); the clock starts at 1970-01-01" },
  },
});
