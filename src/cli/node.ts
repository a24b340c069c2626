/**
 * `reach-wasm node init|serve|trust|list|forget` (seed 003 §6.1): a federation node's identity, its registry of
 * peers, and serving it over HTTPS (`src/federation/`).
 * @module
 */
import { readdir } from "node:fs/promises";
import { resolve } from "node:path";
import { createNode, parseNodeIdentity } from "../federation/mod.ts";
import type { CliIO } from "./io.ts";
import { nodeState, readJsonFile } from "./federation-host.ts";
import { ReachError } from "../protocol/mod.ts";
import { findCommand } from "./commands.ts";
import { parseCommand, subcommandOf } from "./options.ts";
import { NODE_FORGET, NODE_INIT, NODE_LIST, NODE_SUBCOMMANDS, NODE_TRUST } from "./specs-federation.ts";

async function init(argv: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommand(NODE_INIT, argv);
  const dir = values.dir;
  const entries = await readdir(dir).catch(() => [] as string[]);
  if (entries.length > 0) throw new ReachError("PROTO_INVALID_ARGUMENT", `node init: ${JSON.stringify(dir)} exists and is not empty; a node keeps its identity across restarts, so init never reuses a directory — choose a new --dir`);
  const self = createNode(values.endpoint);
  await nodeState(dir).init(self);
  io.stderr(`reach-wasm: node ${self.identity.nodeId} created in ${resolve(dir)} (node.json, node.key 0600); give node.json to peers for \`reach-wasm node trust\`\n`);
  if (values.json) io.stdout(JSON.stringify({ ...self.identity, dir: resolve(dir) }) + "\n");
  return 0;
}

async function trust(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(NODE_TRUST, argv);
  const state = nodeState(values.dir);
  const self = await state.self();
  const peer = parseNodeIdentity(await readJsonFile(positionals[0]!, "PEER_NODE_JSON"), positionals[0]!);
  if (peer.nodeId === self.identity.nodeId) throw new ReachError("PROTO_INVALID_ARGUMENT", `node trust: ${positionals[0]} is this node itself; register other nodes`);
  const peers = await state.peers();
  const known = peers.find((p) => p.nodeId === peer.nodeId);
  if (known !== undefined && known.publicKey !== peer.publicKey) {
    throw new ReachError("FED_TRUST_VIOLATION", `node ${peer.nodeId} is registered with another key; if it really changed its key, run \`reach-wasm node forget --dir DIR ${peer.nodeId}\` first`);
  }
  await state.savePeers([...peers.filter((p) => p.nodeId !== peer.nodeId), peer]);
  io.stderr(`reach-wasm: ${known === undefined ? "registered" : "updated"} node ${peer.nodeId} at ${peer.endpoint}\n`);
  if (values.json) io.stdout(JSON.stringify({ registered: peer, updated: known !== undefined }) + "\n");
  return 0;
}

async function list(argv: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommand(NODE_LIST, argv);
  const state = nodeState(values.dir);
  const self = await state.self();
  const peers = await state.peers();
  const revocations = await state.revocations();
  if (values.json) io.stdout(JSON.stringify({ self: self.identity, peers, revocations: revocations.map((r) => r.delegationId).sort() }) + "\n");
  else {
    io.stdout(`this node  ${self.identity.nodeId}  ${self.identity.endpoint}\n`);
    for (const p of peers) io.stdout(`peer       ${p.nodeId}  ${p.endpoint}  ${p.publicKey}\n`);
    io.stdout(`${peers.length} peer${peers.length === 1 ? "" : "s"}, ${revocations.length} revocation${revocations.length === 1 ? "" : "s"}\n`);
  }
  return 0;
}

async function forget(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(NODE_FORGET, argv);
  const state = nodeState(values.dir);
  await state.self();
  const id = positionals[0]!;
  const peers = await state.peers();
  if (!peers.some((p) => p.nodeId === id)) throw new ReachError("PROTO_INVALID_ARGUMENT", `node forget: ${id} is not registered; \`reach-wasm node list --dir DIR\` shows the peers`);
  await state.savePeers(peers.filter((p) => p.nodeId !== id));
  io.stderr(`reach-wasm: forgot node ${id}; its messages and delegations are refused from now on\n`);
  if (values.json) io.stdout(JSON.stringify({ forgotten: id }) + "\n");
  return 0;
}

/**
 * The `node` command.
 * @param argv arguments after `node`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation, `FED_*` for a federation refusal
 * @example await runNodeCommand(["list", "--dir", "node-a"], io)
 */
export async function runNodeCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { spec, argv: rest } = subcommandOf(findCommand("node")!, NODE_SUBCOMMANDS, argv);
  switch (spec.name) {
    case "node init":
      return await init(rest, io);
    case "node serve":
      return await (await import("./node-serve.ts")).runNodeServe(rest, io);
    case "node trust":
      return await trust(rest, io);
    case "node list":
      return await list(rest, io);
    default:
      return await forget(rest, io);
  }
}
