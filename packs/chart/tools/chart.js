// chart — a generator tool (kind "js", generates image/svg+xml) of the chart pack.
// Input:  { "title": string, "series": [{ "label": string, "value": number }] }
// Output: { "artifact": path, "bars": integer, "width", "height", "sha256" }
// Draws a bar chart of the series as SVG and emits it as the run's artifact chart.svg.
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

export default function chart(input, reach) {
  const series = input.series;
  if (series.length === 0) throw new Error("the series is empty: nothing to draw");
  const bar = 60;
  const gap = 20;
  const height = 240;
  const top = 40;
  const width = gap + series.length * (bar + gap);
  const max = Math.max(...series.map((s) => s.value), 1);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + top + 30}" viewBox="0 0 ${width} ${height + top + 30}">`,
    `<title>${esc(input.title)}</title>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-family="sans-serif" font-size="16">${esc(input.title)}</text>`,
  ];
  series.forEach((s, i) => {
    const h = Math.round((s.value / max) * height);
    const x = gap + i * (bar + gap);
    parts.push(`<rect x="${x}" y="${top + height - h}" width="${bar}" height="${h}" fill="#3b6ea5"><title>${esc(s.label)}: ${s.value}</title></rect>`);
    parts.push(`<text x="${x + bar / 2}" y="${top + height + 18}" text-anchor="middle" font-family="sans-serif" font-size="12">${esc(s.label)}</text>`);
    parts.push(`<text x="${x + bar / 2}" y="${top + height - h - 4}" text-anchor="middle" font-family="sans-serif" font-size="11">${s.value}</text>`);
  });
  parts.push("</svg>\n");
  const info = reach.artifact.emit("chart.svg", "image/svg+xml", parts.join("\n"));
  return { artifact: info.path, bars: series.length, width, height: height + top + 30, sha256: info.sha256 };
}
