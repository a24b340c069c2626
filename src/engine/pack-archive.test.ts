// A pack archive that does not read is refused as a pack archive: the archive reader's messages (written for
// capsules) name the pack archive, its entries and `reach-wasm pack build`, never "capsule".
import { describe, expect, it } from "vitest";
import { concat, END, enc, file, gz, header } from "../capsule/_test-tar.ts";
import { ReachError } from "../protocol/mod.ts";
import { packArchiveFiles } from "./pack-archive.ts";

const REACH = file("reach.json", enc("{}"));
const CASES: Array<[string, Uint8Array, RegExp]> = [
  ["a '..' path", gz(concat(REACH, file("../escape.txt", enc("x")), END)), /pack archive entry #2 .*"\.\.\/escape\.txt" escapes the archive .*; the pack archive is malicious or damaged/],
  ["a symbolic link", gz(concat(REACH, header({ path: "tools/l.wasm", fields: { typeflag: "2", linkname: "/etc/passwd" } }), END)), /is a symbolic link pointing to "\/etc\/passwd"; pack archives hold regular files only/],
  ["a duplicate entry", gz(concat(REACH, file("reach.json", enc("[]")), END)), /pack archive entry #2 "reach\.json" appears twice/],
  ["no bytes", new Uint8Array(0), /the pack archive is empty \(0 bytes\); a pack archive is a \.tar\.gz file written by `reach-wasm pack build`/],
  ["a cut gzip stream", gz(concat(REACH, END)).subarray(0, 30), /the pack archive is truncated/],
];

describe("packArchiveFiles refusals", () => {
  for (const [what, bytes, message] of CASES) {
    it(`${what}: PACK_MALFORMED naming the pack archive, not a capsule`, async () => {
      const err = await packArchiveFiles(bytes, "p.tar.gz").then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ReachError);
      expect((err as ReachError).code).toBe("PACK_MALFORMED");
      expect((err as ReachError).message).toMatch(/^p\.tar\.gz: /);
      expect((err as ReachError).message).toMatch(message);
      expect((err as ReachError).message).not.toMatch(/capsule/i);
    });
  }
});
