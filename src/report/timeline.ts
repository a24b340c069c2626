/**
 * The run's timeline (inline SVG): one row per step on the run's virtual time axis (the events' timestamps), with a
 * tick per host call inside the step's bar, and each row linking to the step's details.
 * @module
 */
import { esc } from "./_html.ts";
import { msText } from "./_json.ts";
import type { StepView } from "./model.ts";

const WIDTH = 960;
const LABEL_W = 150;
const RIGHT_W = 150;
const ROW_H = 24;
const TOP = 22;
/** Host-call ticks drawn per step at most (the rest are counted in the bar's title). */
const MAX_TICKS = 200;

/**
 * Render the timeline of a run's steps.
 * @param steps the steps in run order
 * @param anchor the element id of a step's details (`#…` target)
 * @returns an `<svg>` element, or a note when the run has no step
 * @example renderTimeline(view.steps, (s) => `step-${s.position + 1}`)
 */
export function renderTimeline(steps: readonly StepView[], anchor: (s: StepView) => string): string {
  if (steps.length === 0) return `<p class="note">No step ran.</p>`;
  const times = steps.flatMap((s) => [Date.parse(s.startedAt), Date.parse(s.endedAt ?? s.startedAt)]).filter(Number.isFinite);
  const t0 = times.length === 0 ? 0 : Math.min(...times);
  const span = Math.max(1, (times.length === 0 ? 0 : Math.max(...times)) - t0);
  const barW = WIDTH - LABEL_W - RIGHT_W;
  const x = (iso: string): number => {
    const t = Date.parse(iso);
    return LABEL_W + (Number.isFinite(t) ? ((t - t0) / span) * barW : 0);
  };
  const height = TOP + steps.length * ROW_H + 6;
  const rows = steps.map((s, i) => {
    const y = TOP + i * ROW_H;
    const x1 = x(s.startedAt);
    const w = Math.max(4, x(s.endedAt ?? s.startedAt) - x1);
    const ticks = s.tape.slice(0, MAX_TICKS).map((r, k, all) => {
      const tx = x1 + ((k + 1) / (all.length + 1)) * w;
      return `<line class="tick" x1="${tx.toFixed(1)}" y1="${y + 4}" x2="${tx.toFixed(1)}" y2="${y + ROW_H - 8}"><title>${esc(`host call ${r.seq}: ${r.op}${r.error === undefined ? "" : ` → ${r.error.code}`}`)}</title></line>`;
    });
    const dur = `${s.virtualMs === null ? "—" : msText(s.virtualMs)} virtual${s.realMs === null ? "" : ` · ${msText(s.realMs)} real`}`;
    const label = s.stepId.length > 20 ? `${s.stepId.slice(0, 19)}…` : s.stepId;
    return `<a class="tl-row" href="#${esc(anchor(s))}"><text class="tl-label" x="4" y="${y + 12}">${esc(label)}</text>` +
      `<rect class="bar ${s.status}" x="${x1.toFixed(1)}" y="${y + 2}" width="${w.toFixed(1)}" height="${ROW_H - 8}" rx="3"><title>${esc(`${s.stepId} (${s.tool ?? s.type}): ${s.status}, ${dur}, ${s.tape.length} host calls`)}</title></rect>` +
      `${ticks.join("")}<text class="tl-dur" x="${WIDTH - RIGHT_W + 8}" y="${y + 12}">${esc(dur)}</text></a>`;
  });
  const axis = `<text class="tl-axis" x="${LABEL_W}" y="12">0 ms</text><text class="tl-axis end" x="${LABEL_W + barW}" y="12">${esc(msText(span))} (virtual)</text>`;
  return `<svg id="timeline-svg" class="timeline" role="img" aria-label="timeline" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg">${axis}${rows.join("")}</svg>`;
}
