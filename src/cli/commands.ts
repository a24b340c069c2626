/**
 * The command table of `reach-wasm` (ARCHITECTURE.md "Command line"): each command's declaration (`specs-*.ts`, the
 * arguments `options.ts` parses) with its summary and the notes of its `--help` (`help.ts`). Commands that are not
 * built yet say so and exit 2 (bad invocation): they never pretend to work.
 * @module
 */
import type { CommandSpec } from "./help.ts";
import { defineArgs } from "./options.ts";
import { REDACT, REDACT_NOTES } from "./specs-redact.ts";
import { DIFF, REPLAY, REPORT, RUN, RUN_NOTES, SHOW, VERIFY, WASI } from "./specs-run.ts";
import { APPROVE, KEYGEN, MCP, PACK_SUBCOMMANDS, TRUST_SUBCOMMANDS } from "./specs-pack.ts";
import { PLAN_SUBCOMMANDS } from "./specs-plan.ts";
import { RUNS_SUBCOMMANDS, SERVE, SUBMIT, TOKENS_CREATE, WORKER } from "./specs-service.ts";
import { ATTEST, ATTEST_NOTES } from "./specs-attest.ts";
import { FORK, LINEAGE_NOTES, RESUME } from "./specs-lineage.ts";
import { CONFORMANCE, DELEGATE, DOCTOR, NODE_SUBCOMMANDS, REVOKE } from "./specs-federation.ts";
import { EXPORT_SUBCOMMANDS } from "./specs-export.ts";

export type { CommandSpec } from "./help.ts";

/** A command made of subcommands (it has no options of its own). */
const group = (name: string) => defineArgs({ name, positionals: ["<subcommand>"], options: {} });

