// `node scripts/gen-schema-revision.mjs [--check]`: write src/protocol/_schema-revision.ts, the digest of what decides
// how a document validates: the sources of src/protocol/ (tests aside) and zod's version. The validated-document cache
// (src/engine/document-cache.ts) keys its entries with it, so that no entry made by other schemas is ever used.
// --check exits 1 when the committed revision is out of date (src/protocol/schema-revision.test.ts runs it).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { URL } from "node:url";

const root = new URL("../", import.meta.url).pathname;
const target = join(root, "src/protocol/_schema-revision.ts");

/**
 * The revision of this checkout's schemas.
 * @returns 16 lowercase hex digits
 */
export function schemaRevision() {
  const hash = createHash("sha256");
  const zod = JSON.parse(readFileSync(join(root, "node_modules/zod/package.json"), "utf8")).version;
  hash.update(`zod@${zod}\0`);
  const dir = join(root, "src/protocol");
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "_schema-revision.ts").sort();
  for (const f of files) hash.update(`${f}\0`).update(readFileSync(join(dir, f))).update("\0");
  return hash.digest("hex").slice(0, 16);
}

function render(revision) {
  return `/**
 * The revision of the protocol schemas: a digest of the sources of \`src/protocol/\` and of zod's version, written by
 * \`node scripts/gen-schema-revision.mjs\` (a test fails when it is out of date). Part of every key of the
 * validated-document cache (\`src/engine/document-cache.ts\`).
 * @module
 */

/** 16 hex digits; changes whenever a schema may validate differently. */
export const SCHEMA_REVISION = "${revision}";
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = render(schemaRevision());
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(target, "utf8");
    } catch {
      // missing: out of date
    }
    if (current !== text) {
      process.stderr.write("gen-schema-revision: src/protocol/_schema-revision.ts is out of date (a schema source changed); run node scripts/gen-schema-revision.mjs\n");
      process.exit(1);
    }
    process.stdout.write("gen-schema-revision: src/protocol/_schema-revision.ts is up to date\n");
  } else {
    writeFileSync(target, text);
    process.stdout.write(`gen-schema-revision: wrote ${target}\n`);
  }
}
