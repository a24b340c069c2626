// The events the ledger records (the hash-chain vectors) validate against our RunEvent schema and, with draft 2020-12
// Ajv, against the upstream event.schema.json (seed 003 §10 "Schema Validation").
import { readFileSync } from "node:fs";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { RunEventSchema } from "../../src/protocol/event.ts";

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
const root = new URL("../", import.meta.url);
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const upstream = ajv.compile(JSON.parse(readFileSync(new URL("upstream-schemas/event.schema.json", root), "utf8")));
const ours = ajv.compile(JSON.parse(readFileSync(new URL("schemas/event.schema.json", root), "utf8")));

for (const name of ["success", "failure"]) {
  describe(`vectors/hash-chain/${name} events`, () => {
    const lines = readFileSync(new URL(`vectors/hash-chain/${name}.events.jsonl`, root), "utf8").trim().split("\n");
    lines.forEach((line, i) => {
      const event = JSON.parse(line);
      it(`event ${i} (${event.type}) validates against zod, our JSON Schema and upstream event.schema.json`, () => {
        expect(RunEventSchema().safeParse(event).success).toBe(true);
        expect(ours(event), JSON.stringify(ours.errors)).toBe(true);
        expect(upstream(event), JSON.stringify(upstream.errors)).toBe(true);
      });
    });
  });
}
