/**
 * A node's directory (`--dir DIR`): everything a node keeps across restarts, each concern in its own file so that a
 * CLI command and a serving node can write at the same time without losing each other's update. Every write is
 * atomic (the files adapter writes a temporary file and renames it).
 *
 * | path | content | written by |
 * |---|---|---|
 * | `node.json` | the public identity (seed 003 §6.1) | `node init` |
 * | `node.key` | the node's private key file (`src/trust/keys.ts`), mode 0600 | `node init` |
 * | `peers.json` | `{"version":1,"peers":[node.json …]}`: the federation registry | `node trust` / `node forget` |
 * | `delegations/<id>.json` | delegations this node granted or re-delegated from, to resolve chains | `delegate` |
 * | `revocations/<revoker>/<delegationId>.json` | signed revocations, own and received, by signer (`revocation-store.ts`) | `revoke`, `node serve` |
 * | `nonces.json` | nonces seen within the clock window | `node serve` |
 * @module
 */
import { z } from "zod";
import { bytesToHex } from "../canonical/mod.ts";
import { utf8 } from "../canonical/mod.ts";
import { NodeIdentitySchema } from "../protocol/mod.ts";
import type { Delegation, NodeIdentity } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { formatKeyFiles, parsePrivateKeyFile } from "../trust/mod.ts";
import { parseDelegation } from "./delegation.ts";
import { parseNodeIdentity, publicKeyHex } from "./identity.ts";
import type { NodeSelf } from "./identity.ts";
import { NonceFileSchema } from "./nonces.ts";
import type { NonceFile } from "./nonces.ts";
import { MAX_REVOCATIONS_PER_NODE } from "./revocation.ts";
import type { Revocation } from "./revocation.ts";
import { RevocationStore } from "./revocation-store.ts";
import type { NodeFiles } from "./node-files.ts";


export const NODE_FILE = "node.json";
export const KEY_FILE = "node.key";
export const PEERS_FILE = "peers.json";
export const NONCES_FILE = "nonces.json";
export const DELEGATIONS_DIR = "delegations";
export { REVOCATIONS_DIR } from "./revocation-store.ts";

/** Limits of a node directory. */
export type NodeStateOptions = {
  /** The most revocations kept signed by one other node (default {@link MAX_REVOCATIONS_PER_NODE}). */
  maxRevocationsPerNode?: number;
};

const PeersFileSchema = z.strictObject({ version: z.literal(1), peers: z.array(NodeIdentitySchema()).max(10_000) });
const SMALL = 1024 * 1024;
const dec = new TextDecoder("utf-8", { fatal: true });

function json(value: unknown): Uint8Array {
  return utf8(JSON.stringify(value, null, 2) + "\n");
}

function idFile(dir: string, id: string): string {
  if (!/^[0-9a-f-]{36}$/.test(id)) throw new TypeError(`"id" expected a lowercase UUID, got ${JSON.stringify(id)}`);
  return `${dir}/${id}.json`;
}

/** The node directory. */
export class NodeState {
  readonly files: NodeFiles;
  /** The revocations, indexed by (revoker, delegation). */
  readonly revocationStore: RevocationStore;
  /** The most revocations kept signed by one other node. */
  readonly revocationLimit: number;

