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
    usage: "reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-] [--seed N] [--out DIR] [--key FILE] [--approve] [--unrestricted] [--json] [--on NODE_ID|URL --delegation FILE --dir NODE_DIR]",
    summary: "plan and execute a pack in the sandbox; writes {runHash}.capsule.tar.gz",
    details: [
      "Options:",
      "  --input FILE|-      the run's input / objective as JSON (default {}); - reads stdin",
      "  --seed N            seed of every random stream (decimal 0..2^64-1; default: derived from the input hash)",
      "  --out DIR           where results go (default .reach): DIR/<runHash>.capsule.tar.gz and the readable",
      "                      run files under DIR/runs/<runHash>/ (events, evidence, plan, tape, artifacts, workspace)",
      "  --approve           explicitly approve a risk-3 plan (seed 001 §4); risk 4 and 5 never run",
      "  --approval FILE     a signed approval record of the plan (reach-wasm approve); counts when its key is trusted",
      "  --unrestricted      grant an unsigned or untrusted pack its declared capabilities (default: restricted",
      "                      executor: no network, no writes outside temp/, no memory writes)",
      "  --trust FILE        the trust store (default $REACH_WASM_TRUST_STORE or ~/.config/reach-wasm/trust.json);",
      "                      a pack signed by one of its keys runs unrestricted; a bad signature is refused (exit 2)",
      "  --max-steps N       the plan gate's step limit (default: the pack's run.maxSteps, else 10)",
      "  --step-timeout MS   the per-step watchdog when the plan sets none (default 30000)",
      "  --key FILE          sign the run: proof.json with a run proof and one step proof per step (see keygen)",
      "  --json              print one JSON object on stdout: {runId, status, runHash, capsule, out, error?}",
      "",
      "",
      "Delegated run (federation, seed 003 §6.2): --on NODE_ID|URL --delegation FILE --dir NODE_DIR [--ca FILE]",
      "  sends the pack and the request to the registered node NODE_ID, signed by the node in NODE_DIR, under the",
      "  delegation chain ending in FILE (parents are found in NODE_DIR/delegations/ or beside FILE). The capsule",
      "  that comes back is verified before it is written; its run hash is that of the same run done locally.",
      "  A refusal (FED_*, POLICY_VIOLATION, PACK_*) writes nothing and exits 2.",
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
    name: "show",
    usage: "reach-wasm show <capsule|run-dir> [--json] [--full]",
    summary: "a run as a terminal timeline: steps, tools, durations, fuel, host calls, outputs, violations, stops",
    details: [
      "Takes a capsule or a run directory (<out>/runs/<runHash>/; the capsule beside it is used when present).",
      "Each step: tool, kind, status, virtual duration (events' clock) and real duration (evidence.json, when the run",
      "directory is there), fuel, host calls, input and output (one clipped line; --full prints them whole, and",
      "every host call), policy violations, artifacts, replans and stops (abort or watchdog, with the fuel count).",
      "Colour only on a TTY without NO_COLOR. --json: one object {runHash, status, steps: [...], stops, terminal, …};",
      "inputs and outputs over 4096 characters become a preview unless --full.",
      "Exit 0 shown, 2 the input cannot be read.",
    ].join("\n"),
  },
  {
    name: "report",
    usage: "reach-wasm report <capsule|run-dir> [--out FILE.html] [--trust FILE] [--json]",
    summary: "write one self-contained HTML page of a run: timeline, plan graph, steps, tape, workspace diff, verification",
    details: [
      "The page loads nothing (no network, no external script, style or font; a strict Content-Security-Policy),",
      "shows the run's summary, a timeline of steps and host calls, the plan as a graph, each step's input, output",
      "and tape (with the blobs it references), the workspace before/after diff, the artifacts (images inline, all",
      "downloadable), every verification check and the proof's signer (--trust FILE: the trust store to judge it).",
      "Default --out: <capsule without .capsule.tar.gz>.report.html beside the capsule. --json: {out, runHash, status,",
      "verified, bytes}. Exit 0 written (the page shows a failed run or a failed verification), 2 unreadable input.",
    ].join("\n"),
  },
  {
    name: "diff",
    usage: "reach-wasm diff <capsuleA> <capsuleB> [--json]",
    summary: "where two runs first differ (step, event, field, host call) and what else differs",
    details: [
      "First divergence: the first event whose hash differs, its step, the first differing field, and the first",
      "differing host call of that step. Then: inputs (request.json), pack files, tool modules (the module",
      "commitments), workspace before and after, step outputs, other entries. A different proof alone (another",
      "signer, or unsigned) is noted but the runs are identical. --json: one object {identical, firstDivergence, …}.",
      "Exit 0 identical, 1 the runs differ, 2 either capsule cannot be read.",
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
    usage: "reach-wasm pack init <dir> [--template NAME] | validate <dir|archive> [--json] | build <dir> [--out FILE] | sign <dir> --key FILE [--signed-at ISO] | test [dir] [--trust FILE] [--json]",
    summary: "create, validate, archive, sign and test packs",
    details: [
      "Subcommands:",
      "  init <dir> [--template NAME]    a new runnable pack: one tool in NAME = js (default), python, c, rust, as",
      "                                  (AssemblyScript), wat (WebAssembly text) or component (C, world",
      "                                  reach:tool/tool); its source, build.sh (offline; see doctor) and tests/",
      "  validate <dir|archive> [--json]  load and check it exactly as run does (exit 0 valid, 2 invalid)",
      "  build <dir> [--out FILE]        a deterministic .tar.gz (default <id>-<version>.pack.tar.gz)",
      "  sign <dir> --key FILE           sign the pack digest into <dir>/.reach/signature (Ed25519; see keygen)",
      "  test [dir] [--trust FILE] [--json]",
      "                                  run tests/*.json ({\"input\", \"seed\"?, \"expect\": {\"output\"} | {\"error\": CODE}})",
      "                                  through the engine; a table of name, result, duration, difference;",
      "                                  exit 1 when a case fails, 2 for a malformed test file",
      "",
      "A signed pack whose key is in the trust store (--trust FILE, $REACH_WASM_TRUST_STORE, or",
      "~/.config/reach-wasm/trust.json: {\"version\":1,\"keys\":[{\"publicKey\":\"<hex>\",\"name\":\"…\"}]}) runs unrestricted.",
      "Authoring guide: docs/authoring.md.",
    ].join("\n"),
  },
  {
    name: "trust",
    usage: "reach-wasm trust add <KEY.pub|HEX> [--name NAME] | list | remove <HEX|NAME> [--trust FILE] [--json]",
    summary: "manage the trust store: keys whose signed packs run unrestricted and whose approvals count",
    details: [
      "The trust store is --trust FILE, else $REACH_WASM_TRUST_STORE, else ~/.config/reach-wasm/trust.json.",
      "  add KEY.pub|HEX [--name NAME]  trust a public key (a .pub file from keygen, or 64 hex digits)",
      "  list                          the trusted keys",
      "  remove HEX|NAME               stop trusting a key (exit 1 when there is no such key)",
    ].join("\n"),
  },
  {
    name: "approve",
    usage: "reach-wasm approve <PLAN_HASH> --key FILE [--out FILE] [--json]",
    summary: "sign an approval of a risk-3 plan (pass it to run with --approval FILE)",
    details: [
      "A risk-3 plan runs only with explicit approval from outside the plan (seed 001 §4): --approve, or an approval",
      "record signed by a key in the run's trust store. A run refused with PLAN_APPROVAL_REQUIRED prints the plan hash;",
      "sign it here and run again with --approval FILE. An approval object a planner writes into its plan does not count.",
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
    name: "serve",
    usage: "reach-wasm serve [--db URL | --data DIR] [--listen HOST:PORT] [--workers N] [--auth] [--max-body BYTES] [--trust FILE] [--key FILE] [--stale-after S] [--json]",
    summary: "the run service: an HTTP API (POST /runs, /agent/run, events, capsules) with workers, on PGlite or PostgreSQL",
    details: [
      "Options:",
      "  --db URL            a PostgreSQL server (postgres://user:pass@host:port/db; default $REACH_WASM_DB); workers on",
      "                      any number of machines share it. Without it: the embedded store (PGlite) in --data",
      "  --data DIR          the embedded store's directory (default $REACH_WASM_DATA or ~/.local/share/reach-wasm/service)",
      "  --listen HOST:PORT  the API address (default 127.0.0.1:7411; port 0 picks a free one)",
      "  --workers N         runs executed at once inside this process (default 1 on the embedded store, 0 with --db)",
      "  --auth              require bearer tokens even on loopback (always required on other addresses and with --db)",
      "  --max-body BYTES    the largest request body (default 67108864)",
      "  --trust FILE        packs signed by its keys run unrestricted (default: the trust store of `run`)",
      "  --key FILE          sign every capsule with this key (see keygen)",
      "  --stale-after S     a worker silent this long is presumed dead and its runs re-queued (default 45)",
      "",
      "API: POST /runs and /agent/run, GET /runs, GET /runs/:id[?wait=S], GET /runs/:id/events (Server-Sent Events),",
      "GET /runs/:id/capsule, POST /runs/:id/cancel, POST /packs, /openapi.json. Runs until SIGINT/SIGTERM.",
      "Example: reach-wasm serve & reach-wasm submit packs/hello --wait",
    ].join("\n"),
  },
  {
    name: "worker",
    usage: "reach-wasm worker [--db URL | --data DIR] [--concurrency N] [--trust FILE] [--key FILE] [--stale-after S] [--json]",
    summary: "take runs from the service's queue and execute them (any number, on any machine sharing --db)",
    details: [
      "Runs until SIGINT/SIGTERM; runs still going after 10 s go back to the queue. A worker that dies (SIGKILL, lost",
      "machine) stops heartbeating; after --stale-after seconds (default 45) another worker re-runs its runs. A run",
      "executed twice keeps one capsule; a different second result is recorded as a determinism incident.",
      "--concurrency N: runs claimed at once (default 4; more slots overlap database round trips). The embedded store",
      "serves one process: use serve --workers there.",
    ].join("\n"),
  },
  {
    name: "submit",
    usage: "reach-wasm submit <pack-dir|pack.tar.gz> [--server URL] [--token T] [--input FILE|-|JSON] [--seed N] [--request-id ID] [--approve] [--wait] [--out DIR] [--json]",
    summary: "send a run to a run service; --wait follows it (progress on stderr) and exits as `run` does",
    details: [
      "  --server URL   the service (default $REACH_WASM_SERVER or http://127.0.0.1:7411)",
      "  --token T      a bearer token (default $REACH_WASM_TOKEN; see tokens create)",
      "  --wait         follow the run's events on stderr until it ends; exit 0 COMPLETED, 1 FAILED or ABORTED",
      "  --out DIR      with --wait: save the capsule as DIR/<runHash>.capsule.tar.gz",
      "  --json         one object on stdout: {runId, status} (with --wait: the run record, with runHash)",
      "The pack is uploaded only when the service does not have it (by digest). Exit 2: refused or unreachable.",
    ].join("\n"),
  },
  {
    name: "runs",
    usage: "reach-wasm runs list [--status S] [--pack P] [--limit N] [--cursor C] | show <runId> [--wait] | cancel <runId> | capsule <runId> [--out FILE|DIR]  [--server URL] [--token T] [--json]",
    summary: "list, show, cancel runs of a run service and fetch their capsules",
  },
  {
    name: "tokens",
    usage: "reach-wasm tokens create --tenant NAME [--db URL | --data DIR] [--json]",
    summary: "create a bearer token for a tenant of the run service (printed once on stdout)",
  },
  {
    name: "node",
    usage: "reach-wasm node init|serve|trust|list|forget --dir DIR ...",
    summary: "federation: a node's identity, its registry of peers, and serving it (seed 003 §6)",
    details: [
      "Subcommands:",
      "  init --dir DIR --endpoint URL       a new node: DIR/node.json (nodeId UUID v4, publicKey, endpoint) and",
      "                                      DIR/node.key (0600); refuses a DIR that is not empty",
      "  serve --dir DIR [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE] [--insecure-loopback]",
      "        [--ca FILE] [--pull-interval SECONDS] [--json]",
      "                                      serve the node over HTTPS until Ctrl-C (plain HTTP only on a loopback",
      "                                      address with --insecure-loopback); runs delegated packs; pulls revocations",
      "                                      from every peer every SECONDS (default 30, at most 30); --ca trusts extra",
      "                                      CA certificates (PEM) for peers; --json prints {nodeId, url, endpoint}",
      "  trust --dir DIR PEER_NODE_JSON      register a peer (its node.json); only registered nodes are heard",
      "  list --dir DIR [--json]             this node, its peers and the revocations it holds",
      "  forget --dir DIR NODE_ID            unregister a peer",
      "",
      "Every message between nodes is signed by the sender's node key over its canonical JSON, carries a nonce and a",
      "timestamp, and is refused when unsigned (FED_SIGNATURE_MISSING), badly signed (FED_SIGNATURE_INVALID), from an",
      "unregistered node (FED_NODE_UNAUTHORIZED), replayed (FED_MESSAGE_REPLAYED) or outside ±120 s (FED_MESSAGE_STALE).",
      "Example: reach-wasm node init --dir node-a --endpoint https://127.0.0.1:8443",
    ].join("\n"),
  },
  {
    name: "delegate",
    usage: "reach-wasm delegate --dir DIR --to NODE_ID --scope CAP[,CAP...] --expires DURATION|ISO [--parent DELEGATION_FILE] --out FILE [--json]",
    summary: "grant a registered node a signed, scoped, expiring delegation (seed 003 §6.2)",
    details: [
      "Scope entries: tool:NAME, resource:URI (a URI ending in / covers what is under it), permission:NAME",
      "(network, filesystem, execution, env_access), host:NAME (host:*.example.com covers subdomains). A delegated",
      "run may use only what the scope covers: everything its pack declares must lie within it (else POLICY_VIOLATION).",
      "--expires: a duration (90s, 30m, 12h, 7d) or an ISO 8601 UTC instant.",
      "--parent FILE re-delegates a delegation this node holds: the scope must be a subset of the parent's and the",
      "expiry no later (else FED_DELEGATION_INVALID). FILE is written as a delegation document",
      "(conformance/schemas/delegation.schema.json); the node keeps a copy, and the parents, under DIR/delegations/.",
      "Example: reach-wasm delegate --dir node-a --to <node-b id> --scope tool:wordcount --expires 1h --out a-to-b.json",
    ].join("\n"),
  },
  {
    name: "revoke",
    usage: "reach-wasm revoke --dir DIR DELEGATION_FILE [--no-push] [--ca FILE] [--json]",
    summary: "revoke a delegation this node granted and push the revocation to every registered peer",
    details: [
      "The revocation is signed by this node and kept in DIR/revocations/; it is pushed to every registered peer",
      "(--no-push skips that), and every serving node pulls revocations from its peers at least every 30 s, so the",
      "delegation, and every chain through it, is refused everywhere within 60 s (FED_DELEGATION_REVOKED).",
      "Peers that missed the push learn it from this node while it serves, or from any peer that received it.",
    ].join("\n"),
  },
  {
    name: "doctor",
    usage: "reach-wasm doctor [--json | --env]",
    summary: "which toolchains for building tools are present, and how to install the missing ones",
    details: [
      "Probes each toolchain of the pack templates by building something small: clang + wasi-libc (c), rustc for",
      "wasm32-wasi (rust), asc (as), binaryen wasm-as (wat), clang + jco (component); QuickJS and MicroPython ship",
      "with reach-wasm. Missing ones come with the exact apt-get / npm commands that install them.",
      "--env prints export lines for the templates' build.sh: eval \"$(reach-wasm doctor --env)\".",
      "--json: {ok, toolchains: [{name, templates, title, present, version, env, problem, install}]}. Exit 0 always",
      "(2 only for a bad invocation).",
    ].join("\n"),
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
