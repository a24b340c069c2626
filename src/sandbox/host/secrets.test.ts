import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { checkSecretValues, placeholderNames, SecretBox, substituteSecrets } from "./secrets.ts";

const declared = { TOKEN: { hosts: ["api.example.com"] }, KEY: { hosts: ["*.example.org"] } };
const TOKEN = "tok/en+One=42&x~s3cr3t";
const KEY = "päss wörd 12345";
const box = new SecretBox(declared, { TOKEN, KEY });
const enc = new TextEncoder();
const b64 = (s: string): string => btoa(String.fromCharCode(...enc.encode(s)));
const thrown = (f: () => unknown): ReachError => {
  try {
    f();
  } catch (err) {
    return err as ReachError;
  }
  throw new Error("expected a throw");
};

describe("SecretBox", () => {
  it("finds placeholders, also as the URL parser writes them in a path", () => {
    expect(placeholderNames("a {{secret:TOKEN}} b %7B%7Bsecret:KEY%7d%7D {{secret:TOKEN}}")).toEqual(["TOKEN", "KEY"]);
    expect(placeholderNames("{{secret:1BAD}} {{ secret:X}}")).toEqual([]);
  });

  it("substitutes for the secret's hosts only: URL (percent-encoded), header values, body", () => {
    const hop = box.prepare({
      url: "https://api.example.com/v1/%7B%7Bsecret:TOKEN%7D%7D?k={{secret:TOKEN}}",
      headers: [["authorization", "Bearer {{secret:TOKEN}}"]],
      body: enc.encode('{"t":"{{secret:TOKEN}}"}'),
    });
    expect(hop.url).toBe(`https://api.example.com/v1/${encodeURIComponent(TOKEN)}?k=${encodeURIComponent(TOKEN)}`);
    expect(hop.headers).toEqual([["authorization", `Bearer ${TOKEN}`]]);
    expect(new TextDecoder().decode(hop.body!)).toBe(`{"t":"${TOKEN}"}`);
    const other = thrown(() => box.prepare({ url: "https://evil.example.com/", headers: [["x", "{{secret:TOKEN}}"]], body: null }));
    expect(other.code).toBe("POLICY_VIOLATION");
    expect(other.details).toMatchObject({ violationType: "RESOURCE_ACCESS", secret: "TOKEN", attemptedCapability: "http.fetch:secret:TOKEN" });
    expect(other.message).not.toContain(TOKEN);
    expect(thrown(() => box.prepare({ url: "https://api.example.com/", headers: [], body: enc.encode("{{secret:NOPE}}") })).details["reason"]).toBe("undeclared secret");
    // a request without placeholders goes as it is, to any host
    const plain = { url: "https://elsewhere.test/", headers: [] as [string, string][], body: null };
    expect(box.prepare(plain)).toBe(plain);
  });

  it("replay (no values) checks the same and substitutes nothing", () => {
    const replay = new SecretBox(declared, null);
    const req = { url: "https://api.example.com/", headers: [["a", "{{secret:TOKEN}}"]] as [string, string][], body: null };
    expect(replay.prepare(req)).toBe(req);
    expect(thrown(() => replay.check({ ...req, url: "https://x.test/" })).code).toBe("POLICY_VIOLATION");
    expect(replay.scrubText(`x ${TOKEN}`)).toBe(`x ${TOKEN}`);
  });

  it("scrubs the value raw, JSON-escaped, percent-encoded, hex and base64 (every alignment, both alphabets)", () => {
    for (const form of [TOKEN, JSON.stringify(KEY).slice(1, -1), encodeURIComponent(TOKEN), encodeURIComponent(KEY).toLowerCase(), encodeURIComponent(KEY).replace(/%20/g, "+")]) {
      expect(box.scrubText(`<${form}>`)).toMatch(/^<\{\{secret:(TOKEN|KEY)\}\}>$/);
    }
    for (const pre of ["", "u", "us", "user:"]) {
      const text = b64(pre + TOKEN);
      const out = box.scrubText(`Basic ${text} end`);
      expect(out, pre).toBe("Basic {{secret:TOKEN}} end");
      expect(box.scrubText(text.replace(/\+/g, "-").replace(/\//g, "_"))).toBe("{{secret:TOKEN}}");
    }
    const hex = [...enc.encode(TOKEN)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(box.scrubText(hex)).toBe("{{secret:TOKEN}}");
    const bytes = box.scrubBytes(enc.encode(`a${TOKEN}b`));
    expect(new TextDecoder().decode(bytes)).toBe("a{{secret:TOKEN}}b");
    const err = box.scrubError(new ReachError("EXEC_RESOURCE_UNAVAILABLE", `bad header ${TOKEN}`, { details: { v: KEY } }));
    expect(JSON.stringify(err.toDetails())).not.toMatch(/s3cr3t|päss/);
  });

  it("scrubbing is linear: a long run of base64 characters is searched once, not once per position", () => {
    const text = "A".repeat(4 * 1024 * 1024);
    expect(box.scrubBinary(text)).toBe(text);
    const around = `${"A".repeat(100_000)}${b64(TOKEN)}`; // one base64 word: all of it goes
    expect(box.scrubText(`x ${around} y`)).toBe("x {{secret:TOKEN}} y");
  }, 60_000);

  it("refuses missing, undeclared, short and long values without printing them", () => {
    expect(thrown(() => checkSecretValues(declared, { TOKEN })).message).toMatch(/needs secret KEY/);
    expect(thrown(() => checkSecretValues(declared, { TOKEN, KEY, X: "12345678" })).details["reason"]).toBe("undeclared");
    const short = thrown(() => checkSecretValues(declared, { TOKEN: "1234567", KEY }));
    expect(short.message).toMatch(/7 bytes.*at least 8.*corrupt/);
    expect(short.message).not.toContain("1234567");
    expect(thrown(() => checkSecretValues(declared, { TOKEN: "x".repeat(70000), KEY })).details["reason"]).toBe("long");
  });

  it("substituteSecrets: a text for a process environment, or for a URL under the secret's hosts", () => {
    expect(substituteSecrets("Bearer {{secret:TOKEN}}", box)).toBe(`Bearer ${TOKEN}`);
    expect(substituteSecrets("{{secret:KEY}}", box, "https://a.example.org/")).toBe(KEY);
    expect(thrown(() => substituteSecrets("{{secret:KEY}}", box, "https://example.org/")).code).toBe("POLICY_VIOLATION");
    expect(thrown(() => substituteSecrets("{{secret:NOPE}}", box)).code).toBe("POLICY_VIOLATION");
  });
});
