/**
 * Where a secret's value comes back, it becomes its placeholder (`secrets.ts` `SecretBox.scrubBinary`): the value
 * raw and in the forms an echo takes — JSON-escaped, percent-encoded (upper and lower case hex, `+` for space), hex,
 * base64 and base64url at each of the three byte alignments (what `Basic base64(user:value)` shows). Works on binary
 * strings (`_placeholders.ts`), linear in the text whatever it holds.
 * @module
 */
import { bytesToBinary, secretPlaceholder } from "./_placeholders.ts";
import { MIN_SECRET_BYTES } from "./_secret-values.ts";

const utf8 = new TextEncoder();

const hex = (b: Uint8Array): string => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

function base64(bin: string): string {
  return btoa(bin);
}

/** The base64 characters of `value` that do not depend on the bytes around it, at each of the three alignments. */
function base64Cores(bin: string): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const text = base64("\0".repeat(k) + bin);
    const startBit = 8 * k;
    const endBit = 8 * (k + bin.length);
    const first = Math.ceil(startBit / 6);
    const last = Math.floor(endBit / 6); // exclusive: characters wholly inside the value's bits
    out.push(text.slice(first, last));
  }
  return out;
}

/** A base64 core and the alphabet of the word around it (its edge characters carry bits of the value). */
type Base64Word = { core: string; alphabet: RegExp };
const STD = /[A-Za-z0-9+/]/;
const URL_SAFE = /[A-Za-z0-9_-]/;

/** The base64 words holding a value (standard and URL-safe alphabets, each alignment). */
function base64WordsOf(value: string): Base64Word[] {
  const out: Base64Word[] = [];
  for (const core of base64Cores(bytesToBinary(utf8.encode(value)))) {
    out.push({ core, alphabet: STD });
    out.push({ core: core.replace(/\+/g, "-").replace(/\//g, "_"), alphabet: URL_SAFE });
  }
  return out;
}

/**
 * Replace every whole base64 word holding `core` (the core found literally, then widened over the word's alphabet
 * and its `=` padding): linear in the text, whatever it holds.
 */
function replaceWords(text: string, word: Base64Word, placeholder: string): string {
  let at = text.indexOf(word.core);
  if (at < 0) return text;
  let out = "";
  let done = 0;
  while (at >= 0) {
    let start = at;
    while (start > done && word.alphabet.test(text[start - 1]!)) start--;
    let end = at + word.core.length;
    while (end < text.length && word.alphabet.test(text[end]!)) end++;
    while (end < text.length && text[end] === "=") end++;
    out += text.slice(done, start) + placeholder;
    done = end;
    at = text.indexOf(word.core, end);
  }
  return out + text.slice(done);
}

/** Every literal form of a value the box replaces (binary strings), longest first. */
function formsOf(value: string): string[] {
  const bytes = utf8.encode(value);
  const bin = bytesToBinary(bytes);
  const json = JSON.stringify(value).slice(1, -1);
  const asciiJson = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const pct = encodeURIComponent(value);
  const forms = new Set<string>([
    bin,
    bytesToBinary(utf8.encode(json)),
    asciiJson,
    pct,
    pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    pct.replace(/%20/g, "+"),
    encodeURI(value),
    hex(bytes),
    hex(bytes).toUpperCase(),
  ]);
  return [...forms].filter((f) => f.length >= MIN_SECRET_BYTES).sort((a, b) => b.length - a.length);
}

/**
 * Replaces the values of one run's secrets, in every form the module notes list, by their placeholders. Built once
 * per box, at its first scrub: the forms and words of every value, longest form first.
 */
export class Scrubber {
  readonly #forms: { form: string; placeholder: string }[];
  readonly #words: { word: Base64Word; placeholder: string }[];

  /** @param values the values by name */
  constructor(values: Iterable<[string, string]>) {
    const entries = [...values];
    this.#words = entries.flatMap(([name, value]) => base64WordsOf(value).map((word) => ({ word, placeholder: secretPlaceholder(name) })));
    const all: { form: string; placeholder: string }[] = [];
    for (const [name, value] of entries) for (const form of formsOf(value)) all.push({ form, placeholder: secretPlaceholder(name) });
    all.sort((a, b) => b.form.length - a.form.length);
    this.#forms = all;
  }

  /**
   * Replace every value by its placeholder: base64 words first, then the literal forms, longest first.
   * @param text a binary string (bytes, header values) or an ASCII text
   * @returns the text without any value (the same string when none was found)
   */
  scrub(text: string): string {
    let out = text;
    for (const { word, placeholder } of this.#words) out = replaceWords(out, word, placeholder);
    for (const { form, placeholder } of this.#forms) if (out.includes(form)) out = out.split(form).join(placeholder);
    return out;
  }
}
