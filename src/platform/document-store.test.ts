// The validated-document cache stands for a validation, so it is attacked here as an attacker with write access to
// the cache directory would: a planted or altered entry must never let an invalid pack through.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DocumentStore } from "../engine/document-cache.ts";
import { loadPack as loadPackWith } from "../engine/pack.ts";
import { packFromDisk } from "../../tests/support/pack.ts";
import { diskDocumentStore } from "./document-store.ts";

let base: string;
let dir: string;

// The store an environment hands the engine (`EngineEnvironment.documents`), as each load below is given it.
let current: DocumentStore | null = null;
const setDocumentStore = (s: DocumentStore | null): void => void (current = s);
const loadPack = (files: Map<string, Uint8Array>) => loadPackWith(files, current === null ? {} : { documents: current });

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "reach-documents-"));
  chmodSync(base, 0o700);
  dir = join(base, "documents");
});
afterEach(() => {
  setDocumentStore(null);
  rmSync(base, { recursive: true, force: true });
});

const enc = new TextEncoder();

/** packs/hello with its reach.json edited by `edit`. */
function helloWith(edit: (doc: Record<string, unknown>) => void): Map<string, Uint8Array> {
  const files = packFromDisk("hello");
  const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json"))) as Record<string, unknown>;
  edit(doc);
  files.set("reach.json", enc.encode(JSON.stringify(doc)));
  return files;
}

describe("the validated-document cache on disk", () => {
  it("keeps a validated pack between processes (a new store on the same directory), with the same result", async () => {
    setDocumentStore(diskDocumentStore(dir));
    const first = await loadPack(packFromDisk("hello"));
    expect(readdirSync(dir)).toHaveLength(1);
    setDocumentStore(diskDocumentStore(dir));
    const second = await loadPack(packFromDisk("hello"));
    expect(JSON.stringify(second.pack)).toBe(JSON.stringify(first.pack));
  });

  it("an entry planted under an invalid pack's key, or altered, never lets the invalid pack through", async () => {
    const invalid = helloWith((d) => (d["id"] = "no spaces allowed"));
    const valid = helloWith((d) => (d["id"] = "nospaces"));
    setDocumentStore(diskDocumentStore(dir));
    await expect(loadPack(invalid)).rejects.toThrow(/PACK_INVALID_MANIFEST|reach\.json is invalid/);
    expect(readdirSync(dir)).toHaveLength(0); // refused documents are not kept
    await loadPack(valid);
    const [entry] = readdirSync(dir);
    const honest = readFileSync(join(dir, entry!));
    // The key names the document's digest; the attacker knows it, but not the MAC key beside the directory.
    const invalidKey = await keyOf(invalid);
    const body = honest.subarray(40);
    const forged = JSON.stringify({ ...JSON.parse(new TextDecoder().decode(body)), id: "no spaces allowed" });
    for (const planted of [
      Buffer.concat([honest.subarray(0, 40), Buffer.from(forged)]), // the honest MAC over other bytes
      Buffer.concat([Buffer.from("reachdv1"), Buffer.alloc(32), Buffer.from(forged)]), // a made-up MAC
      honest, // a valid entry copied under another document's name (the MAC covers the name)
    ]) {
      writeFileSync(join(dir, `${invalidKey}.json`), planted, { mode: 0o600 });
      setDocumentStore(diskDocumentStore(dir));
      await expect(loadPack(invalid)).rejects.toThrow(/reach\.json is invalid/);
    }
    // And an altered honest entry is a miss: the valid pack is validated again, and loads.
    writeFileSync(join(dir, entry!), Buffer.concat([honest.subarray(0, 40), Buffer.from(forged)]), { mode: 0o600 });
    setDocumentStore(diskDocumentStore(dir));
    expect((await loadPack(valid)).pack.id).toBe("nospaces");
  });
});

/** The cache key the engine uses for a pack's reach.json (its digest is no secret). */
async function keyOf(files: Map<string, Uint8Array>): Promise<string> {
  const { sha256Hex } = await import("../canonical/sha256.ts");
  const { SCHEMA_REVISION } = await import("../protocol/_schema-revision.ts");
  const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json"))) as unknown;
  return `pack-${SCHEMA_REVISION}-${sha256Hex(enc.encode(JSON.stringify(doc)))}`;
}
