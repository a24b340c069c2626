// readDirTree (a pack folder, a `wasi --dir`): a folder over a limit is refused saying which limit, which file
// passed it and what to do, before more than the limit is read.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readDirTree } from "./files.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-dirtree-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("readDirTree limits", () => {
  it("too many bytes or entries: PROTO_INVALID_ARGUMENT naming the limit, the file and the fix", async () => {
    const dir = join(scratch, "d");
    mkdirSync(join(dir, "sub"), { recursive: true });
    writeFileSync(join(dir, "a.txt"), "x".repeat(600));
    writeFileSync(join(dir, "sub", "b.bin"), "y".repeat(600));
    expect((await readDirTree(dir, { maxTotalBytes: 1200 })).files.size).toBe(2);
    await expect(readDirTree(dir, { maxTotalBytes: 1000 })).rejects.toMatchObject({
      code: "PROTO_INVALID_ARGUMENT",
      message: expect.stringMatching(/more than 1000 bytes in all \("sub\/b\.bin" passes the limit\); move large files out of it$/),
    });
    await expect(readDirTree(dir, { maxEntries: 2 })).rejects.toMatchObject({ message: expect.stringMatching(/more than 2 entries; give a folder with fewer files$/) });
  });
});
