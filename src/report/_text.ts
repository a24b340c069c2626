/**
 * Terminal text from untrusted strings: control characters (ESC, CR, …), C1 controls and bidirectional overrides
 * are shown as `\u{…}` escapes so a capsule cannot move the cursor, recolour the screen or reorder what is shown;
 * and the few ANSI colours `show` and `diff` use. Internal to `src/report/`.
 * @module
 */

// C0 (except newline when allowed), DEL, C1, and the bidi embedding / override / isolate controls.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Make an untrusted string safe to print on a terminal.
 * @param text the string
 * @param multiline keep newlines (else they are escaped too)
 * @returns the string with every control character escaped
 * @example safeText("a\u001b[2Jb") // "a\\u{1b}[2Jb"
 */
export function safeText(text: string, multiline = false): string {
  return text.replace(multiline ? UNSAFE : UNSAFE_LINE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** The colours in use. */
export type Colour = "red" | "green" | "yellow" | "blue" | "magenta" | "cyan" | "dim" | "bold";

const CODES: Record<Colour, [number, number]> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** A painter: colours text when enabled, returns it unchanged otherwise. */
export type Paint = (colour: Colour, text: string) => string;

/**
 * A painter.
 * @param enabled whether to emit ANSI colour codes
 * @returns the painter
 * @example painter(false)("red", "x") // "x"
 */
export function painter(enabled: boolean): Paint {
  return enabled ? (c, t) => `\u001b[${CODES[c][0]}m${t}\u001b[${CODES[c][1]}m` : (_c, t) => t;
}

/**
 * Colour of a status word.
 * @param status a status (completed, failed, identical, …)
 * @returns the colour
 * @example statusColour("failed") // "red"
 */
export function statusColour(status: string): Colour {
  const s = status.toLowerCase();
  if (s === "completed" || s === "identical" || s === "valid") return "green";
  if (s === "failed" || s === "aborted" || s === "differ" || s === "invalid") return "red";
  return "yellow";
}

/**
 * A 64-hex hash shortened for display (`d1deadba1d67…c601`); anything else escaped as it is.
 * @param hash the hash, or null
 * @returns the short form (— for null)
 * @example shortHash(null) // "—"
 */
export function shortHash(hash: string | null): string {
  if (hash === null) return "—";
  return /^[0-9a-f]{64}$/.test(hash) ? `${hash.slice(0, 12)}…${hash.slice(-4)}` : safeText(hash);
}

/**
 * Pad `text` to `width` columns (by UTF-16 length), always leaving at least one space after it.
 * @param text the cell
 * @param width the column width
 * @returns the padded cell
 * @example pad("ab", 4) // "ab  "
 */
export function pad(text: string, width: number): string {
  return text.length >= width ? `${text} ` : text + " ".repeat(width - text.length);
}