/** Every command of ARCHITECTURE.md, in the order `--help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  { ...RUN, notes: RUN_NOTES },
  {
    ...REPLAY,
    summary: "re-execute a capsule against its tape and compare the run hash",
    notes: [
      "Re-runs the capsule's own pack with the recorded input and seed; every host call is answered from the tape",
      "(no network, no host file). Any difference is a REPLAY_DIVERGENCE naming the step, the event index and the",
      "first differing field. A redacted capsule replays up to the first step whose host calls are redacted, then",
      "stops with REPLAY_REDACTED naming it; without request.json, plan.json, tape.jsonl or a blob nothing is run",
      "and REPLAY_REDACTED names what is missing (no verdict on the run either way).",
      "Exit 0 matched, 1 diverged, 2 the capsule cannot be read (malformed, malicious, truncated, over a limit),",
      "3 the capsule is redacted where replay needs it (REPLAY_REDACTED).",
    ].join("\n"),
  },
  {
    ...VERIFY,
    summary: "check a capsule's hash chain and proofs, or a pack's signature, without executing",
    notes: [
      "Capsule checks: files (each entry against capsule.json), events (hash chain, ordering, run hash), outputs,",
      "tape (hashes, blobs), pack (digest), pack.signature, plan (locked hash), plan.sha256 (the plan file against",
      "EXECUTION_HEADER.json's plan_sha256, seed 001 §6), proof (run and step proofs), and for a",
      "redacted capsule redaction (what it lacks; every removed value is still committed by the run hash).",
      "Each failed check names where the damage is.",
      "--attestation FILE (reach-wasm attest): attestation.signature (DSSE, by a key in the trust store or --key:",
      "REPLAY_PROOF_INVALID), attestation.signer (trusted, the one the predicate names: FED_TRUST_VIOLATION),",
      "attestation.subject (the capsule file's SHA-256) and attestation.predicate (run hash, pack, status, tools,",
      "capability audit as the capsule holds them): REPLAY_HASH_MISMATCH. Not an in-toto envelope: exit 2.",
      "Exit 0 valid, 1 a check failed, 2 the input cannot be read at all.",
    ].join("\n"),
  },
  { ...ATTEST, summary: "sign an in-toto attestation of a capsule (a DSSE envelope; check it with verify --attestation)", notes: ATTEST_NOTES },
  { ...REDACT, notes: REDACT_NOTES },
  {
    ...SHOW,
    summary: "a run as a terminal timeline: steps, tools, durations, fuel, host calls, outputs, violations, stops",
    notes: [
      "Takes a capsule or a run directory (<out>/runs/<runHash>/; the capsule beside it is used when present).",
      "Each step: tool, kind, status, virtual duration (events' clock) and real duration (evidence.json, when the run",
      "directory is there), fuel, host calls, input and output (one clipped line unless --full), policy violations,",
      "artifacts, replans and stops (abort or watchdog, with the fuel count). Colour only on a TTY without NO_COLOR.",
      "Exit 0 shown, 2 the input cannot be read.",
    ].join("\n"),
  },
  {
    ...REPORT,
    summary: "write one self-contained HTML page of a run: timeline, plan graph, steps, tape, workspace diff, verification",
    notes: [
      "The page loads nothing (no network, no external script, style or font; a strict Content-Security-Policy),",
      "shows the run's summary, a timeline of steps and host calls, the plan as a graph, each step's input, output",
      "and tape (with the blobs it references), the workspace before/after diff, the artifacts (images inline, all",
      "downloadable), every verification check and the proof's signer; the workspace and memory after each step",
      "(where the capsule can say: otherwise the page says why), and the run's lineage (fork, resume, session)",
      "linked to the pages of the other runs given.",
      "Exit 0 written (the page shows a failed run or a failed verification), 2 unreadable input.",
    ].join("\n"),
  },
  {
    ...DIFF,
    summary: "where two runs first differ (step, event, field, host call) and what else differs",
    notes: [
      "First divergence: the first event whose hash differs, its step, the first differing field, and the first",
      "differing host call of that step. Then: inputs (request.json), pack files, tool modules (the module",
      "commitments), workspace before and after, step outputs, other entries. A different proof alone (another",
      "signer, or unsigned) is noted but the runs are identical.",
      "Exit 0 identical, 1 the runs differ, 2 either capsule cannot be read.",
    ].join("\n"),
  },
  { ...FORK, notes: ["Example: reach-wasm fork .reach/<runHash>.capsule.tar.gz --at 2 --args '{\"text\":\"other\"}' --out forks", LINEAGE_NOTES].join("\n") },
  { ...RESUME, notes: ["Example: reach-wasm resume .reach/<runHash>.capsule.tar.gz --out resumed", LINEAGE_NOTES].join("\n") },
  {
    ...group("export"),
    summary: "a run in a standard format: `export otel` writes its OpenTelemetry traces (OTLP/JSON)",
    subcommands: EXPORT_SUBCOMMANDS,
    notes: [
      "export otel: one trace per run, its id derived from the run hash, each span id from the hash of the event that",
      "opened it (exporting twice gives the same bytes); a span for the run, each step, each tool call (GenAI",
      "execute_tool) and each MCP call (a session run: MCP tools/call), host calls as span events, times from the",
      "capsule's virtual clock. Live export while running: --otlp-endpoint URL on run, mcp, serve and worker.",
      "See docs/opentelemetry.md. Exit 0 written, 2 unreadable or damaged input.",
    ].join("\n"),
  },
  {
    ...WASI,
    summary: "run any WASI preview1 command under the deterministic shim",
    notes: [
      "stdin is empty. The guest's stdout and stderr pass through; the exit code is the guest's own (a trap exits 1,",
      "a bad invocation 2). There is no fuel limit here: stop a guest that never ends with Ctrl-C.",
      "Example: reach-wasm wasi wasm-tools/build/c-sha.wasm --dir conformance::data -- /data/HASHING.md",
    ].join("\n"),
  },
  {
    ...group("pack"),
    summary: "create, validate, archive, sign and test packs",
    subcommands: PACK_SUBCOMMANDS,
    notes: [
      "A signed pack whose key is in the trust store (--trust FILE, $REACH_WASM_TRUST_STORE, or",
      "~/.config/reach-wasm/trust.json: {\"version\":1,\"keys\":[{\"publicKey\":\"<hex>\",\"name\":\"…\"}]}) runs unrestricted.",
      "Authoring guide: docs/authoring.md.",
    ].join("\n"),
  },
  {
    ...group("plan"),
    summary: "check a plan file against seed 001's rules (the counterpart of its rgpt-plan-validate)",
    subcommands: PLAN_SUBCOMMANDS,
    notes: [
      "A plan lists its work as seed 001's tasks (task_id, description, type, tools, paths) or as steps. A task that",
      "names exactly one tool and carries \"arguments\" executes like a step; any other task is reported with",
      "PLAN_TASK_NOT_EXECUTABLE and why. Fields the schema does not name are kept and hashed with the plan.",
      "`pack validate` checks a pack's static plan the way `run` does (tools declared, scope, return_spec).",
    ].join("\n"),
  },
  {
    ...group("trust"),
    summary: "manage the trust store: keys whose signed packs run unrestricted and whose approvals count",
    subcommands: TRUST_SUBCOMMANDS,
    notes: "The trust store is --trust FILE, else $REACH_WASM_TRUST_STORE, else ~/.config/reach-wasm/trust.json.",
  },
  {
    ...MCP,
    summary: "serve a pack's tools to agents over MCP (stdio or Streamable HTTP): each MCP session a chain of recorded session runs",
    notes: [
      "tools/list: the pack's tools (description, input and output schema) and the infra tools (write_memory, read_memory,",
      "write_temp, read_lines, exec_python). tools/call: one recorded step, checked like a plan step; the output as",
      "structuredContent and JSON text. A mistake never ends the session: an unknown tool is JSON-RPC error -32602,",
      "arguments that do not match the schema, a failing or timed-out tool answer isError (not recorded when refused),",
      "a message over 4 MiB is answered with an error for its id. A policy violation or a spent budget ends the current",
      "run (its capsule is written at once) and the next call continues the session in a new run from the same workspace",
      "and memory, with a fresh budget. The workspace's files are resources (workspace:///<path>). Calls run one at a",
      "time in arrival order: one cancelled (notifications/cancelled) while it waits never runs and is not recorded;",
      "one already running goes on to its end (its step timeout at most) and is recorded.",
      "--token, --allowed-host, --allowed-origin, --max-sessions, --max-sessions-per-client and --idle-timeout apply to",
      "--http only.",
      "",
      "stdio: the session's last run ends COMPLETED when stdin ends (the client disconnected), ABORTED on SIGINT/SIGTERM.",
      "Every capsule is written atomically the moment its run ends and its path printed on stderr (stdout is the",
      "protocol's). Exit 0 when every session run COMPLETED and was written, 1 otherwise, 2 bad invocation or pack.",
      'Client configuration, in a project that installed the package (README "Agents over MCP"):',
      '  {"mcpServers": {"reach": {"command": "npx", "args": ["--no", "reach-wasm", "mcp", "node_modules/reach-wasm/packs/hello"]}}}',
    ].join("\n"),
  },
  {
    ...APPROVE,
    summary: "sign an approval of a risk-3 plan (pass it to run with --approval FILE)",
    notes: [
      "A risk-3 plan runs only with explicit approval from outside the plan (seed 001 §4): --approve, or an approval",
      "record signed by a key in the run's trust store. A run refused with PLAN_APPROVAL_REQUIRED prints the plan hash;",
      "sign it here and run again with --approval FILE. An approval object a planner writes into its plan does not count.",
    ].join("\n"),
  },
  {
    ...KEYGEN,
    summary: "write an Ed25519 key pair",
    notes: [
      'Private key file: {"type":"reach-wasm/ed25519-private-key","version":1,"publicKey":"<64 hex>","privateKey":"<64 hex seed>"}',
      'Public key file:  {"type":"reach-wasm/ed25519-public-key","version":1,"publicKey":"<64 hex>"}',
      "Existing files are never overwritten without --force.",
    ].join("\n"),
  },
  {
    ...SERVE,
    summary: "the run service: an HTTP API (POST /runs, /agent/run, events, capsules) with workers, on PGlite or PostgreSQL",
    notes: [
      "API: POST /runs and /agent/run, GET /runs, GET /runs/:id[?wait=S], GET /runs/:id/events (Server-Sent Events),",
      "GET /runs/:id/capsule, POST /runs/:id/cancel, POST /packs, /openapi.json. Runs until SIGINT/SIGTERM. A database",
      "that is down at start is waited for (the address answers 503 with Retry-After meanwhile). On the embedded store,",
      "runs a killed serve left executing go back to the queue as the next one starts on its --data (no --stale-after wait).",
      "Example: reach-wasm serve & reach-wasm submit packs/hello --wait",
    ].join("\n"),
  },
  {
    ...WORKER,
    summary: "take runs from the service's queue and execute them (any number, on any machine sharing --db)",
    notes: [
      "Runs until SIGINT/SIGTERM; runs still going after 10 s go back to the queue. A worker that dies (SIGKILL, lost",
      "machine) stops heartbeating; after --stale-after seconds (default 45) another worker re-runs its runs (on the",
      "embedded store at once: the next process on its --data hands them back to the queue as it starts). A run",
      "executed twice keeps one capsule; a different second result is recorded as a determinism incident.",
      "The embedded store serves one process: use serve --workers there. A database that goes away is waited out,",
      "and the ends of runs that finish meanwhile are stored when it is back.",
    ].join("\n"),
  },
  {
    ...SUBMIT,
    summary: "send a run to a run service; --wait follows it (progress on stderr) and exits as `run` does",
    notes: [
      "The pack is uploaded only when the service does not have it (by digest). Exit 2: refused or unreachable.",
      "A service still starting is waited for $REACH_WASM_CONNECT_WAIT seconds (default 30); one that takes the",
      "connection but does not answer, $REACH_WASM_ANSWER_TIMEOUT seconds (default 120; a --wait poll's time on top).",
    ].join("\n"),
  },
  { ...group("runs"), summary: "list, show, cancel runs of a run service and fetch their capsules", subcommands: RUNS_SUBCOMMANDS },
  { ...group("tokens"), summary: "create a bearer token for a tenant of the run service (printed once on stdout)", subcommands: [TOKENS_CREATE] },
  {
    ...group("node"),
    summary: "federation: a node's identity, its registry of peers, and serving it (seed 003 §6)",
    subcommands: NODE_SUBCOMMANDS,
    notes: [
      "Every message between nodes is signed by the sender's node key over its canonical JSON, carries a nonce and a",
      "timestamp, and is refused when unsigned (FED_SIGNATURE_MISSING), badly signed (FED_SIGNATURE_INVALID), from an",
      "unregistered node (FED_NODE_UNAUTHORIZED), replayed (FED_MESSAGE_REPLAYED) or outside ±120 s (FED_MESSAGE_STALE).",
      "Example: reach-wasm node init --dir node-a --endpoint https://127.0.0.1:8443",
    ].join("\n"),
  },
  {
    ...DELEGATE,
    summary: "grant a registered node a signed, scoped, expiring delegation (seed 003 §6.2)",
    notes: [
      "Scope entries: tool:NAME, resource:URI (a URI ending in / covers what is under it), permission:NAME",
      "(network, filesystem, execution, env_access), host:NAME (host:*.example.com covers subdomains). A delegated",
      "run may use only what the scope covers: everything its pack declares must lie within it (else POLICY_VIOLATION).",
      "The built-in infrastructure tools need their own tool: entry (tool:write_memory, tool:read_memory,",
      "tool:write_temp, tool:read_lines, tool:exec_python); a plan that calls one the scope does not name is refused",
      "(POLICY_VIOLATION) before it runs.",
      "--parent FILE: the scope must be a subset of the parent's and the expiry no later (else FED_DELEGATION_INVALID).",
      "FILE is written as a delegation document (conformance/schemas/delegation.schema.json); the node keeps a copy,",
      "and the parents, under DIR/delegations/.",
      "Example: reach-wasm delegate --dir node-a --to <node-b id> --scope tool:wordcount --expires 1h --out a-to-b.json",
    ].join("\n"),
  },
  {
    ...REVOKE,
    summary: "revoke a delegation this node granted (or one granted under it) and push the revocation to every registered peer",
    notes: [
      "Only the delegation's delegator, or the delegator of a link above it in its chain, may revoke it (else",
      "FED_TRUST_VIOLATION); the links above are found as for --parent (DIR/delegations/, or files beside FILE).",
      "The revocation is signed by this node and kept in DIR/revocations/; it is pushed to every registered peer",
      "(--no-push skips that), and every serving node pulls revocations from its peers at least every 30 s, so the",
      "delegation, and every chain through it, is refused everywhere within 60 s (FED_DELEGATION_REVOKED).",
      "Peers that missed the push learn it from this node while it serves, or from any peer that received it.",
    ].join("\n"),
  },
  {
    ...DOCTOR,
    summary: "which toolchains for building tools are present, and how to install the missing ones",
    notes: [
      "Probes each toolchain of the pack templates by building something small: clang + wasi-libc (c), rustc for",
      "wasm32-wasi (rust), asc (as), binaryen wasm-as (wat), clang + jco (component); QuickJS and MicroPython ship",
      "with reach-wasm. Missing ones come with the exact apt-get / npm commands that install them.",
      "--json and --env exclude each other. Exit 0 always (2 only for a bad invocation).",
    ].join("\n"),
  },
  {
    ...CONFORMANCE,
    summary: "run the seed 003 §10 conformance suite against this installation or another implementation",
    notes: [
      "Five categories: schema, determinism, replay, policy, federation. Each case names the clause it checks. The",
      "implementation is tested only through its CLI: it runs the example packs twice, replays and verifies capsules,",
      "recomputes their hash chains, runs the failing packs, and sets up a delegation chain between nodes.",
      "Progress on stderr, one line per case. Exit 0 when every case passed, 1 when one failed, 2 bad invocation.",
      "Example: reach-wasm conformance --impl \"node ../other/cli.js\" --category determinism,replay --json",
    ].join("\n"),
  },
];

/**
 * Find a command by name.
 * @param name the command's name
 * @returns its declaration, or undefined
 */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
