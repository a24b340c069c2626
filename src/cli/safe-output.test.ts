// The CLI's output choke point: every command's streams escape what a terminal would act on (ESC, BEL, CR, DEL, C1,
// bidi controls) as JSON-style \uXXXX text, keep --json output JSON with the same meaning, and redact connection
// credentials on stderr; the raw streams (the CLI's own progress and colour sequences) stay reachable.
import { describe, expect, it } from "vitest";
import { main } from "./cli.ts";
import { rawIO } from "./io.ts";
import { safeIO, terminalSafe } from "./safe-output.ts";

const HOSTILE = "ok\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;pwned\u0007\u001b[2J\u001b[H\r\u0008\u007f\u009b31m\u0085\u202eevil\u2066\u2028end";

function buffers() {
  let stdout = "";
  let stderr = "";
  return { io: { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t) }, out: () => stdout, err: () => stderr };
}

describe("terminalSafe", () => {
  it("escapes every control a terminal acts on, keeps newlines and printable text", () => {
    const out = terminalSafe(`${HOSTILE}\nnext line — ünïcödé 日本`);
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028]/);
    expect(out).toContain("ok\\u001b]52;c;cm0gLXJmIH4=\\u0007");
    expect(out).toContain("\\u009b31m\\u0085\\u202eevil\\u2066\\u2028end\nnext line — ünïcödé 日本");
  });

  it("keeps JSON JSON, with the same meaning: JSON.stringify leaves DEL, C1, bidi and U+2028 raw; they are escaped", () => {
    const value = { message: HOSTILE, nested: ["\u009b", "\u2029"] };
    const json = JSON.stringify(value);
    expect(json).toContain("\u009b"); // what JSON.stringify alone would print
    const safe = terminalSafe(json);
    // eslint-disable-next-line no-control-regex
    expect(safe).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
    expect(JSON.parse(safe)).toEqual(value);
  });
});

describe("safeIO", () => {
  it("escapes both streams, redacts stderr only, and leaves the raw streams raw", () => {
    const b = buffers();
    const io = safeIO(b.io);
    io.stderr(`reach-wasm: cannot reach postgres://app:s3cret@db/runs?sslpassword=s3cret: ${HOSTILE}\n`);
    io.stdout(`{"token":"rwt_s3cret","url":"postgres://u:p@h"}\n`);
    rawIO(io).stderr("\r\u001b[2K");
    expect(b.err()).not.toContain("s3cret");
    expect(b.err()).not.toContain("\u001b]52");
    expect(b.err().endsWith("\r\u001b[2K")).toBe(true);
    expect(b.out()).toBe(`{"token":"rwt_s3cret","url":"postgres://u:p@h"}\n`); // data on stdout is the user's
    expect(safeIO(io)).toBe(io);
  });

  it("main hands every command the escaping streams: an error message with controls prints as text", async () => {
    const b = buffers();
    const code = await main(["show", `no-such-capsule-${HOSTILE}.tar.gz`, "--json"], b.io);
    expect(code).toBe(2);
    // eslint-disable-next-line no-control-regex
    for (const text of [b.out(), b.err()]) expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\u2066]/);
    expect(b.err()).toContain("\\u001b]52;c;");
    expect(JSON.parse(b.out())).toMatchObject({ error: { code: expect.any(String) } });
  });
});
