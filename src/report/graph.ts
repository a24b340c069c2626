/**
 * The plan as a graph (inline SVG): one node per plan step, an arrow from each `depends_on` step to the step that
 * waits for it. Steps are placed in columns by the length of their longest dependency chain (a layered layout),
 * in plan order within a column. Unknown dependencies are left out, and a dependency cycle (a plan the gate
 * refuses, but a capsule may hold anything) cannot loop: layers are computed with at most one pass per step.
 * @module
 */
import { esc } from "./_html.ts";

/** One node of the graph. */
export type GraphNode = { id: string; label: string; sub: string; status: string; dependsOn: readonly string[]; href: string | null };

/** Layout constants (SVG user units). */
const NODE_W = 168;
const NODE_H = 46;
const GAP_X = 56;
const GAP_Y = 18;
const PAD = 12;

/**
 * The column of each node: 0 for steps without (known) dependencies, else 1 + the deepest dependency's column.
 * @param nodes the nodes
 * @returns node id → column
 * @example layers([{ id: "a", dependsOn: [] }, { id: "b", dependsOn: ["a"] }]) // Map { a → 0, b → 1 }
 */
export function layers(nodes: readonly Pick<GraphNode, "id" | "dependsOn">[]): Map<string, number> {
  const known = new Set(nodes.map((n) => n.id));
  const layer = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  for (let pass = 0; pass < nodes.length; pass++) {
    let changed = false;
    for (const n of nodes) {
      const deps = n.dependsOn.filter((d) => known.has(d) && d !== n.id);
      const want = deps.length === 0 ? 0 : Math.max(...deps.map((d) => layer.get(d)!)) + 1;
      if (want > layer.get(n.id)! && want < nodes.length) {
        layer.set(n.id, want);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return layer;
}

function clipLabel(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Render the plan graph as inline SVG.
 * @param nodes the plan's steps, in plan order (ids unique; later duplicates are dropped)
 * @returns an `<svg>` element (empty graph: a short note)
 * @example renderPlanGraph([{ id: "a", label: "a", sub: "tool", status: "completed", dependsOn: [], href: "#step-1" }])
 */
export function renderPlanGraph(nodes: readonly GraphNode[]): string {
  const seen = new Set<string>();
  const list = nodes.filter((n) => !seen.has(n.id) && seen.add(n.id));
  if (list.length === 0) return `<p class="note">The run has no plan.</p>`;
  const layer = layers(list);
  const columns = new Map<number, GraphNode[]>();
  for (const n of list) columns.set(layer.get(n.id)!, [...(columns.get(layer.get(n.id)!) ?? []), n]);
  const pos = new Map<string, { x: number; y: number }>();
  for (const [col, members] of columns) members.forEach((n, row) => pos.set(n.id, { x: PAD + col * (NODE_W + GAP_X), y: PAD + row * (NODE_H + GAP_Y) }));
  const width = PAD * 2 + (Math.max(...columns.keys()) + 1) * (NODE_W + GAP_X) - GAP_X;
  const height = PAD * 2 + Math.max(...[...columns.values()].map((m) => m.length)) * (NODE_H + GAP_Y) - GAP_Y;
  const edges: string[] = [];
  for (const n of list) {
    const to = pos.get(n.id)!;
    for (const d of n.dependsOn) {
      const from = pos.get(d);
      if (from === undefined || d === n.id) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x - 4;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      edges.push(`<path class="edge" d="M${x1} ${y1} C${mid} ${y1} ${mid} ${y2} ${x2} ${y2}" marker-end="url(#arrow)"/>`);
    }
  }
  const boxes = list.map((n) => {
    const p = pos.get(n.id)!;
    const body = `<rect class="node ${esc(n.status)}" x="${p.x}" y="${p.y}" width="${NODE_W}" height="${NODE_H}" rx="6"/>` +
      `<text class="node-label" x="${p.x + 10}" y="${p.y + 19}">${esc(clipLabel(n.label, 22))}</text>` +
      `<text class="node-sub" x="${p.x + 10}" y="${p.y + 36}">${esc(clipLabel(n.sub, 26))}</text><title>${esc(`${n.label} (${n.sub}): ${n.status}`)}</title>`;
    return n.href === null ? `<g class="graph-node">${body}</g>` : `<a class="graph-node" href="${esc(n.href)}">${body}</a>`;
  });
  return `<svg id="plan-graph" class="graph" role="img" aria-label="plan graph" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">` +
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" class="arrowhead"/></marker></defs>` +
    `${edges.join("")}${boxes.join("")}</svg>`;
}
