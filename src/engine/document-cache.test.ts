// The validated-document cache stands in for zod: a hit must give exactly what validating gives, and nothing that
// validating would refuse may ever come out of it.
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { SCHEMA_REVISION } from "../protocol/_schema-revision.ts";
import { BlueprintSchema } from "../protocol/plan.ts";
import { PackSchema } from "../protocol/pack.ts";
import { parseOrThrow } from "../protocol/parse.ts";
import { isPureJson, validatedDocument as validatedWith } from "./document-cache.ts";
import type { DocumentStore } from "./document-cache.ts";
import { loadPack as loadPackWith } from "./pack.ts";
import { packFromDisk } from "../../tests/support/pack.ts";

// The store the platform hands in (`EngineEnvironment.documents`), as each call below is given it.
let current: DocumentStore | null = null;
const setDocumentStore = (s: DocumentStore | null): void => void (current = s);
const validatedDocument = <T>(kind: string, doc: unknown, validate: () => T): Promise<T> => validatedWith(kind, doc, validate, current);
const loadPack = (files: Map<string, Uint8Array>) => loadPackWith(files, current === null ? {} : { documents: current });

/** An in-memory store that counts what it is asked. */
function memoryStore(): DocumentStore & { entries: Map<string, Uint8Array>; gets: number; sets: number } {
  const entries = new Map<string, Uint8Array>();
  const s = {
    entries,
    gets: 0,
    sets: 0,
    get: async (key: string) => (s.gets++, entries.get(key) ?? null),
    set: async (key: string, bytes: Uint8Array) => void (s.sets++, entries.set(key, bytes)),
  };
  return s;
}

const parsePack = (doc: unknown) => () => parseOrThrow(PackSchema(), doc, "PACK_INVALID_MANIFEST", "reach.json");
const example = (kind: string, name: string): unknown => JSON.parse(readFileSync(new URL(`../../conformance/examples/${kind}/${name}.json`, import.meta.url), "utf8"));

afterEach(() => setDocumentStore(null));

/** [1, <hole>, 3] */
function sparse(): unknown[] {
  const a: unknown[] = [1];
  a[2] = 3;
  return a;
}

describe("the validated-document cache", () => {
  it("gives back exactly what validating gave (defaults filled, key order kept), without validating again", async () => {
    const store = memoryStore();
    setDocumentStore(store);
    for (const [kind, name, schema] of [["pack", "minimal", PackSchema], ["pack", "hello", PackSchema], ["plan", "hello", BlueprintSchema]] as const) {
      const doc = example(kind, name);
      const fresh = schema().parse(doc);
      let validations = 0;
      const first = await validatedDocument(kind, doc, () => (validations++, schema().parse(doc)));
      const second = await validatedDocument(kind, doc, () => (validations++, schema().parse(doc)));
      expect(validations).toBe(1);
      expect(JSON.stringify(second)).toBe(JSON.stringify(fresh)); // same values, same key order
      expect(second).toEqual(first);
    }
    expect([...store.entries.keys()].every((k) => k.includes(`-${SCHEMA_REVISION}-`))).toBe(true);
  });

  it("keys on the document's key order: a record's output keeps its input's order", async () => {
    setDocumentStore(memoryStore());
    const a = { x: { b: 1, a: 2 } };
    const b = { x: { a: 2, b: 1 } };
    const copy = (v: unknown) => () => JSON.parse(JSON.stringify(v)) as unknown;
    await validatedDocument("t", a, copy(a));
    expect(JSON.stringify(await validatedDocument("t", b, copy(b)))).toBe(JSON.stringify(b));
  });

  it("never keeps a refused document: it is refused again, with its message, every time", async () => {
    const store = memoryStore();
    setDocumentStore(store);
    const bad = { ...(example("pack", "minimal") as object), id: "not an id!" };
    for (let i = 0; i < 2; i++) {
      await expect(validatedDocument("pack", bad, parsePack(bad))).rejects.toThrow(/reach\.json is invalid/);
    }
    expect(store.sets).toBe(0);
  });

  it("validates every time what JSON text cannot hold exactly (−0, undefined, accessors, class instances)", async () => {
    const store = memoryStore();
    setDocumentStore(store);
    const odd: unknown[] = [{ n: -0 }, { u: undefined }, Object.defineProperty({}, "g", { get: () => 1, enumerable: true }), { d: new Date(0) }, sparse(), { n: Number.NaN }];
    for (const doc of odd) {
      expect(isPureJson(doc)).toBe(false);
      let validations = 0;
      await validatedDocument("t", doc, () => validations++);
      await validatedDocument("t", doc, () => validations++);
      expect(validations).toBe(2);
    }
    expect(store.gets).toBe(0);
    expect(isPureJson(JSON.parse('{"a":[1,"x",null,true,{"__proto__":{}}]}'))).toBe(true);
  });

  it("an entry that is not JSON, or a store that fails, is a miss: the document is validated", async () => {
    const doc = example("pack", "minimal");
    const store = memoryStore();
    setDocumentStore(store);
    await validatedDocument("pack", doc, parsePack(doc));
    for (const key of store.entries.keys()) store.entries.set(key, new Uint8Array([0xff, 0x7b]));
    let validations = 0;
    await validatedDocument("pack", doc, () => (validations++, parsePack(doc)()));
    expect(validations).toBe(1);
    setDocumentStore({ get: () => Promise.reject(new Error("disk")), set: () => Promise.reject(new Error("full")) });
    expect(await validatedDocument("pack", doc, parsePack(doc))).toEqual(PackSchema().parse(doc));
  });

  it("loadPack gives the same pack from the cache as without it, for every example pack", async () => {
    const packs = readdirSync(new URL("../../packs/", import.meta.url)).filter((n) => n !== "README.md");
    const store = memoryStore();
    for (const name of packs) {
      let files: Map<string, Uint8Array>;
      try {
        files = packFromDisk(name);
      } catch {
        continue;
      }
      setDocumentStore(null);
      const plain = await loadPack(files).catch((e: unknown) => e);
      setDocumentStore(store);
      await loadPack(files).catch(() => null);
      const cached = await loadPack(files).catch((e: unknown) => e);
      if (plain instanceof ReachError) expect((cached as ReachError).message).toBe(plain.message);
      else expect(JSON.stringify((cached as { pack: unknown }).pack)).toBe(JSON.stringify((plain as { pack: unknown }).pack));
    }
    expect(store.entries.size).toBeGreaterThan(3);
  });
});