  /**
   * @param files file access rooted at the directory
   * @param options limits
   */
  constructor(files: NodeFiles, options: NodeStateOptions = {}) {
    this.files = files;
    this.revocationStore = new RevocationStore(files);
    const limit = options.maxRevocationsPerNode ?? MAX_REVOCATIONS_PER_NODE;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`"maxRevocationsPerNode" expected a positive integer, got ${limit}`);
    this.revocationLimit = limit;
  }

  async #json(path: string, what: string, maxBytes = SMALL): Promise<unknown> {
    const bytes = await this.files.read(path, maxBytes);
    if (bytes === null) return undefined;
    try {
      return JSON.parse(dec.decode(bytes));
    } catch {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `${what} is not UTF-8 JSON; restore it from a backup or re-create the node with \`reach-wasm node init\``);
    }
  }

  /**
   * Create the node's files; refuses when the directory already holds a node.
   * @param self the identity and key pair from `createNode`
   * @returns nothing
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when `node.json` or `node.key` exists
   * @example await state.init(createNode("https://127.0.0.1:8443"));
   */
  async init(self: NodeSelf): Promise<void> {
    for (const f of [NODE_FILE, KEY_FILE]) {
      if ((await this.files.read(f, SMALL)) !== null) throw new ReachError("PROTO_INVALID_ARGUMENT", `the directory already holds a node (${f} exists); a node keeps its identity across restarts, so init refuses to replace it — choose a new --dir`);
    }
    await this.files.write(KEY_FILE, utf8(formatKeyFiles(self.keys).privateKeyFile), 0o600);
    await this.files.write(NODE_FILE, json(self.identity));
  }

  /**
   * This node: `node.json` and `node.key`, checked against each other.
   * @returns identity and key pair
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when the directory is not a node or the key does not match
   * @example const self = await state.self();
   */
  async self(): Promise<NodeSelf> {
    const doc = await this.#json(NODE_FILE, NODE_FILE);
    if (doc === undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `the directory holds no ${NODE_FILE}; create a node with \`reach-wasm node init --dir DIR --endpoint URL\``);
    const identity = parseNodeIdentity(doc, NODE_FILE);
    const keyBytes = await this.files.read(KEY_FILE, SMALL);
    if (keyBytes === null) throw new ReachError("PROTO_INVALID_ARGUMENT", `the directory holds no ${KEY_FILE}; restore it from a backup (a node cannot sign without it)`);
    const keys = parsePrivateKeyFile(dec.decode(keyBytes));
    if (publicKeyHex(identity) !== bytesToHex(keys.publicKey)) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `${KEY_FILE} is not the key of ${NODE_FILE} (its publicKey differs); restore the matching pair`);
    }
    return { identity, keys };
  }

  /**
   * The registered peers.
   * @returns the peers, sorted by node id
   * @throws ReachError `PROTO_SCHEMA_VIOLATION` for a damaged `peers.json`
   * @example const peers = await state.peers();
   */
  async peers(): Promise<NodeIdentity[]> {
    const doc = await this.#json(PEERS_FILE, PEERS_FILE);
    if (doc === undefined) return [];
    return parseOrThrow(PeersFileSchema, doc, "PROTO_SCHEMA_VIOLATION", PEERS_FILE).peers.map((p) => parseNodeIdentity(p, `${PEERS_FILE} peer ${p.nodeId}`));
  }

  /**
   * Replace the registry.
   * @param peers the peers
   * @returns nothing
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written
   * @example await state.savePeers([...peers, peer]);
   */
  async savePeers(peers: readonly NodeIdentity[]): Promise<void> {
    const sorted = [...peers].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
    await this.files.write(PEERS_FILE, json({ version: 1, peers: sorted }));
  }

  /**
   * Keep a delegation (granted here, or the parent of one granted here) so that chains can be resolved.
   * @param d the delegation
   * @returns nothing
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written
   * @example await state.storeDelegation(d);
   */
  async storeDelegation(d: Delegation): Promise<void> {
    await this.files.write(idFile(DELEGATIONS_DIR, d.delegationId), json(d));
  }

  /**
   * A kept delegation.
   * @param id the delegation id
   * @returns the delegation, or undefined
   * @throws ReachError `FED_DELEGATION_INVALID` for a damaged file
   * @example await state.delegation(d.parent!)
   */
  async delegation(id: string): Promise<Delegation | undefined> {
    const path = idFile(DELEGATIONS_DIR, id);
    const doc = await this.#json(path, path);
    return doc === undefined ? undefined : parseDelegation(doc, path);
  }

  /**
   * Every kept revocation (damaged files are skipped: a revocation is only ever added). Reads them all: for the CLI,
   * never per message.
   * @returns the revocations
   * @throws never for damaged files
   * @example const ids = (await state.revocations()).map((r) => r.delegationId);
   */
  async revocations(): Promise<Revocation[]> {
    return await this.revocationStore.list(null, Number.MAX_SAFE_INTEGER);
  }

  /**
   * Keep one of this node's own (signed, entitled) revocations; own revocations are not limited.
   * @param r the revocation
   * @returns true when it was new
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written
   * @example if (await state.addRevocation(r)) log("revoked");
   */
  async addRevocation(r: Revocation): Promise<boolean> {
    return await this.revocationStore.add(r, null);
  }

  /**
   * The saved nonce book, or undefined.
   * @returns the stored form
   * @throws ReachError `PROTO_SCHEMA_VIOLATION` for a damaged `nonces.json`
   * @example new NonceBook(now, await state.nonces())
   */
  async nonces(): Promise<NonceFile | undefined> {
    const doc = await this.#json(NONCES_FILE, NONCES_FILE, 128 * SMALL);
    return doc === undefined ? undefined : parseOrThrow(NonceFileSchema, doc, "PROTO_SCHEMA_VIOLATION", NONCES_FILE);
  }

  /**
   * Save the nonce book.
   * @param book the stored form
   * @returns nothing
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be written
   * @example await state.saveNonces(book.toJSON());
   */
  async saveNonces(book: NonceFile): Promise<void> {
    await this.files.write(NONCES_FILE, utf8(JSON.stringify(book) + "\n"));
  }
}
