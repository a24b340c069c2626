/**
 * A line diff (Myers' O(ND) algorithm, "An O(ND) Difference Algorithm and Its Variations", 1986) with bounded
 * work: inputs past {@link MAX_DIFF_LINES} lines or more than {@link MAX_DIFF_EDITS} edits apart are reported as
 * too large rather than diffed, so a hostile capsule cannot make the report quadratic.
 * @module
 */

/** One line of a diff: kept (` `), removed (`-`) or added (`+`). */
export type DiffLine = { op: " " | "-" | "+"; text: string };

/** Lines per side beyond which no line diff is attempted. */
export const MAX_DIFF_LINES = 20_000;
/** Edits beyond which the diff gives up. */
export const MAX_DIFF_EDITS = 1_000;

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Diff two texts line by line.
 * @param a the old text
 * @param b the new text
 * @returns the diff lines in order, or null when the texts are too large or too different to diff within the bounds
 * @example diffLines("a\nb\n", "a\nc\n") // [{op:" ",text:"a"},{op:"-",text:"b"},{op:"+",text:"c"}]
 */
export function diffLines(a: string, b: string): DiffLine[] | null {
  const x = splitLines(a);
  const y = splitLines(b);
  if (x.length > MAX_DIFF_LINES || y.length > MAX_DIFF_LINES) return null;
  const trace = forward(x, y);
  return trace === null ? null : backtrack(x, y, trace);
}

/** Myers' forward pass; returns the V arrays of each D (for backtracking), or null past the edit bound. */
function forward(x: readonly string[], y: readonly string[]): Int32Array[] | null {
  const n = x.length;
  const m = y.length;
  const max = Math.min(n + m, MAX_DIFF_EDITS);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let i = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let j = i - k;
      while (i < n && j < m && x[i] === y[j]) {
        i++;
        j++;
      }
      v[offset + k] = i;
      if (i >= n && j >= m) return trace;
    }
  }
  return null;
}

function backtrack(x: readonly string[], y: readonly string[], trace: Int32Array[]): DiffLine[] {
  const out: DiffLine[] = [];
  const offset = (trace[0]!.length - 3) / 2 + 1;
  let i = x.length;
  let j = y.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = i - j;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevI = d === 0 ? 0 : v[offset + prevK]!;
    const prevJ = d === 0 ? 0 : prevI - prevK;
    while (i > prevI && j > prevJ) {
      out.push({ op: " ", text: x[--i]! });
      j--;
    }
    if (d > 0) {
      if (i === prevI) out.push({ op: "+", text: y[--j]! });
      else out.push({ op: "-", text: x[--i]! });
    }
  }
  return out.reverse();
}
