/**
 * Deprecated forms (seed 003 §9.2), the same on Node and Deno: `conformance/packs/deprecated_tool_names` declares its
 * tool by a plain name (the short form of seed 003 §4.1). It still loads, to exactly the manifest (and manifest hash)
 * of the current form, and the loader reports the use once; a pack in the current form reports nothing; the document
 * handed to the loader is never changed. Each case's fingerprint is what the loader made of the pack.
 * @module
 */
import { hashCanonical } from "../../src/canonical/jcs.ts";
import { loadPack } from "../../src/engine/pack.ts";
import { DEPRECATIONS, upgradePackDocument } from "../../src/protocol/deprecations.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

const PACK = "packs/deprecated_tool_names";
const enc = new TextEncoder();

function packFiles(io: ConformanceIO, doc?: unknown): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  files.set("reach.json", doc === undefined ? io.readBytes(`${PACK}/reach.json`) : enc.encode(JSON.stringify(doc)));
  files.set("plan.json", io.readBytes(`${PACK}/plan.json`));
  files.set("tools/echo.js", io.readBytes(`${PACK}/tools/echo.js`));
  return files;
}

/**
 * The deprecation cases.
 * @param io file access rooted at conformance/
 * @returns the cases
 */
export function deprecationCases(io: ConformanceIO): ConformanceCase[] {
  return [
    {
      name: "deprecations/manifest.capabilities.tools.names: a plain tool name loads as {name}, reported once",
      run: async () => {
        const loaded = await loadPack(packFiles(io));
        const ids = (loaded.deprecations ?? []).map((d) => d.id);
        check(ids.length === 1 && ids[0] === "manifest.capabilities.tools.names", `expected one manifest.capabilities.tools.names notice, got ${JSON.stringify(ids)}`);
        check(JSON.stringify(loaded.pack.manifest.capabilities.tools) === '[{"name":"echo"}]', `the tools read as ${JSON.stringify(loaded.pack.manifest.capabilities.tools)}`);
        check(loaded.tools.has("echo"), "the declared tool has no code");
        const message = loaded.deprecations![0]!.message;
        const d = DEPRECATIONS["manifest.capabilities.tools.names"];
        check(message.includes(d.since) && message.includes(d.removableIn) && message.includes('{"name": "echo"}'), `the notice does not say since when, until when and what to do: ${message}`);
        return hashCanonical({ manifestHash: loaded.manifestHash, packDigest: loaded.packDigest, deprecations: loaded.deprecations });
      },
    },
    {
      name: "deprecations/manifest.capabilities.tools.names: the current form has the same manifest hash and no notice",
      run: async () => {
        const raw = JSON.parse(io.readText(`${PACK}/reach.json`)) as { manifest: { capabilities: { tools: unknown[] } } };
        const before = JSON.stringify(raw);
        const upgraded = upgradePackDocument(raw, "reach.json");
        check(JSON.stringify(raw) === before, "upgradePackDocument changed the document it was given");
        const current = await loadPack(packFiles(io, upgraded.document));
        const legacy = await loadPack(packFiles(io));
        check((current.deprecations ?? []).length === 0, `the current form was reported: ${JSON.stringify(current.deprecations)}`);
        check(current.manifestHash === legacy.manifestHash, "the two forms lock different manifests");
        check(upgradePackDocument(upgraded.document, "reach.json").document === upgraded.document, "a document without deprecated forms was copied");
        return current.manifestHash;
      },
    },
  ];
}
