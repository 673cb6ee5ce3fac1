import { useState } from "preact/hooks";
import type {
  OperatorReport as OperatorReportMessage,
  Report as ReportMessage,
} from "../../../../gen/aiagent/v1/account_service_pb.js";
import { type Report, reportCsv } from "../../../domain/report/csv.js";
import { type HeldFigures, type OperatorReport, operatorReportCsv } from "../../../domain/report/operators-csv.js";
import { accounts } from "../api.js";
import { ChatbotOptions, Empty, ErrorNote, Field, Loading, PageTitle, useLoad } from "../ui.js";

const DAY = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);
const zero = { count: 0, medianSeconds: 0, p90Seconds: 0 };

/** The answer as the domain's plain report (the CSV is built here from it: the contract answers JSON only). */
function plain(m: ReportMessage): Report {
  return {
    chatbotId: m.chatbotId,
    from: m.from,
    to: m.to,
    timeZone: m.timeZone,
    conversations: m.conversations,
    handedOver: m.handedOver,
    handedOverShare: m.handedOverShare,
    days: m.days.map((d) => ({ date: d.date, conversations: d.conversations, handedOver: d.handedOver })),
    firstResponse: m.firstResponse ? { ...zero, ...m.firstResponse } : zero,
    timeToClose: m.timeToClose ? { ...zero, ...m.timeToClose } : zero,
    ratings: {
      count: m.ratings?.count ?? 0,
      average: m.ratings?.average ?? 0,
      distribution: m.ratings?.distribution ?? [0, 0, 0, 0, 0],
    },
    hours: m.hours.map((h) => ({ hour: h.hour, messages: h.messages })),
    sla: { hits: m.slaHits, breaches: m.slaBreaches },
  };
}

type Held = { conversations: number; firstResponse?: typeof zero; resolution?: typeof zero; csat: number } & {
  ratings?: { count: number; average: number; distribution: number[] };
  sla?: { hits: number; breaches: number };
};

/** One person's or team's figures as plain values (absent messages are figures measured on nothing). */
function held(m: Held): HeldFigures {
  return {
    conversations: m.conversations,
    firstResponse: m.firstResponse ? { ...zero, ...m.firstResponse } : zero,
    resolution: m.resolution ? { ...zero, ...m.resolution } : zero,
    ratings: {
      count: m.ratings?.count ?? 0,
      average: m.ratings?.average ?? 0,
      distribution: m.ratings?.distribution ?? [0, 0, 0, 0, 0],
    },
    csat: m.csat,
    sla: { hits: m.sla?.hits ?? 0, breaches: m.sla?.breaches ?? 0 },
  };
}

/** The operator report's answer as the domain's plain report. */
function plainPeople(m: OperatorReportMessage): OperatorReport {
  return {
    from: m.from,
    to: m.to,
    timeZone: m.timeZone,
    operators: m.operators.map((o) => ({ email: o.email, name: o.name, ...held(o) })),
    teams: m.teams.map((t) => ({ teamId: t.teamId, name: t.name, members: [...t.members], ...held(t) })),
  };
}

/** No data is not zero: a figure with nothing to measure says so ("—"). */
const NONE = "—";

/** A median and p90, or "—" when nothing was measured. */
function durations(d: { count: number; medianSeconds: number; p90Seconds: number }): string {
  return d.count === 0 ? NONE : `${duration(d.medianSeconds)} / ${duration(d.p90Seconds)}`;
}

