import { describe, expect, it } from "vitest";
import { ManifestSchema } from "../protocol/pack.ts";
import { ReachError } from "../protocol/errors.ts";
import { HOST_OPS } from "../sandbox/types.ts";
import {
  capabilityPolicy,
  checkFetchUrl,
  checkFsTarget,
  checkMemoryKey,
  checkOp,
  requiredPermission,
  workspaceResources,
} from "./capabilities.ts";

function manifest(capabilities: Record<string, unknown>, policies: Record<string, unknown> = {}) {
  return ManifestSchema().parse({ manifestVersion: "1.0.0", capabilities, policies });
}

function denial(fn: () => unknown): { violationType: unknown; attemptedCapability: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).code).toBe("POLICY_VIOLATION");
    const d = (err as ReachError).details;
    return { violationType: d["violationType"], attemptedCapability: d["attemptedCapability"] };
  }
  throw new Error("expected a POLICY_VIOLATION");
}

describe("requiredPermission", () => {
  it("maps every host op (seed 003 §4.2 Permission Checks)", () => {
    const table = Object.fromEntries(HOST_OPS.map((op) => [op, requiredPermission(op)]));
    expect(table).toEqual({
      "fs.read": "filesystem", "fs.write": "filesystem", "fs.list": "filesystem", "fs.stat": "filesystem",
      "fs.remove": "filesystem", "http.fetch": "network", "memory.get": null, "memory.set": null,
      "temp.write": "filesystem", "lines.read": "filesystem", log: null, "artifact.emit": null, "clock.now": null,
      "random.bytes": null, "mcp.call": null, "secret.placeholder": null,
    });
  });
});

describe("capabilityPolicy", () => {
  it("reads workspace, memory and http resources", () => {
    const p = capabilityPolicy(manifest({
      permissions: ["filesystem", "network"],
      resources: [
        { uri: "workspace:///data/", access: "read" },
        { uri: "workspace:///out/reports/", access: "readwrite" },
        { uri: "memory://notes/", access: "readwrite" },
        { uri: "https://API.example.com/v1/", access: "read" },
        { uri: "s3://bucket/", access: "read" },
      ],
    }, { allowedHosts: ["api.example.com"] }));
    expect(p.workspaceRoots).toEqual([{ root: "data", access: "read" }, { root: "out/reports", access: "readwrite" }]);
    expect(p.memoryGrants).toEqual([{ prefix: "notes/", access: "readwrite" }]);
    expect(p.urlGrants).toEqual([{ prefix: "https://api.example.com/v1/", access: "read" }]);
    expect(p.allowedHosts).toEqual(["api.example.com"]);
    expect(workspaceResources(p, { data: { "a.txt": new Uint8Array([1]) } })[0]!.files!["a.txt"]).toEqual(new Uint8Array([1]));
  });

  it("leaves memory and urls unrestricted when none is declared", () => {
    const p = capabilityPolicy(manifest({}));
    expect(p.memoryGrants).toBeNull();
    expect(p.urlGrants).toBeNull();
    expect(() => checkMemoryKey(p, "memory.set", "anything")).not.toThrow();
  });

  it.each([
    "workspace://data/", "workspace:///../x/", "workspace:///", "workspace:///temp/", "memory:notes",
    "https://evil.com/",
  ])("refuses the resource %s", (uri) => {
    expect(() => capabilityPolicy(manifest({ resources: [{ uri, access: "read" }] }, { allowedHosts: ["api.example.com"] })))
      .toThrow(TypeError);
  });

  it("refuses a folder declared twice", () => {
    expect(() => capabilityPolicy(manifest({ resources: [
      { uri: "workspace:///data/", access: "read" }, { uri: "workspace:///data", access: "write" },
    ] }))).toThrow(/twice/);
  });
});

