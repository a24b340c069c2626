import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { ancestorPaths, displayPath, isWithin, normalizeWorkspacePath, parentPath } from "./path.ts";

function violation(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    return err as ReachError;
  }
  throw new Error("expected a refusal");
}

describe("normalizeWorkspacePath", () => {
  const good: Array<[string, string]> = [
    ["", ""],
    [".", ""],
    ["./", ""],
    ["a", "a"],
    ["a/b.txt", "a/b.txt"],
    ["./a//b/./c", "a/b/c"],
    ["a/.", "a"],
    ["...", "..."],
    ["..a/b..", "..a/b.."],
    ["ünï/日本.txt", "ünï/日本.txt"],
    ["a".repeat(255), "a".repeat(255)],
    [Array.from({ length: 64 }, () => "d").join("/"), Array.from({ length: 64 }, () => "d").join("/")],
  ];
  for (const [input, out] of good) {
    it(`normalises ${JSON.stringify(input.slice(0, 40))}`, () => {
      expect(normalizeWorkspacePath(input)).toBe(out);
    });
  }

  it("accepts a trailing '/' only for directories", () => {
    expect(normalizeWorkspacePath("a/b/", { directory: true })).toBe("a/b");
    expect(violation(() => normalizeWorkspacePath("a/b/")).details["reason"]).toMatch(/trailing/);
  });

  const bad: Array<[string, RegExp]> = [
    ["..", /'\.\.'/],
    ["../x", /'\.\.'/],
    ["a/../b", /'\.\.'/],
    ["a/../../x", /'\.\.'/],
    ["a/..", /'\.\.'/],
    ["/etc/passwd", /absolute/],
    ["/", /absolute/],
    ["//x", /absolute/],
    ["a\\b", /backslash/],
    ["..\\..\\x", /backslash/],
    ["C:\\x", /backslash/],
    ["a\u0000b", /control/],
    ["a\nb", /control/],
    ["a\u001fb", /control/],
    ["a\u007fb", /control/],
    ["a\ud800b", /surrogate/],
    ["a".repeat(256), /segment/],
    ["é".repeat(128), /segment/], // 256 UTF-8 bytes
    ["a/".repeat(2049), /4096/],
    [Array.from({ length: 65 }, () => "d").join("/"), /deeper/],
  ];
  for (const [input, reason] of bad) {
    it(`refuses ${JSON.stringify(input.slice(0, 40))} with RESOURCE_ACCESS`, () => {
      const err = violation(() => normalizeWorkspacePath(input, { operation: "fs.read" }));
      expect(err.code).toBe("POLICY_VIOLATION");
      expect(err.details["violationType"]).toBe("RESOURCE_ACCESS");
      expect(err.details["reason"]).toMatch(reason);
      expect(err.details["attemptedCapability"]).toMatch(/^fs\.read:/);
      const shown = err.details["path"] as string;
      expect(shown.length).toBeLessThanOrEqual(201);
      expect(shown).not.toMatch(/[\u0000-\u001f]/u); // eslint-disable-line no-control-regex
      expect(shown).not.toMatch(/\p{Surrogate}/u);
    });
  }

  it("throws TypeError for a non-string", () => {
    expect(() => normalizeWorkspacePath(1 as unknown as string)).toThrow(TypeError);
  });
});

describe("path helpers", () => {
  it("computes parents, ancestors and containment", () => {
    expect(parentPath("a/b/c")).toBe("a/b");
    expect(parentPath("a")).toBe("");
    expect(ancestorPaths("a/b/c")).toEqual(["a", "a/b"]);
    expect(ancestorPaths("a")).toEqual([]);
    expect(isWithin("data/x", "data")).toBe(true);
    expect(isWithin("data", "data")).toBe(true);
    expect(isWithin("database/x", "data")).toBe(false);
    expect(isWithin("anything", "")).toBe(true);
  });
  it("displays paths safely", () => {
    expect(displayPath("a\u0000b")).toBe("a\\u0000b");
    expect(displayPath("\ud800")).toBe("\ufffd");
    expect(Array.from(displayPath("😀".repeat(300))).length).toBe(201);
  });
});