function duration(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * Bars as plain CSS widths, hidden from assistive technology: the table beside them holds the same numbers, and
 * is what a screen reader reads.
 */
function Bars(props: { caption: string; label: string; rows: { key: string; value: number; extra?: number }[] }) {
  const max = Math.max(1, ...props.rows.map((r) => r.value));
  return (
    <figure class="report-chart">
      <div class="report-bars" aria-hidden="true">
        {props.rows.map((r) => (
          <div class="report-bar-row" key={r.key}>
            <span class="report-bar-key">{r.key}</span>
            <span class="report-bar" style={{ width: `${(r.value / max) * 100}%` }} />
            <span class="report-bar-value">{r.value}</span>
          </div>
        ))}
      </div>
      <details>
        <summary>{props.caption}: the numbers</summary>
        <div class="table-wrap">
          <table>
            <caption class="sr-only">{props.caption}</caption>
            <thead>
              <tr>
                <th scope="col">{props.label}</th>
                <th scope="col">Count</th>
                {props.rows.some((r) => r.extra !== undefined) && <th scope="col">Handed over</th>}
              </tr>
            </thead>
            <tbody>
              {props.rows.map((r) => (
                <tr key={r.key}>
                  <th scope="row">{r.key}</th>
                  <td>{r.value}</td>
                  {r.extra !== undefined && <td>{r.extra}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

type View = "chatbot" | "operator" | "team";
const VIEWS: { view: View; label: string }[] = [
  { view: "chatbot", label: "Overview" },
  { view: "operator", label: "By operator" },
  { view: "team", label: "By team" },
];

/** Starts a download of a CSV text under a file name. */
function saveCsv(text: string, name: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}

/**
 * The reports: a chatbot's figures over a period (conversations per day, handed over, response times, ratings,
 * busy hours), or each operator's or team's (first response, resolution, conversations, ratings).
 */
export function ReportsPage() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const [view, setView] = useState<View>("chatbot");
  const [chatbots] = useLoad(async () => (await accounts.listChatbots({})).data?.chatbots ?? []);
  const [chatbotId, setChatbotId] = useState("");
  const [from, setFrom] = useState(isoDay(Date.now() - 29 * DAY));
  const [to, setTo] = useState(isoDay(Date.now()));
  const bot = chatbotId || (chatbots.state === "ok" ? (chatbots.data[0]?.chatbotId ?? "") : "");
  const [report, reload] = useLoad(async () => {
    if (view !== "chatbot" || !bot) return undefined;
    const r = await accounts.getReport({ chatbotId: bot, from, to, timeZone: zone });
    return r.data ? plain(r.data) : undefined;
  }, [bot, from, to, zone, view]);
  const [people, reloadPeople] = useLoad(async () => {
    if (view === "chatbot") return undefined;
    const r = await accounts.getOperatorReport({ from, to, timeZone: zone });
    return r.data ? plainPeople(r.data) : undefined;
  }, [from, to, zone, view]);
  const download = (r: Report) => saveCsv(reportCsv(r), `report-${r.from}-${r.to}.csv`);
  const downloadPeople = (r: OperatorReport) => saveCsv(operatorReportCsv(r), `report-operators-${r.from}-${r.to}.csv`);
  return (
    <section>
      <PageTitle>Reports</PageTitle>
      <div class="card">
        <fieldset class="report-views">
          <legend>Report</legend>
          {VIEWS.map((v) => (
            <label key={v.view}>
              <input
                type="radio"
                name="report-view"
                value={v.view}
                checked={view === v.view}
                onChange={() => setView(v.view)}
              />{" "}
              {v.label}
            </label>
          ))}
        </fieldset>
        <form class="inline-form" onSubmit={(e) => e.preventDefault()}>
          {view === "chatbot" && (
            <Field label="Chatbot" id="report-chatbot">
              <select id="report-chatbot" value={bot} onChange={(e) => setChatbotId(e.currentTarget.value)}>
                <ChatbotOptions chatbots={chatbots} />
              </select>
            </Field>
          )}
          <Field label="From" id="report-from">
            <input id="report-from" type="date" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
          </Field>
          <Field label="To" id="report-to" hint={`Days and hours in ${zone}; at most 366 days.`}>
            <input id="report-to" type="date" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
          </Field>
        </form>
        {report.state === "loading" && <Loading what="the report" />}
        {report.state === "error" && <ErrorNote error={report.error} onRetry={reload} />}
        {view === "chatbot" && report.state === "ok" && !report.data && <Empty>No chatbot yet.</Empty>}
        {view !== "chatbot" && people.state === "loading" && <Loading what="the report" />}
        {view !== "chatbot" && people.state === "error" && <ErrorNote error={people.error} onRetry={reloadPeople} />}
      </div>
      {view === "chatbot" && report.state === "ok" && report.data && <Figures r={report.data} onDownload={download} />}
      {view !== "chatbot" && people.state === "ok" && people.data && (
        <PeopleFigures r={people.data} teams={view === "team"} onDownload={downloadPeople} />
      )}
    </section>
  );
}

function Figures({ r, onDownload }: { r: Report; onDownload: (r: Report) => void }) {
  const share = Math.round(r.handedOverShare * 100);
  return (
    <div data-testid="report">
      <div class="card">
        <h2>Summary</h2>
        <dl class="report-summary">
          <dt>Conversations</dt>
          <dd>{r.conversations}</dd>
          <dt>Answered by the agent alone</dt>
          <dd>
            {r.conversations - r.handedOver} ({r.conversations ? `${100 - share}%` : NONE})
          </dd>
          <dt>Handed over to the team</dt>
          <dd>
            {r.handedOver} ({r.conversations ? `${share}%` : NONE})
          </dd>
          <dt>First response (median / p90)</dt>
          <dd data-testid="first-response">{durations(r.firstResponse)}</dd>
          <dt>Time to close (median / p90)</dt>
          <dd data-testid="time-to-close">{durations(r.timeToClose)}</dd>
          <dt>First-response SLA (met / breached)</dt>
          <dd data-testid="sla-figures">
            {r.sla.hits + r.sla.breaches === 0 ? NONE : `${r.sla.hits} / ${r.sla.breaches}`}
          </dd>
          <dt>Ratings</dt>
          <dd>{r.ratings.count ? `${r.ratings.count}, average ${r.ratings.average.toFixed(2)} of 5` : NONE}</dd>
        </dl>
        <button type="button" class="button" onClick={() => onDownload(r)}>
          Download CSV
        </button>
      </div>
      <div class="card">
        <h2>Conversations per day</h2>
        <Bars
          caption="Conversations per day"
          label="Day"
          rows={r.days.map((d) => ({ key: d.date, value: d.conversations, extra: d.handedOver }))}
        />
      </div>
      <div class="card">
        <h2>Ratings</h2>
        <Bars
          caption="Ratings by score"
          label="Score"
          rows={r.ratings.distribution.map((n, i) => ({ key: `${i + 1} of 5`, value: n }))}
        />
      </div>
      <div class="card">
        <h2>Busiest hours</h2>
        <Bars
          caption="Messages per hour of the day"
          label="Hour"
          rows={r.hours.map((h) => ({ key: `${String(h.hour).padStart(2, "0")}:00`, value: h.messages }))}
        />
      </div>
    </div>
  );
}

/** Each operator's (or team's) figures as a table; a figure measured on nothing is "—". */
function PeopleFigures(props: { r: OperatorReport; teams: boolean; onDownload: (r: OperatorReport) => void }) {
  const { r } = props;
  const rows: (HeldFigures & { key: string; who: string; detail: string })[] = props.teams
    ? r.teams.map((t) => ({ ...t, key: t.teamId, who: t.name, detail: t.members.join(", ") }))
    : r.operators.map((o) => ({ ...o, key: o.email, who: o.name, detail: o.email }));
  const caption = props.teams ? "Figures by team" : "Figures by operator";
  return (
    <div data-testid="people-report" class="card">
      <h2>{props.teams ? "By team" : "By operator"}</h2>
      {rows.length === 0 ? (
        <Empty>{props.teams ? "No team yet." : "No conversation came to anyone in this period."}</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">{caption}</caption>
            <thead>
              <tr>
                <th scope="col">{props.teams ? "Team" : "Operator"}</th>
                <th scope="col">Conversations</th>
                <th scope="col">First response (median / p90)</th>
                <th scope="col">Resolution (median / p90)</th>
                <th scope="col">Ratings</th>
                <th scope="col">CSAT (4–5 of 5)</th>
                <th scope="col">SLA (met / breached)</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((x) => (
                <tr key={x.key}>
                  <th scope="row">
                    {x.who}
                    {x.detail && <div class="muted report-who">{x.detail}</div>}
                  </th>
                  <td>{x.conversations}</td>
                  <td data-testid="first-response">{durations(x.firstResponse)}</td>
                  <td data-testid="resolution">{durations(x.resolution)}</td>
                  <td data-testid="ratings">
                    {x.ratings.count ? `${x.ratings.count}, average ${x.ratings.average.toFixed(2)}` : NONE}
                  </td>
                  <td data-testid="csat">{x.ratings.count ? `${Math.round(x.csat * 100)}%` : NONE}</td>
                  <td data-testid="sla">
                    {x.sla.hits + x.sla.breaches === 0 ? NONE : `${x.sla.hits} / ${x.sla.breaches}`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <button type="button" class="button" onClick={() => props.onDownload(r)}>
        Download CSV
      </button>
    </div>
  );
}
