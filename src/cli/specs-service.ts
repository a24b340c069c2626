/**
 * The declarations of the run service's commands (`serve`, `worker`, `submit`, `runs`, `tokens`): their arguments,
 * parsed by `options.ts`, and their help, written by `help.ts`.
 * @module
 */
import { defineArgs, integer, seed } from "./options.ts";
import { HTTP_GUARD, listenOf } from "./specs-pack.ts";
import { OTLP_ENDPOINT } from "./specs-export.ts";
import { SECRET_OPTION } from "./secret-args.ts";

const json = (shape: string) => ({ type: "boolean", help: `print one JSON object on stdout: ${shape}` }) as const;

/** `--db` and `--data`: where the service's store is. */
const STORE = {
  db: { type: "string", value: "URL", help: "a PostgreSQL server (postgres://user:pass@host:port/db; default $REACH_WASM_DB); workers on\nany number of machines share it. Without it: the embedded store (PGlite) in --data" },
  data: { type: "string", value: "DIR", help: "the embedded store's directory (default $REACH_WASM_DATA or ~/.local/share/reach-wasm/service);\n--db and --data exclude each other" },
} as const;

/** What `serve` and `worker` share. */
const RUNNER = {
  trust: { type: "string", value: "FILE", help: "packs signed by its keys run unrestricted (default: the trust store of `run`); read\nagain when it changes, so `reach-wasm trust add` reaches the next run without a restart" },
  key: { type: "string", value: "FILE", help: "sign every capsule with this key (see keygen)" },
  "stale-after": { type: "string", value: "S", parse: integer(1, 86_400), help: "a worker silent this long is presumed dead and its runs re-queued (default 45)" },
  "db-wait": { type: "string", value: "S", parse: integer(0, 10_000_000), help: "wait this long for a database that is down at start (default: until it answers);\n0 fails at once" },
  ...OTLP_ENDPOINT,
} as const;

/** `reach-wasm serve`. */
export const SERVE = defineArgs({
  name: "serve",
  options: {
    ...STORE,
    listen: { type: "string", value: "HOST:PORT", parse: listenOf, help: "the API address (default 127.0.0.1:7411; port 0 picks a free one)" },
    workers: { type: "string", value: "N", parse: integer(0, 64), help: "runs executed at once inside this process (default 1 on the embedded store, 0 with --db)" },
    auth: { type: "boolean", help: "require bearer tokens even on loopback (always required on other addresses and with --db)" },
    "max-body": { type: "string", value: "BYTES", parse: integer(1024, 1024 * 1024 * 1024), help: "the largest request body (default 67108864)" },
    ...RUNNER,
    ...HTTP_GUARD,
    "max-streams-per-client": { type: "string", value: "N", parse: integer(1, 100_000), help: "event streams and ?wait= long polls one client address holds at once (default 256)" },
    "stream-idle-timeout": { type: "string", value: "S", parse: integer(1, 86_400), help: "an event stream without an event for S seconds ends; clients resume (default 600)" },
    json: json("{url, store, workers, tokensRequired} once it listens"),
  },
});

/** `reach-wasm worker`. */
export const WORKER = defineArgs({
  name: "worker",
  options: {
    ...STORE,
    concurrency: { type: "string", value: "N", parse: integer(1, 64), help: "runs claimed at once (default 4; more slots overlap database round trips)" },
    ...RUNNER,
    poll: { type: "string", value: "MS", parse: integer(50, 60_000), help: "how often a worker without news looks at the queue (default 2000); it is woken at\nonce when a run is queued" },
    json: json("{worker, store, concurrency} once it works"),
  },
});

/** `--server` and `--token`: the service a client command talks to. */
const CLIENT = {
  server: { type: "string", value: "URL", help: "the service (default $REACH_WASM_SERVER or http://127.0.0.1:7411)" },
  token: { type: "string", value: "T", help: "a bearer token (default $REACH_WASM_TOKEN; see tokens create)" },
} as const;

/** `reach-wasm submit`. */
export const SUBMIT = defineArgs({
  name: "submit",
  positionals: ["<pack-dir|pack.tar.gz>"],
  options: {
    ...CLIENT,
    input: { type: "string", value: "FILE|-|JSON", help: "the run's input, as for run" },
    seed: { type: "string", value: "N", parse: seed, help: "the run's seed, as for run" },
    "request-id": { type: "string", value: "ID", help: "the caller's correlation id, as for run" },
    approve: { type: "boolean", help: "approve a risk-3 plan, as for run" },
    "max-steps": { type: "string", value: "N", parse: integer(1, 100), help: "the plan gate's step limit, as for run" },
    "step-timeout": { type: "string", value: "MS", parse: integer(1, 3_600_000), help: "the step timeout, as for run" },
    secret: { ...SECRET_OPTION, help: `${SECRET_OPTION.help};\nsent to the service once with the submission, held in its memory for this run only` },
    wait: { type: "boolean", help: "follow the run's events on stderr until it ends; exit 0 COMPLETED, 1 FAILED or ABORTED" },
    out: { type: "string", value: "DIR", help: "with --wait: save the capsule as DIR/<runHash>.capsule.tar.gz" },
    json: json("{runId, status} (with --wait: the run record, with runHash)"),
  },
});

const clientJson = { ...CLIENT, json: json("the service's answer") } as const;
/** `reach-wasm runs`: its subcommands. */
export const RUNS_LIST = defineArgs({
  name: "runs list",
  summary: "the runs, newest first",
  options: {
    status: { type: "string", value: "S", help: "only runs in this state (PENDING, EXECUTING, COMPLETED, FAILED, ABORTED)" },
    pack: { type: "string", value: "ID|DIGEST", help: "only runs of this pack" },
    limit: { type: "string", value: "N", parse: integer(1, 200), help: "runs per page" },
    cursor: { type: "string", value: "C", help: "the next page (from the previous page's cursor)" },
    ...clientJson,
  },
});
export const RUNS_SHOW = defineArgs({ name: "runs show", summary: "one run", positionals: ["<runId>"], options: { wait: { type: "boolean", help: "wait until the run ends" }, ...clientJson } });
export const RUNS_CANCEL = defineArgs({ name: "runs cancel", summary: "stop a run", positionals: ["<runId>"], options: clientJson });
export const RUNS_CAPSULE = defineArgs({
  name: "runs capsule",
  summary: "download a run's capsule (its run hash is checked)",
  positionals: ["<runId>"],
  options: { out: { type: "string", value: "FILE|DIR", help: "where it goes (default: <runHash>.capsule.tar.gz here)" }, ...clientJson },
});
export const RUNS_SUBCOMMANDS = [RUNS_LIST, RUNS_SHOW, RUNS_CANCEL, RUNS_CAPSULE] as const;

/** `reach-wasm tokens create`. */
export const TOKENS_CREATE = defineArgs({
  name: "tokens create",
  summary: "a new bearer token for the tenant, printed once on stdout",
  options: { tenant: { type: "string", value: "NAME", required: true, help: "the tenant the token acts for" }, ...STORE, json: json("{tenant, token}") },
});
