import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { checkRedirect, checkUrlAllowed, parseHostPattern, policyViolationForHost } from "./hosts.ts";

const HOSTS = ["api.example.com", "*.example.org", "10.1.2.3", "[2001:db8::1]"];

describe("parseHostPattern", () => {
  it("parses exact, wildcard and IP patterns, normalising case, IDNA and one trailing dot", () => {
    expect(parseHostPattern("API.Example.COM")).toEqual({ kind: "exact", host: "api.example.com" });
    expect(parseHostPattern("api.example.com.")).toEqual({ kind: "exact", host: "api.example.com" });
    expect(parseHostPattern("*.Example.org")).toEqual({ kind: "wildcard", suffix: "example.org" });
    expect(parseHostPattern("bücher.example")).toEqual({ kind: "exact", host: "xn--bcher-kva.example" });
    expect(parseHostPattern("10.1.2.3")).toEqual({ kind: "ip", host: "10.1.2.3" });
    expect(parseHostPattern("[2001:DB8:0::1]")).toEqual({ kind: "ip", host: "[2001:db8::1]" });
    expect(parseHostPattern("[::ffff:127.0.0.1]")).toEqual({ kind: "ip", host: "[::ffff:7f00:1]" });
  });

  const malformed = [
    "", ".", "*", "*.", "*.com", "**.example.com", "*example.com", "a.*.example.com", "*.*.example.com",
    "example..com", ".example.com", "example.com..", "api.example.com/path", "user@example.com",
    "example.com:443", "exa mple.com", "exa\u0000mple.com", "ex%61mple.com", "a\\b.com",
    // IPs only in canonical form, never under a wildcard
    "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.0.0.01", "256.0.0.1", "*.0.0.1", "*.1.2.3.4",
    "[::1", "[::1]:80", "[::1]/x]", "[nothing]", "a.b.c.1",
  ];
  for (const p of malformed) {
    it(`refuses ${JSON.stringify(p)}`, () => {
      expect(() => parseHostPattern(p)).toThrow(TypeError);
    });
  }

  it("refuses non-strings", () => {
    expect(() => parseHostPattern(42 as unknown as string)).toThrow(/expected a string/);
  });
});

describe("checkUrlAllowed: positives", () => {
  const ok: Array<[string, string]> = [
    ["https://api.example.com/v1?q=1", "api.example.com"],
    ["http://API.EXAMPLE.COM/", "api.example.com"],
    ["https://api.example.com./x", "api.example.com"],
    ["https://api.example.com:8443/", "api.example.com"],
    ["https://ａｐｉ.example.com/", "api.example.com"],
    ["https://a.example.org/", "a.example.org"],
    ["https://a.b.c.example.org/", "a.b.c.example.org"],
    ["http://10.1.2.3/", "10.1.2.3"],
    ["http://[2001:db8::1]:8080/", "[2001:db8::1]"],
  ];
  for (const [url, host] of ok) {
    it(`allows ${url}`, () => {
      const r = checkUrlAllowed(url, HOSTS);
      expect(r).toMatchObject({ ok: true, host });
    });
  }

  it("returns the normalised URL to fetch, trailing dot stripped", () => {
    expect(checkUrlAllowed("HTTPS://Api.Example.com./a b", HOSTS)).toEqual({
      ok: true,
      host: "api.example.com",
      url: "https://api.example.com/a%20b",
    });
  });

  it("admits a refused IP only when that canonical IP is listed", () => {
    expect(checkUrlAllowed("http://127.0.0.1/", ["127.0.0.1"]).ok).toBe(true);
    // Other spellings of the listed address are the same host after URL canonicalisation.
    expect(checkUrlAllowed("http://0x7f.1/", ["127.0.0.1"])).toMatchObject({ ok: true, url: "http://127.0.0.1/" });
    // ... but the IPv4-mapped IPv6 form is a different host.
    expect(checkUrlAllowed("http://[::ffff:127.0.0.1]/", ["127.0.0.1"]).ok).toBe(false);
    expect(checkUrlAllowed("http://[::ffff:127.0.0.1]/", ["[::ffff:7f00:1]"]).ok).toBe(true);
  });
});

