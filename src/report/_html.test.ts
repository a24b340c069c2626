import { describe, expect, it } from "vitest";
import { downloadName, esc, sniffImage } from "./_html.ts";

describe("HTML escaping of capsule text", () => {
  it("escapes markup, quotes, control and bidirectional characters", () => {
    expect(esc(`</script><img src=x onerror='a("b")'>&`)).toBe("&lt;/script&gt;&lt;img src=x onerror=&#39;a(&quot;b&quot;)&#39;&gt;&amp;");
    expect(esc("a\u0000b\u001bc\u202ed\u2066e\tf\ng\r")).toBe("a\\u{0}b\\u{1b}c\\u{202e}d\\u{2066}e\tf\ng\r");
  });

  it("makes plain download names and trusts only image signatures, never a declared type", () => {
    expect(downloadName("../../etc/passwd")).toBe("__.._etc_passwd");
    expect(downloadName('a<b>"c:*?|\\.txt')).toBe("a_b__c_____.txt");
    expect(downloadName("")).toBe("download");
    expect(sniffImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe("image/png");
    expect(sniffImage(new TextEncoder().encode("<svg onload=alert(1)>"))).toBeNull();
    expect(sniffImage(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
  });
});
