/**
 * The declarations of the federation commands (`node`, `delegate`, `revoke`) and of `doctor` and `conformance`:
 * their arguments, parsed by `options.ts`, and their help, written by `help.ts`.
 * @module
 */
import { ArgError, defineArgs } from "./options.ts";
import { HTTP_GUARD } from "./specs-pack.ts";

const json = (shape: string) => ({ type: "boolean", help: `print one JSON object on stdout: ${shape}` }) as const;
const DIR = { type: "string", value: "DIR", required: true, help: "the node's directory (node.json, node.key, its peers and delegations)" } as const;
const CA = { type: "string", value: "FILE", help: "extra CA certificates (PEM) to trust for peers" } as const;

function seconds(text: string): number {
  if (!/^\d+(\.\d{1,3})?$/.test(text)) throw new ArgError("expects seconds such as 30 or 0.5");
  return Math.round(Number(text) * 1000);
}

/** `reach-wasm node`: its subcommands. */
export const NODE_INIT = defineArgs({
  name: "node init",
  summary: "a new node: DIR/node.json (nodeId UUID v4, publicKey, endpoint) and DIR/node.key (0600);\nrefuses a DIR that is not empty",
  options: { dir: DIR, endpoint: { type: "string", value: "URL", required: true, help: "the https:// address peers reach this node at" }, json: json("node.json's identity and dir") },
});
export const NODE_SERVE = defineArgs({
  name: "node serve",
  summary: "serve the node over HTTPS until Ctrl-C; runs delegated packs; pulls revocations from every peer;\npeers reach it by its endpoint's host or the listen address; web pages are refused",
  options: {
    dir: DIR,
    listen: { type: "string", value: "HOST:PORT", help: "the address (default: the endpoint's)" },
    "tls-cert": { type: "string", value: "FILE", help: "the certificate (PEM), with --tls-key" },
    "tls-key": { type: "string", value: "FILE", help: "its private key (PEM), with --tls-cert" },
    "insecure-loopback": { type: "boolean", help: "plain HTTP, only on a loopback address" },
    ca: CA,
    "pull-interval": { type: "string", value: "SECONDS", parse: seconds, help: "how often revocations are pulled from each peer (default 30, at most 30)" },
    ...HTTP_GUARD,
    json: json("{nodeId, url, endpoint} once it listens"),
  },
});
export const NODE_TRUST = defineArgs({ name: "node trust", summary: "register a peer (its node.json); only registered nodes are heard", positionals: ["<PEER_NODE_JSON>"], options: { dir: DIR, json: json("{registered, updated}") } });
export const NODE_LIST = defineArgs({ name: "node list", summary: "this node, its peers and the revocations it holds", options: { dir: DIR, json: json("{self, peers, revocations}") } });
export const NODE_FORGET = defineArgs({ name: "node forget", summary: "unregister a peer", positionals: ["<NODE_ID>"], options: { dir: DIR, json: json("{forgotten}") } });
export const NODE_SUBCOMMANDS = [NODE_INIT, NODE_SERVE, NODE_TRUST, NODE_LIST, NODE_FORGET] as const;

/** `reach-wasm delegate`. */
export const DELEGATE = defineArgs({
  name: "delegate",
  options: {
    dir: DIR,
    to: { type: "string", value: "NODE_ID", required: true, help: "the registered node that receives the delegation" },
    scope: { type: "string", value: "CAP[,CAP...]", required: true, help: "what it may use: tool:NAME, resource:URI, permission:NAME, host:NAME" },
    expires: { type: "string", value: "DURATION|ISO", required: true, help: "a duration (90s, 30m, 12h, 7d) or an ISO 8601 UTC instant" },
    parent: { type: "string", value: "DELEGATION_FILE", help: "re-delegate a delegation this node holds (a subset of its scope, no later expiry)" },
    out: { type: "string", value: "FILE", required: true, help: "where the delegation document is written" },
    json: json("{delegation, out}"),
  },
});

/** `reach-wasm revoke`. */
export const REVOKE = defineArgs({
  name: "revoke",
  positionals: ["<DELEGATION_FILE>"],
  options: {
    dir: DIR,
    "no-push": { type: "boolean", help: "keep the revocation here; peers pull it while this node serves" },
    ca: CA,
    json: json("{revocation, pushed}"),
  },
});

/** `reach-wasm doctor`. */
export const DOCTOR = defineArgs({
  name: "doctor",
  options: {
    json: json("{ok, toolchains: [{name, templates, title, present, version, env, problem, install}]}"),
    env: { type: "boolean", help: "print export lines for the templates' build.sh: eval \"$(reach-wasm doctor --env)\"" },
  },
});

/** `reach-wasm conformance`. */
export const CONFORMANCE = defineArgs({
  name: "conformance",
  options: {
    category: { type: "string", value: "LIST", help: "a comma-separated list of categories: schema, determinism, replay, policy, federation\n(default all)" },
    impl: { type: "string", value: "CMD", help: "test another implementation: CMD (split on spaces, '…' and \"…\" group; no shell) must accept\nrun, replay, verify, node, delegate and revoke with this CLI's contract (conformance/ADAPTER.md);\nwithout --impl, this installation's own CLI, plus the runtime-neutral cases in this process" },
    json: json("{specVersion, implementation, passed, summary, categories: [{category,\npassed, failed, cases: [{id, category, clause, title, status, message?}]}]}"),
    junit: { type: "string", value: "FILE", help: "also write a JUnit XML report" },
  },
});
