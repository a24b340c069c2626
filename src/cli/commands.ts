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