describe("checkUrlAllowed: a corpus of disguised hosts is refused", () => {
  const refused = [
    // numeric, hex, octal and short IPv4 spellings of loopback
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://127.0.0.1/",
    "http://127.0.0.1./",
    "http://%31%32%37.0.0.1/",
    // IPv6 and IPv4-mapped IPv6
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    // the listed IP in another family or a neighbour
    "http://10.1.2.4/",
    "http://[::ffff:10.1.2.3]/",
    // suffix and prefix tricks
    "https://api.example.com.evil.com/",
    "https://evilapi.example.com/",
    "https://evilexample.org/",
    "https://example.org/",
    "https://example.org./",
    "https://example.org.evil.com/",
    "https://api.example.co/",
    "https://api.example.com../",
    "https://.api.example.com/",
    "https://api..example.com/",
    // credentials
    "https://user@api.example.com/",
    "https://user:pw@api.example.com/",
    "https://api.example.com@evil.com/",
    "https://api.example.com:443@evil.com/",
    // schemes
    "ftp://api.example.com/",
    "file:///etc/passwd",
    "data:text/plain,hi",
    "javascript:alert(1)",
    "ws://api.example.com/",
    // not a URL at all, or a relative one
    "api.example.com",
    "//api.example.com/",
    "/v1",
    "",
    "http://",
    // odd characters the URL parser passes through
    "http://*.example.org/",
    "http://evil.com\\@api.example.com/",
    "http://evil.com#@api.example.com/",
    "http://evil.com?@api.example.com/",
  ];
  for (const url of refused) {
    it(`refuses ${JSON.stringify(url)}`, () => {
      const r = checkUrlAllowed(url, HOSTS);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason.length).toBeGreaterThan(0);
    });
  }

  it("refuses every IP spelling of an allowed name's address when only names are listed", () => {
    for (const url of ["http://2130706433/", "http://[::1]/", "http://0x0a.1.2.3/"]) {
      expect(checkUrlAllowed(url, ["*.example.org", "api.example.com"]).ok).toBe(false);
    }
  });

  it("refuses everything when the list is empty", () => {
    expect(checkUrlAllowed("https://api.example.com/", []).ok).toBe(false);
  });

  it("gives reasons that say what was wrong", () => {
    expect(checkUrlAllowed("https://u@api.example.com/", HOSTS)).toMatchObject({ reason: expect.stringMatching(/credentials/) });
    expect(checkUrlAllowed("ftp://api.example.com/", HOSTS)).toMatchObject({ reason: expect.stringMatching(/scheme/) });
    expect(checkUrlAllowed("http://2130706433/", HOSTS)).toMatchObject({ reason: expect.stringMatching(/127\.0\.0\.1/) });
  });

  it("throws TypeError for a malformed pattern list or a non-string URL", () => {
    expect(() => checkUrlAllowed("https://a.example.org/", ["*.com"])).toThrow(TypeError);
    expect(() => checkUrlAllowed(null as unknown as string, HOSTS)).toThrow(TypeError);
    expect(() => checkUrlAllowed("https://a.example.org/", "a.example.org" as unknown as string[])).toThrow(TypeError);
  });
});

describe("checkRedirect", () => {
  const from = "https://api.example.com/start";
  it("follows relative and absolute redirects inside the allowlist", () => {
    expect(checkRedirect(from, "/next", HOSTS)).toMatchObject({ ok: true, url: "https://api.example.com/next" });
    expect(checkRedirect(from, "https://x.example.org/", HOSTS)).toMatchObject({ ok: true, host: "x.example.org" });
    expect(checkRedirect(from, "?page=2", HOSTS)).toMatchObject({ ok: true, url: "https://api.example.com/start?page=2" });
  });
  it("refuses redirects that leave the allowlist", () => {
    for (const loc of [
      "https://evil.com/",
      "//evil.com/",
      "http://2130706433/",
      "http://[::ffff:127.0.0.1]/",
      "https://api.example.com.evil.com/",
      "https://user@api.example.com/",
      "file:///etc/passwd",
      "http://[::1",
    ]) {
      expect(checkRedirect(from, loc, HOSTS).ok, loc).toBe(false);
    }
  });
  it("refuses when the origin URL itself does not parse", () => {
    expect(checkRedirect("not a url", "/x", HOSTS).ok).toBe(false);
  });
});

describe("policyViolationForHost", () => {
  it("builds a RESOURCE_ACCESS POLICY_VIOLATION with the URL and reason", () => {
    const err = policyViolationForHost("http://2130706433/", "the IP address 127.0.0.1 is not in allowedHosts");
    expect(err).toBeInstanceOf(ReachError);
    expect(err.code).toBe("POLICY_VIOLATION");
    expect(err.details).toEqual({
      violationType: "RESOURCE_ACCESS",
      attemptedCapability: "http.fetch",
      url: "http://2130706433/",
      reason: "the IP address 127.0.0.1 is not in allowedHosts",
    });
    expect(err.message).toMatch(/allowedHosts/);
  });
  it("clips long URLs and makes control characters printable", () => {
    const err = policyViolationForHost("http://x/" + "a".repeat(5000) + "\u0000", "r");
    expect((err.details["url"] as string).length).toBeLessThanOrEqual(201);
    // eslint-disable-next-line no-control-regex -- refusing/escaping control characters is the point
    expect(err.details["url"]).not.toMatch(/\u0000/);
  });
});
