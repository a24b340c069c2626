/**
 * Test helpers for federation (not part of the build): in-memory node directories, nodes with fixed keys, and a
 * transport that routes requests to in-process node apps by endpoint, so that the whole protocol runs without sockets.
 * @module
 */
import { readQuickJsEngineWasm } from "../../src/platform/quickjs-engine.ts";
import { readPythonWasm } from "../../src/platform/python-engine.ts";
import type { NodeIdentity } from "../../src/protocol/delegation.ts";
import type { ClientContext, PeerFetch } from "../../src/federation/client.ts";
import { createNode } from "../../src/federation/identity.ts";
import type { NodeSelf } from "../../src/federation/identity.ts";
import { NonceBook } from "../../src/federation/nonces.ts";
import { createNodeApp } from "../../src/federation/server.ts";
import { NodeState } from "../../src/federation/state.ts";
import type { NodeStateOptions } from "../../src/federation/state.ts";
import type { NodeFiles } from "../../src/federation/node-files.ts";

/** File operations a `memoryFiles` saw, by kind, with the paths read (tests count them). */
export type FileOps = { read: string[]; write: string[]; list: string[]; remove: string[] };

/** `NodeFiles` over a map; `list` names the entries directly inside a folder (files and sub-folders), as `readdir` does. */
export function memoryFiles(store = new Map<string, Uint8Array>()): NodeFiles & { store: Map<string, Uint8Array>; ops: FileOps } {
  const ops: FileOps = { read: [], write: [], list: [], remove: [] };
  return {
    store,
    ops,
    read: async (p, max) => {
      ops.read.push(p);
      const b = store.get(p);
      if (b !== undefined && b.length > max) throw new Error(`${p} too large`);
      return b ?? null;
    },
    write: async (p, bytes) => {
      ops.write.push(p);
      store.set(p, bytes.slice());
    },
    list: async (dir) => {
      ops.list.push(dir);
      return [...new Set([...store.keys()].filter((k) => k.startsWith(`${dir}/`)).map((k) => k.slice(dir.length + 1).split("/")[0]!))].sort();
    },
    remove: async (p) => {
      ops.remove.push(p);
      return store.delete(p);
    },
  };
}

/** A test node: state, identity, its app, and a clock the test controls. */
export type TestNode = { self: NodeSelf; id: string; state: NodeState; files: ReturnType<typeof memoryFiles>; nonces: NonceBook; app: { fetch(r: Request): Response | Promise<Response> }; logs: string[] };

/** The shared clock of a test network (ms); tests move `clock.now`. */
export type TestClock = { now: number };

/** A network of in-process nodes. */
export class TestNetwork {
  readonly clock: TestClock = { now: Date.UTC(2026, 0, 1) };
  readonly nodes = new Map<string, TestNode>();
  /** Endpoints whose requests are dropped (a lost push). */
  readonly blocked = new Set<string>();

  /**
   * Add a node with a fixed key (n = 1, 2, …).
   * @param n the node's number
   * @param options its directory's limits
   * @param store its directory's files (a node restarted over an existing directory)
   */
  async add(n: number, options: NodeStateOptions = {}, store?: Map<string, Uint8Array>): Promise<TestNode> {
    const random = new Uint8Array(48).fill(n);
    const self = createNode(`https://node-${n}.test`, random);
    const files = memoryFiles(store);
    const state = new NodeState(files, options);
    if (store === undefined) await state.init(self);
    const now = (): number => this.clock.now;
    const nonces = new NonceBook(now);
    const logs: string[] = [];
    const app = createNodeApp({ state, self, now, nonces, host: { env: { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm } }, log: (l) => void logs.push(l) });
    const node: TestNode = { self, id: self.identity.nodeId, state, files, nonces, app, logs };
    this.nodes.set(self.identity.endpoint, node);
    return node;
  }

  /** Register every node at every other. */
  async meshAll(): Promise<void> {
    for (const a of this.nodes.values()) {
      const peers: NodeIdentity[] = [...this.nodes.values()].filter((b) => b !== a).map((b) => b.self.identity);
      await a.state.savePeers(peers);
    }
  }

  /** The in-process transport. */
  readonly fetch: PeerFetch = async (url, init) => {
    const origin = new URL(url).origin;
    if (this.blocked.has(origin)) throw new TypeError(`fetch failed: ${origin} is blocked`);
    const node = this.nodes.get(origin);
    if (node === undefined) throw new TypeError(`fetch failed: no node at ${origin}`);
    return await node.app.fetch(new Request(url, init));
  };

  /** A client context for `node`. */
  client(node: TestNode): ClientContext {
    return { self: node.self, now: () => this.clock.now, fetch: this.fetch };
  }
}
