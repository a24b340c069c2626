/**
 * The command table of `reach-wasm` (ARCHITECTURE.md "Command line"). Commands that are not built yet say so and
 * exit 2 (bad invocation): they never pretend to work.
 * @module
 */

/** One command of the CLI. */
export type CommandSpec = {
  name: string;
  usage: string;
  summary: string;
  /** The issue that builds it, while it is not built. */
  pendingIssue?: number;
  /** Option and behaviour notes printed by `reach-wasm <command> --help`. */
  details?: string;
};

/** Every command of ARCHITECTURE.md, in the order `--help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "run",
    usage: "reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-] [--seed N] [--out DIR] [--key FILE] [--approve] [--unrestricted] [--json]",
    summary: "plan and execute a pack in the sandbox; writes {runHash}.capsule.tar.gz",
    details: [
      "Options:",
      "  --input FILE|-      the run's input / objective as JSON (default {}); - reads stdin",
      "  --seed N            seed of every random stream (decimal 0..2^64-1; default: derived from the input hash)",
      "  --out DIR           where results go (default .reach): DIR/<runHash>.capsule.tar.gz and the readable",
      "                      run files under DIR/runs/<runHash>/ (events, evidence, plan, tape, artifacts, workspace)",
      "  --approve           explicitly approve a risk-3 plan (seed 001 §4); risk 4 and 5 never run",
      "  --unrestricted      grant an unsigned or untrusted pack its declared capabilities (default: restricted",
      "                      executor: no network, no writes outside temp/, no memory writes)",
      "  --trust FILE        the trust store (default $REACH_WASM_TRUST_STORE or ~/.config/reach-wasm/trust.json);",
      "                      a pack signed by one of its keys runs unrestricted; a bad signature is refused (exit 2)",
      "  --max-steps N       the plan gate's step limit (default: the pack's run.maxSteps, else 10)",
      "  --step-timeout MS   the per-step watchdog when the plan sets none (default 30000)",
      "  --key FILE          sign the run: proof.json with a run proof and one step proof per step (see keygen)",
      "  --json              print one JSON object on stdout: {runId, status, runHash, capsule, out, error?}",
      "",
      "Progress goes to stderr. Exit 0 COMPLETED, 1 FAILED or ABORTED (Ctrl-C aborts cleanly; twice exits at once),",
      "2 bad invocation or invalid pack (unreadable, schema error, unsupported specVersion).",
      "Example: reach-wasm run packs/hello --json",
    ].join("\n"),
  },
  {
    name: "replay",
    usage: "reach-wasm replay <capsule> [--no-exec] [--json]",
    summary: "re-execute a capsule against its tape and compare the run hash",
    details: [
      "Re-runs the capsule's own pack with the recorded input and seed; every host call is answered from the tape",
      "(no network, no host file). Any difference is a REPLAY_DIVERGENCE naming the step, the event index and the",
      "first differing field. --no-exec checks the capsule without running tools (chain, outputs, tape, pack, proof).",
      "--json: {runHash, expectedRunHash, matches, status, durationMs, divergence?}.",
      "Exit 0 matched, 1 diverged, 2 the capsule cannot be read (malformed, malicious, truncated, over a limit).",
    ].join("\n"),
  },
  {
    name: "verify",
    usage: "reach-wasm verify <capsule|pack-dir> [--trust FILE] [--json]",
    summary: "check a capsule's hash chain and proofs, or a pack's signature, without executing",
    details: [
      "Capsule checks: files (each entry against capsule.json), events (hash chain, ordering, run hash), outputs,",
      "tape (hashes, blobs), pack (digest), pack.signature, plan (locked hash), proof (run and step proofs).",
      "Each failed check names where the damage is. --json: {valid, checks: [{name, ok, message, location?}], …}.",
      "Exit 0 valid, 1 a check failed, 2 the input cannot be read at all.",
    ].join("\n"),
  },
  {
    name: "wasi",
    usage: "reach-wasm wasi <module.wasm> [--dir HOST[::GUEST]]... [--env K=V]... [--seed N] [-- ARGS...]",
    summary: "run any WASI preview1 command under the deterministic shim",
    details: [
      "Options:",
      "  --dir HOST[::GUEST]  copy the host directory HOST into the virtual workspace and preopen it as GUEST",
      "                       (default: the same name); repeatable; nothing is ever written back to the host",
      "  --env K=V            give the guest this environment variable (only these exist); repeatable",
      "  --seed N             seed of random_get (decimal 0..2^64-1; default 0); the clock starts at 1970-01-01",
      "  -- ARGS...           arguments after the program name (argv[1..])",
      "",
      "stdin is empty. The guest's stdout and stderr pass through; the exit code is the guest's own (a trap exits 1,",
      "a bad invocation 2). There is no fuel limit here: stop a guest that never ends with Ctrl-C.",
      "Example: reach-wasm wasi wasm-tools/build/c-sha.wasm --dir conformance::data -- /data/HASHING.md",
    ].join("\n"),
  },
  {
    name: "pack",
    usage: "reach-wasm pack init <dir> | validate <dir|archive> [--json] | build <dir> [--out FILE] | sign <dir> --key FILE [--signed-at ISO]",
    summary: "create, validate, archive and sign packs",
    details: [
      "Subcommands:",
      "  init <dir>                      a new runnable pack (one QuickJS tool, a static plan)",
      "  validate <dir|archive> [--json]  load and check it exactly as run does (exit 0 valid, 2 invalid)",
      "  build <dir> [--out FILE]        a deterministic .tar.gz (default <id>-<version>.pack.tar.gz)",
      "  sign <dir> --key FILE           sign the pack digest into <dir>/.reach/signature (Ed25519; see keygen)",
      "",
      "A signed pack whose key is in the trust store (--trust FILE, $REACH_WASM_TRUST_STORE, or",
      "~/.config/reach-wasm/trust.json: {\"version\":1,\"keys\":[{\"publicKey\":\"<hex>\",\"name\":\"…\"}]}) runs unrestricted.",
    ].join("\n"),
  },
  {
    name: "keygen",
    usage: "reach-wasm keygen [--out FILE] [--force] [--json]",
    summary: "write an Ed25519 key pair",
    details: [
      "Writes the private key to FILE (default reach-wasm.key, mode 0600) and the public key to FILE.pub.",
      'Private key file: {"type":"reach-wasm/ed25519-private-key","version":1,"publicKey":"<64 hex>","privateKey":"<64 hex seed>"}',
      'Public key file:  {"type":"reach-wasm/ed25519-public-key","version":1,"publicKey":"<64 hex>"}',
      "Existing files are never overwritten without --force.",
    ].join("\n"),
  },
  {
    name: "node",
    usage: "reach-wasm node serve|delegate|revoke ...",
    summary: "federation: serve runs, delegate to and revoke other nodes",
  },
  {
    name: "conformance",
    usage: "reach-wasm conformance [--json]",
    summary: "run the conformance suite against this implementation",
  },
];

/** Find a command by name. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
