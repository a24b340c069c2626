/**
 * HTML building blocks for the report: escaping (every string from a capsule goes through {@link esc}), clipped
 * `<pre>` blocks, data: URLs, and the bounds that keep a hostile capsule from making the report unbounded.
 * Internal to `src/report/`.
 * @module
 */
import { bytesToBase64 } from "../canonical/mod.ts";
import { bytesText, clip, pretty } from "./_json.ts";

/** Bounds of what the report embeds. */
export const HTML_LIMITS = {
  /** Characters of one input, output, request or response shown. */
  valueChars: 100_000,
  /** Host calls listed per step. */
  tapeRowsPerStep: 500,
  /** Characters of a request or response in a host call row. */
  tapeValueChars: 4_000,
  /** Bytes of one artifact embedded (image or download). */
  artifactBytes: 8 * 1024 * 1024,
  /** Bytes of all embedded artifacts together. */
  totalArtifactBytes: 32 * 1024 * 1024,
  /** Bytes of a workspace file diffed or shown. */
  diffFileBytes: 256 * 1024,
  /** Workspace paths listed. */
  workspacePaths: 2_000,
} as const;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Escape text for HTML content and double- or single-quoted attribute values. Control characters other than tab,
 * newline and carriage return, and the bidirectional controls that would reorder what is shown, become visible `\u{…}` escapes.
 * @param text untrusted text
 * @returns the escaped text
 * @example esc("</script>") // "&lt;/script&gt;"
 */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * A `<pre>` of a JSON value or text, clipped to `max` characters with a note saying how much was left out.
 * @param value the value (strings are shown as they are when `raw`)
 * @param options `raw`: show a string as text, not as JSON; `max`: the clip length; `cls`: extra class
 * @returns HTML
 * @example preBlock({ a: 1 }) // "<pre class=\"value\">{\n  \"a\": 1\n}</pre>"
 */
export function preBlock(value: unknown, options: { raw?: boolean; max?: number; cls?: string } = {}): string {
  const text = options.raw === true && typeof value === "string" ? value : pretty(value);
  const c = clip(text, options.max ?? HTML_LIMITS.valueChars);
  const more = c.omitted === 0 ? "" : `<p class="note">… ${c.omitted} more characters are not shown (see the capsule)</p>`;
  return `<pre class="value${options.cls === undefined ? "" : ` ${options.cls}`}">${esc(c.text)}</pre>${more}`;
}

/**
 * A data: URL.
 * @param mime the MIME type (only a fixed, known one: never one from the capsule)
 * @param bytes the content
 * @returns `data:<mime>;base64,<…>`
 * @example dataUrl("image/png", bytes) // "data:image/png;base64,…"
 */
export function dataUrl(mime: string, bytes: Uint8Array): string {
  return `data:${mime};base64,${bytesToBase64(bytes)}`;
}

/**
 * The image type of bytes by their signature (PNG, JPEG, GIF, WebP), never by a declared MIME type.
 * @param bytes the content
 * @returns the MIME type, or null when the bytes are not one of these images
 * @example sniffImage(new TextEncoder().encode("<svg/>")) // null
 */
export function sniffImage(bytes: Uint8Array): string | null {
  const b = bytes;
  if (b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a) return "image/png";
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length > 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) return "image/gif";
  if (b.length > 12 && b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) return "image/webp";
  return null;
}

/**
 * A file name safe for a `download` attribute (no path separators or control characters).
 * @param name the untrusted name
 * @returns a plain file name
 * @example downloadName("../x.html") // "__x.html"
 */
export function downloadName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, "_").replace(/^\.+/, "_").slice(0, 120);
  return cleaned === "" ? "download" : cleaned;
}

/**
 * A `<tr>` of cells (already HTML).
 * @param cells the cells' HTML
 * @param cls a class for the row
 * @returns the row's HTML
 * @example row(["a", "b"]) // "<tr><td>a</td><td>b</td></tr>"
 */
export function row(cells: readonly string[], cls?: string): string {
  return `<tr${cls === undefined ? "" : ` class="${cls}"`}>${cells.map((c) => `<td>${c}</td>`).join("")}</tr>`;
}

/**
 * A size for a table cell, or `?`.
 * @param n bytes, or null
 * @returns escaped text
 * @example sizeCell(null) // "?"
 */
export function sizeCell(n: number | null): string {
  return n === null ? "?" : esc(bytesText(n));
}
