// A step's workspace effect as data: the exact delta rebuilds the committed state (node numbers included); merged onto
// another state, the step's version wins path by path.
import { describe, expect, it } from "vitest";
import { applyWorkspaceDelta, mergeWorkspaceChanges, Workspace, workspaceDelta } from "./workspace.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function step(ws: Workspace, act: (tx: ReturnType<Workspace["beginStep"]>) => void): { before: Workspace; after: Workspace } {
  const before = Workspace.fromImage(ws.image());
  const tx = ws.beginStep();
  act(tx);
  tx.commit();
  return { before, after: ws };
}

describe("workspace deltas", () => {
  it("applyWorkspaceDelta rebuilds exactly what the step committed (listing, digest, node numbers)", () => {
    const ws = new Workspace();
    const t = ws.beginStep();
    t.write("a/x.txt", enc.encode("x"));
    t.write("a/y.txt", enc.encode("y"));
    t.commit();
    const { before, after } = step(ws, (tx) => {
      tx.remove("a/y.txt");
      tx.write("b/z.txt", enc.encode("z"));
      tx.link("a/x.txt", "b/x2.txt");
      tx.symlink("b/l", "x2.txt");
    });
    const d = workspaceDelta(before.image().state, after.image().state);
    const rebuilt = Workspace.fromImage({ state: applyWorkspaceDelta(before.image().state, d), config: after.image().config });
    expect(rebuilt.digest()).toBe(after.digest());
    expect(rebuilt.lstat("b/x2.txt")).toEqual(after.lstat("b/x2.txt"));
    expect(rebuilt.lstat("a/x.txt").nlink).toBe(2);
  });

  it("mergeWorkspaceChanges: removals take subtrees, writes replace what is there, shared names stay shared", () => {
    const base = new Workspace();
    const t = base.beginStep();
    t.write("d/old.txt", enc.encode("old"));
    t.commit();
    // another state: a sibling step wrote d/new.txt and e
    const other = Workspace.fromImage(base.image());
    const o = other.beginStep();
    o.write("d/new.txt", enc.encode("new"));
    o.write("e", enc.encode("file e"));
    o.commit();
    // the step: removes d, makes e a directory, writes two names of one file
    const { before, after } = step(Workspace.fromImage(base.image()), (tx) => {
      tx.remove("d", { recursive: true });
      tx.write("e/f.txt", enc.encode("f"));
      tx.link("e/f.txt", "e/g.txt");
    });
    const merged = Workspace.fromImage({ state: mergeWorkspaceChanges(other.image().state, before.image().state, after.image().state), config: other.image().config });
    expect(merged.exists("d")).toBe(false);
    expect(dec.decode(merged.read("e/f.txt"))).toBe("f");
    expect(merged.lstat("e/g.txt").nlink).toBe(2);
    expect(merged.snapshot().map((e) => e.path)).toEqual(["e/f.txt", "e/g.txt"]);
  });
});
