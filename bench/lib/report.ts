/** One scenario's measured numbers (medians over the repetitions). */
export interface ScenarioResult {
  id: string;
  name: string;
  /** Which process answered: the service or a baseline. */
  server: string;
  kind: "service" | "baseline";
  /** The id of the row this one is compared with, if any. */
  baseline?: string | undefined;
  /** The offered rate of an open-loop run (req/s); absent for a closed loop. */
  rate?: number | undefined;
  rps: number;
  p50Us: number;
  p99Us: number;
  cpuUsPerReq: number;
  errors: number;
  /** Open loop: requests given up on unanswered. */
  unanswered?: number | undefined;
  requests: number;
  reps: number;
  /** Each repetition's figures, in the run's order (issue 49's targets hold in every one, not by the median). */
  perRep?: { rps: number; cpuUsPerReq: number; failed: number }[] | undefined;
  /** A row at the offered rate: the bare server's CPU per request measured next to it, each repetition. */
  adjacentB0oCpuUsPerReq?: number[] | undefined;
}

/** One target of the issue and whether this run met it. */
export interface TargetResult {
  name: string;
  rule: string;
  measured: string;
  /** measured ÷ threshold, oriented so that ≥ 1 means met. */
  score: number;
  met: boolean;
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "–";

/** The ratio column: this row's req/s over its baseline's. */
export function ratioOf(r: ScenarioResult, all: readonly ScenarioResult[]): number | undefined {
  const b = r.baseline && all.find((x) => x.id === r.baseline);
  return b ? r.rps / b.rps : undefined;
}

/** A Markdown table of the scenarios (printed, and pasted into the README). */
export function table(results: readonly ScenarioResult[]): string {
  const rows = [
    "| scenario | req/s | p50 ms | p99 ms | CPU µs/req | vs baseline |",
    "|---|--:|--:|--:|--:|---|",
    ...results.map((r) => {
      const ratio = ratioOf(r, results);
      const b = r.baseline ? results.find((x) => x.id === r.baseline) : undefined;
      const vs = ratio === undefined ? "" : `${fmt(ratio, 2)}× ${b?.id ?? ""}`;
      const errors = `${r.errors > 0 ? ` (${r.errors} errors)` : ""}${r.unanswered ? ` (${r.unanswered} unanswered)` : ""}`;
      return `| ${r.id} ${r.name}${errors} | ${fmt(r.rps)} | ${fmt(r.p50Us / 1000, 2)} | ${fmt(r.p99Us / 1000, 2)} | ${fmt(r.cpuUsPerReq)} | ${vs} |`;
    }),
  ];
  return rows.join("\n");
}

/** A Markdown table of the targets. */
export function targetTable(targets: readonly TargetResult[]): string {
  return [
    "| target | rule | measured | status |",
    "|---|---|---|---|",
    ...targets.map((t) => `| ${t.name} | ${t.rule} | ${t.measured} | ${t.met ? "met" : "**not met**"} |`),
  ].join("\n");
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An SVG chart: req/s of every scenario (log scale), then each target's score against its threshold. */
export function chart(results: readonly ScenarioResult[], targets: readonly TargetResult[], title: string): string {
  const W = 980;
  const left = 380;
  const barW = W - left - 90;
  const rowH = 20;
  const top = 50;
  const maxRps = Math.max(10, ...results.map((r) => r.rps));
  const logMin = 1; // 10 req/s
  const logMax = Math.ceil(Math.log10(maxRps));
  const x = (rps: number) => ((Math.log10(Math.max(rps, 10)) - logMin) / (logMax - logMin)) * barW;
  const parts: string[] = [];
  let y = top;
  parts.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`);
  parts.push(
    `<text x="${left}" y="${y - 8}" font-size="12" fill="#444">requests per second (log scale); grey = baseline</text>`,
  );
  for (let p = logMin; p <= logMax; p++) {
    const gx = left + x(10 ** p);
    parts.push(`<line x1="${gx}" y1="${y}" x2="${gx}" y2="${y + results.length * rowH}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${gx}" y="${y + results.length * rowH + 14}" font-size="10" text-anchor="middle" fill="#666">${fmt(10 ** p)}</text>`,
    );
  }
  for (const r of results) {
    const w = Math.max(1, x(r.rps));
    const colour = r.kind === "baseline" ? "#9e9e9e" : r.errors > 0 ? "#c62828" : "#1565c0";
    parts.push(
      `<text x="${left - 8}" y="${y + 14}" font-size="12" text-anchor="end">${esc(`${r.id} ${r.name}`)}</text>`,
    );
    parts.push(`<rect x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${colour}"/>`);
    parts.push(`<text x="${left + w + 5}" y="${y + 14}" font-size="11" fill="#333">${fmt(r.rps)}</text>`);
    y += rowH;
  }
  y += 45;
  parts.push(
    `<text x="${left}" y="${y - 8}" font-size="12" fill="#444">targets: measured ÷ threshold (the line is the threshold; right of it = met)</text>`,
  );
  const maxScore = Math.max(2, ...targets.map((t) => (Number.isFinite(t.score) ? t.score : 0)));
  const sx = (s: number) => (Math.min(s, maxScore) / maxScore) * barW;
  const lineX = left + sx(1);
  for (const t of targets) {
    const w = Math.max(1, sx(Number.isFinite(t.score) ? t.score : 0));
    parts.push(`<text x="${left - 8}" y="${y + 14}" font-size="12" text-anchor="end">${esc(t.name)}</text>`);
    parts.push(
      `<rect x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${t.met ? "#2e7d32" : "#c62828"}"/>`,
    );
    parts.push(`<text x="${left + w + 5}" y="${y + 14}" font-size="11" fill="#333">${esc(t.measured)}</text>`);
    y += rowH;
  }
  parts.push(
    `<line x1="${lineX}" y1="${y - targets.length * rowH}" x2="${lineX}" y2="${y}" stroke="#000" stroke-dasharray="4 3"/>`,
  );
  const H = y + 20;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif">
<rect width="${W}" height="${H}" fill="#fff"/>
${parts.join("\n")}
</svg>
`;
}