describe("checkOp", () => {
  const none = capabilityPolicy(manifest({}));
  const all = capabilityPolicy(manifest({ permissions: ["filesystem", "network"] }, { allowedHosts: ["api.example.com"] }));
  const restricted = capabilityPolicy(manifest({ permissions: ["filesystem", "network"] }), { restricted: true });

  it("refuses ops whose permission is not declared, with PERMISSION_DENIED and op:target", () => {
    expect(denial(() => checkOp(none, "fs.write", "data/x.txt"))).toEqual({
      violationType: "PERMISSION_DENIED", attemptedCapability: "fs.write:data/x.txt",
    });
    expect(denial(() => checkOp(none, "http.fetch", "https://api.example.com/"))).toEqual({
      violationType: "PERMISSION_DENIED", attemptedCapability: "http.fetch:https://api.example.com/",
    });
    for (const op of ["memory.get", "memory.set", "log", "artifact.emit", "clock.now", "random.bytes"] as const) {
      expect(() => checkOp(none, op)).not.toThrow();
    }
    for (const op of HOST_OPS) expect(() => checkOp(all, op)).not.toThrow();
  });

  it("restricted executor: no network, no memory.set, no writes outside temp/", () => {
    expect(denial(() => checkOp(restricted, "http.fetch", "https://x.example/")).violationType).toBe("PERMISSION_DENIED");
    expect(denial(() => checkOp(restricted, "memory.set", "k")).violationType).toBe("PERMISSION_DENIED");
    expect(denial(() => checkFsTarget(restricted, "fs.write", "data/x.txt"))).toEqual({
      violationType: "PERMISSION_DENIED", attemptedCapability: "fs.write:data/x.txt",
    });
    expect(() => checkFsTarget(restricted, "fs.write", "temp/x.txt")).not.toThrow();
    expect(() => checkFsTarget(restricted, "fs.read", "data/x.txt")).not.toThrow();
    expect(() => checkFsTarget(all, "fs.write", "data/x.txt")).not.toThrow();
  });

  it("honours sandbox.network none and sandbox.filesystem readonly", () => {
    const p = capabilityPolicy(manifest({ permissions: ["filesystem", "network"] },
      { allowedHosts: ["api.example.com"], sandbox: { network: "none", filesystem: "readonly" } }));
    expect(denial(() => checkOp(p, "http.fetch", "u")).violationType).toBe("PERMISSION_DENIED");
    expect(denial(() => checkFsTarget(p, "fs.remove", "data/x")).violationType).toBe("PERMISSION_DENIED");
    expect(() => checkFsTarget(p, "fs.write", "temp/x")).not.toThrow();
  });
});

describe("checkMemoryKey", () => {
  const p = capabilityPolicy(manifest({ resources: [
    { uri: "memory://notes/", access: "readwrite" }, { uri: "memory://shared/", access: "read" },
  ] }));
  it("allows keys under a prefix with the access granted", () => {
    expect(() => checkMemoryKey(p, "memory.set", "notes/a")).not.toThrow();
    expect(() => checkMemoryKey(p, "memory.get", "shared/a")).not.toThrow();
  });
  it("refuses keys outside every prefix (RESOURCE_ACCESS) and writes to read grants (PERMISSION_DENIED)", () => {
    expect(denial(() => checkMemoryKey(p, "memory.get", "secret"))).toEqual({
      violationType: "RESOURCE_ACCESS", attemptedCapability: "memory.get:secret",
    });
    expect(denial(() => checkMemoryKey(p, "memory.set", "shared/a"))).toEqual({
      violationType: "PERMISSION_DENIED", attemptedCapability: "memory.set:shared/a",
    });
  });
});

describe("checkFetchUrl", () => {
  const p = capabilityPolicy(manifest({ permissions: ["network"], resources: [
    { uri: "https://api.example.com/v1/", access: "read" }, { uri: "https://api.example.com/v1/upload/", access: "write" },
  ] }, { allowedHosts: ["api.example.com"] }));
  const open = capabilityPolicy(manifest({ permissions: ["network"] }, { allowedHosts: ["*.example.com"] }));

  it("returns the normalised URL", () => {
    expect(checkFetchUrl(open, "https://A.example.com./x", "GET")).toBe("https://a.example.com/x");
    expect(checkFetchUrl(p, "https://api.example.com/v1/items", "GET")).toBe("https://api.example.com/v1/items");
  });
  it("refuses other hosts with RESOURCE_ACCESS and http.fetch:<url>", () => {
    expect(denial(() => checkFetchUrl(open, "https://evil.com/", "GET"))).toEqual({
      violationType: "RESOURCE_ACCESS", attemptedCapability: "http.fetch:https://evil.com/",
    });
    expect(denial(() => checkFetchUrl(open, "http://2130706433/", "GET")).violationType).toBe("RESOURCE_ACCESS");
  });
  it("checks redirects against the hosts, resolved from the URL that redirected", () => {
    expect(checkFetchUrl(open, "/next", "GET", "https://a.example.com/x")).toBe("https://a.example.com/next");
    expect(denial(() => checkFetchUrl(open, "//evil.com/", "GET", "https://a.example.com/x"))).toEqual({
      violationType: "RESOURCE_ACCESS", attemptedCapability: "http.fetch:https://evil.com/",
    });
  });
  it("keeps requests under the declared URL prefixes, read ones to GET/HEAD", () => {
    expect(denial(() => checkFetchUrl(p, "https://api.example.com/v2/", "GET")).violationType).toBe("RESOURCE_ACCESS");
    expect(denial(() => checkFetchUrl(p, "https://api.example.com/v1/items", "POST")).violationType).toBe("PERMISSION_DENIED");
    expect(checkFetchUrl(p, "https://api.example.com/v1/upload/a", "POST")).toBe("https://api.example.com/v1/upload/a");
  });
});
