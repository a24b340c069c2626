// reach-wasm example component tool: text statistics (built by ../build.mjs with componentize-js).
//
// World: reach:tool/tool (../wit/tool.wit). Input JSON: {"text": string, "top"?: integer 1..50}.
// Output JSON: {"chars", "words", "lines", "unique", "top": [{"word","count"}], "at", "sample", "nonce"}
//   - "at":     the host's virtual clock (host op "clock.now"),
//   - "sample": Date.now() and Math.random() as the guest sees them (they come through wasi:clocks and
//               wasi:random, which reach-wasm supplies virtually, so they are deterministic too),
//   - "nonce":  4 bytes from the host's seeded stream (host op "random.bytes"), as hex.
// It logs one line through the host op "log" and one through console.log (wasi:cli/stdout, captured).
// The other modes exist for the runner's limit tests: "fail" returns err(...), "spin" never returns,
// "grow" allocates without end.
import { call } from "reach:tool/host";

function host(op, request) {
  // `call` returns the ok string, or throws ComponentError with the err payload (jco's result mapping).
  return JSON.parse(call(op, JSON.stringify(request)));
}

function fail(message) {
  // A thrown value becomes `err(string)` of the exported result.
  throw JSON.stringify({ message });
}

function hex(base64) {
  const bin = atob(base64);
  let out = "";
  for (let i = 0; i < bin.length; i++) out += bin.charCodeAt(i).toString(16).padStart(2, "0");
  return out;
}

export function invoke(inputText) {
  let input;
  try {
    input = JSON.parse(inputText);
  } catch {
    fail("input is not JSON");
  }
  if (input === null || typeof input !== "object" || Array.isArray(input)) fail("input must be an object");
  const text = input.text;
  if (typeof text !== "string") fail('"text" must be a string');
  const top = input.top === undefined ? 3 : input.top;
  if (!Number.isInteger(top) || top < 1 || top > 50) fail('"top" must be an integer from 1 to 50');
  const mode = input.mode === undefined ? "stats" : input.mode;
  if (mode === "fail") fail(`asked to fail: ${text}`);
  if (mode === "spin") for (;;);
  if (mode === "grow") {
    const hoard = [];
    for (;;) hoard.push(new Array(1 << 16).fill(hoard.length));
  }
  if (mode !== "stats") fail('"mode" must be one of "stats", "fail", "spin", "grow"');

  const words = text.toLowerCase().match(/[a-z0-9'\u00c0-\uffff]+/g) ?? [];
  const counts = new Map();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const ranked = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, top)
    .map(([word, count]) => ({ word, count }));

  const now = host("clock.now", {});
  const nonce = hex(host("random.bytes", { n: 4 }).data);
  host("log", { level: "info", message: `text-stats: ${words.length} words, ${counts.size} unique` });
  console.log(`text-stats: top word ${ranked.length > 0 ? ranked[0].word : "(none)"}`);

  return JSON.stringify({
    chars: [...text].length,
    words: words.length,
    lines: text.length === 0 ? 0 : text.split("\n").length,
    unique: counts.size,
    top: ranked,
    at: now.iso,
    sample: { dateNow: Date.now(), random: Math.random() },
    nonce,
  });
}
