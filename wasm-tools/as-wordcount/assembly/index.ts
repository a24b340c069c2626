// as-wordcount: an AssemblyScript WASI command (built with @assemblyscript/wasi-shim).
// stdin: JSON {"text": string}; stdout: JSON {"words","chars","lines","now","random"}.
// "now" (Date.now, WASI clock_time_get) and "random" (crypto.getRandomValues, WASI random_get) come from the
// host's virtual clock and seeded stream, so the output is the same on every run with the same seed.

function readStdin(): string {
  const chunks = new Array<ArrayBuffer>();
  let total = 0;
  while (true) {
    const buf = new ArrayBuffer(4096);
    const n = process.stdin.read(buf);
    if (n <= 0) break;
    chunks.push(buf.slice(0, n));
    total += n;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (let i = 0; i < chunks.length; i++) {
    all.set(Uint8Array.wrap(chunks[i]), at);
    at += chunks[i].byteLength;
  }
  return String.UTF8.decode(all.buffer);
}

let src = "";
let pos = 0;
let bad = false;

function ws(): void {
  while (pos < src.length) {
    const c = src.charCodeAt(pos);
    if (c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d) pos++;
    else break;
  }
}

function hexVal(c: i32): i32 {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  bad = true;
  return 0;
}

function parseString(): string {
  if (src.charCodeAt(pos) != 0x22) { bad = true; return ""; }
  pos++;
  let out = "";
  let start = pos;
  while (pos < src.length) {
    const c = src.charCodeAt(pos);
    if (c == 0x22) { out += src.substring(start, pos); pos++; return out; }
    if (c == 0x5c) {
      out += src.substring(start, pos);
      const e = src.charCodeAt(pos + 1);
      pos += 2;
      if (e == 0x6e) out += "\n";
      else if (e == 0x74) out += "\t";
      else if (e == 0x72) out += "\r";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x75) {
        let code = 0;
        for (let k = 0; k < 4; k++) code = code * 16 + hexVal(src.charCodeAt(pos + k));
        pos += 4;
        out += String.fromCharCode(code);
      } else out += String.fromCharCode(e);
      start = pos;
    } else pos++;
  }
  bad = true;
  return out;
}

function skipPrimitive(): void {
  while (pos < src.length) {
    const c = src.charCodeAt(pos);
    if (c == 0x2c || c == 0x7d) return;
    if (c == 0x7b || c == 0x5b || c == 0x22) { bad = true; return; }
    pos++;
  }
}

function hex2(b: u8): string {
  const digits = "0123456789abcdef";
  return digits.charAt(b >> 4) + digits.charAt(b & 15);
}

const input = readStdin();
src = input;
ws();
let text = "";
let found = false;
if (src.charCodeAt(pos) != 0x7b) bad = true;
pos++;
ws();
while (!bad && pos < src.length && src.charCodeAt(pos) != 0x7d) {
  const key = parseString();
  ws();
  if (src.charCodeAt(pos) != 0x3a) { bad = true; break; }
  pos++;
  ws();
  if (key == "text" && src.charCodeAt(pos) == 0x22) { text = parseString(); found = true; }
  else if (src.charCodeAt(pos) == 0x22) parseString();
  else skipPrimitive();
  ws();
  if (src.charCodeAt(pos) == 0x2c) { pos++; ws(); }
}

if (bad || !found) {
  process.stderr.write("as-wordcount: expected JSON {\"text\": string} on stdin\n");
  process.exit(2);
}

let words = 0;
let chars = 0;
let lines = 0;
let inWord = false;
for (let i = 0; i < text.length; i++) {
  const c = text.charCodeAt(i);
  if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
    const p = text.charCodeAt(i - 1);
    if (p >= 0xd800 && p <= 0xdbff) continue; // second half of a surrogate pair: one code point
  }
  chars++;
  if (c == 0x0a) lines++;
  const space = c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d || c == 0x0b || c == 0x0c;
  if (space) inWord = false;
  else if (!inWord) { inWord = true; words++; }
}

const now = Date.now();
const rnd = new Uint8Array(8);
crypto.getRandomValues(rnd);
let rhex = "";
for (let i = 0; i < rnd.length; i++) rhex += hex2(rnd[i]);

process.stderr.write("as-wordcount: counted " + words.toString() + " words\n");
process.stdout.write(
  "{\"words\":" + words.toString() + ",\"chars\":" + chars.toString() + ",\"lines\":" + lines.toString() +
  ",\"now\":" + now.toString() + ",\"random\":\"" + rhex + "\"}\n",
);
