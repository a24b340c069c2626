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
    usage: "reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-] [--seed N] [--out DIR] [--key FILE] [--approve] [--json]",
    summary: "plan and execute a pack in the sandbox; writes {runHash}.capsule.tar.gz",
    pendingIssue: 4,
  },
  {
    name: "replay",
    usage: "reach-wasm replay <capsule> [--no-exec] [--json]",
    summary: "re-execute a capsule against its tape and compare the run hash",
    pendingIssue: 5,
  },
  {
    name: "verify",
    usage: "reach-wasm verify <capsule|pack-dir> [--json]",
    summary: "check a capsule's hash chain and proofs, or a pack's signature, without executing",
    pendingIssue: 5,
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
    usage: "reach-wasm pack init|validate|build|sign ...",
    summary: "create, validate, archive and sign packs",
    pendingIssue: 5,
  },
  {
    name: "keygen",
    usage: "reach-wasm keygen [--out FILE]",
    summary: "write an Ed25519 key pair",
    pendingIssue: 5,
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
