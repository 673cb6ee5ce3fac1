import { INBOX_CSS } from "./inbox-styles.js";

/** The console's stylesheet, served as /console/assets/console.css (a file, so the CSP needs no inline styles). */
export const CONSOLE_CSS = `
:root {
  color-scheme: light;
  --bg: #f6f7f9; --panel: #ffffff; --fg: #17212b; --muted: #4f5b69; --line: #d9dee5;
  --accent: #1f4fc4; --accent-fg: #ffffff; --danger: #a4161a; --ok: #1b6b36;
  --error-bg: #fdecec; --error-fg: #8a1c1c; --ok-bg: #e6f4ea; --focus: #f5a623;
  --radius: 10px; --font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; min-height: 100%; }
body { background: var(--bg); color: var(--fg); font: 15px/1.5 var(--font); }
a { color: var(--accent); }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
h1:focus { outline: none; }
h2 { font-size: 1.1rem; margin: 0 0 .75rem; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: #0f1720; color: #e7ebf0; padding: .75rem; border-radius: 8px; overflow: auto; max-height: 24rem; white-space: pre; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.skip { position: absolute; left: -999px; top: 0; background: var(--panel); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
.boot, .center { display: grid; place-items: center; min-height: 100vh; padding: 1rem; margin: 0; }
.muted { color: var(--muted); }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem 1.25rem; margin: 0 0 1rem; }
.card--narrow { width: 100%; max-width: 24rem; }
.cards { list-style: none; padding: 0; margin: 0; display: grid; gap: 1rem; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr)); }
.cards .card { margin: 0; }
.page-head { display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap; margin-bottom: .5rem; }
.page-head h1, .page-head h2 { margin: 0; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.field { display: flex; flex-direction: column; gap: .25rem; margin: 0 0 .75rem; }
.field label { font-weight: 600; }
.field__hint { margin: 0; color: var(--muted); font-size: .875rem; }
input, select, textarea { font: inherit; color: inherit; background: var(--panel); border: 1px solid #8a94a3; border-radius: 6px; padding: .45rem .6rem; width: 100%; }
textarea { resize: vertical; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 1rem; padding: .75rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.inline-form { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; margin-bottom: .75rem; }
.inline-form .field { margin: 0; flex: 1 1 12rem; }
.button { display: inline-flex; align-items: center; gap: .35rem; font: inherit; font-weight: 600; padding: .45rem .9rem; border-radius: 6px; border: 1px solid #8a94a3; background: var(--panel); color: var(--fg); cursor: pointer; text-decoration: none; min-height: 2.25rem; }
.button:hover { background: #eef1f5; }
.button:disabled { opacity: .6; cursor: not-allowed; }
.button--primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.button--primary:hover { background: #173d99; }
.button--danger { color: var(--danger); border-color: var(--danger); }
.button--quiet { border-color: transparent; background: transparent; }
.badge { display: inline-block; font-size: .75rem; font-weight: 600; padding: .05rem .5rem; border-radius: 999px; background: #e8ebf0; color: #2b3642; }
.badge--live, .badge--active { background: #dff3e6; color: #145a2c; }
.badge--closed, .badge--revoked, .badge--expired { background: #ececec; color: #3d3d3d; }
.badge--invited { background: #fff1c7; color: #5c4300; }
.badge--role { background: #e3ebff; color: #1b3f98; }
.state { padding: 1rem; border-radius: 8px; margin: 0 0 1rem; }
.state p { margin: 0 0 .5rem; }
.state--error { background: var(--error-bg); color: var(--error-fg); }
.state--ok { background: var(--ok-bg); color: var(--ok); }
.state--empty { border: 1px dashed var(--line); color: var(--muted); text-align: center; background: var(--panel); }
.state--loading { color: var(--muted); display: flex; align-items: center; gap: .5rem; }
.spinner { width: 1rem; height: 1rem; border: 2px solid var(--line); border-top-color: var(--accent); border-radius: 50%; animation: spin .8s linear infinite; }
@keyframes spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .spinner { animation: none; } }
.secret { background: #fff8e1; border: 1px solid #e9c46a; border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; }
.secret p { margin: 0 0 .5rem; }
.secret__row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .5rem; }
.secret__value { word-break: break-all; background: var(--panel); padding: .35rem .5rem; border-radius: 6px; border: 1px solid var(--line); flex: 1 1 16rem; }
.copy { display: inline-flex; align-items: center; gap: .5rem; }
.copy__status { color: var(--ok); font-size: .875rem; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; word-break: break-all; }
.table-wrap { overflow-x: auto; position: relative; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
td select { width: auto; }
.snippet { border-bottom: 1px solid var(--line); padding-bottom: .75rem; margin-bottom: .75rem; }
.preview { width: 100%; max-width: 380px; height: 560px; border: 1px solid var(--line); border-radius: 12px; }
.topbar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .5rem 1rem; background: var(--panel); border-bottom: 1px solid var(--line); }
.brand { font-weight: 800; }
.topbar nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: 0; }
.topbar nav a { display: block; padding: .4rem .7rem; border-radius: 6px; text-decoration: none; color: var(--fg); font-weight: 600; }
.topbar nav a[aria-current=page] { background: #e3ebff; color: #1b3f98; }
.who { margin-left: auto; color: var(--muted); font-size: .875rem; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.topbar__menu { display: flex; align-items: center; gap: .5rem 1rem; flex: 1; min-width: 0; }
.topbar nav { flex: none; }
.topbar__menu > .button { flex: none; white-space: nowrap; }
.who { flex: 1 1 0; text-align: right; }
.menu-toggle { display: none; margin-left: auto; }
/* One row down to 1100 px; narrower, the pages fold behind Menu (nothing wraps into a second row of the bar). */
@media (min-width: 1101px) { .topbar { flex-wrap: nowrap; } .topbar nav ul { flex-wrap: nowrap; } .topbar nav ul { gap: .1rem; } .topbar nav a { padding: .4rem .5rem; white-space: nowrap; } }
@media (max-width: 1100px) {
  .menu-toggle { display: inline-flex; }
  .topbar__menu { display: none; flex-basis: 100%; flex-direction: column; align-items: stretch; }
  .topbar--open .topbar__menu { display: flex; }
  .topbar nav ul { flex-direction: column; }
  .who { margin-left: 0; white-space: normal; overflow-wrap: anywhere; text-align: left; flex: none; }
  .topbar__menu > .button { align-self: flex-start; }
}
.main { padding: 1rem; max-width: 80rem; margin: 0 auto; }
.inbox { display: grid; grid-template-columns: minmax(18rem, 24rem) 1fr; gap: 1rem; align-items: start; }
.inbox__list, .inbox__conversation { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem; min-height: 70vh; }
.inbox__tools { display: flex; flex-direction: column; gap: .5rem; margin-bottom: .75rem; }
.segmented { display: flex; border: 0; padding: 0; margin: 0; gap: .25rem; }
.segmented button { flex: 1; font: inherit; font-weight: 600; padding: .35rem; border: 1px solid #8a94a3; border-radius: 6px; background: var(--panel); color: var(--fg); cursor: pointer; }
.segmented button[aria-pressed=true] { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.contacts { list-style: none; margin: 0; padding: 0; }
.contact { display: grid; grid-template-columns: 1fr auto; grid-template-areas: "name unread" "meta time"; gap: .1rem .5rem; width: 100%; text-align: left; font: inherit; color: inherit; background: transparent; border: 0; border-bottom: 1px solid var(--line); padding: .6rem .5rem; cursor: pointer; }
.contact:hover { background: #f1f4f9; }
.contact[aria-current=true] { background: #e3ebff; }
.contact__name { grid-area: name; font-weight: 600; overflow-wrap: anywhere; }
.contact__meta { grid-area: meta; font-size: .8125rem; }
.contact__time { grid-area: time; font-size: .75rem; color: var(--muted); }
.unread { grid-area: unread; justify-self: end; align-self: start; min-width: 1.5rem; text-align: center; background: var(--accent); color: var(--accent-fg); border-radius: 999px; font-size: .75rem; font-weight: 700; padding: .05rem .45rem; }
.more { margin-top: .75rem; width: 100%; justify-content: center; }
.conversation { display: flex; flex-direction: column; gap: .75rem; height: 100%; }
.conversation__head h2 { margin: 0; }
.conversation__head p { margin: .25rem 0 .5rem; }
.back { display: none; }
.messages { display: flex; flex-direction: column; gap: .5rem; max-height: 55vh; overflow-y: auto; padding: .25rem; }
.message { max-width: 85%; border-radius: 12px; padding: .5rem .75rem; background: #f1f4f9; align-self: flex-start; }
.message--user { background: #e3ebff; align-self: flex-end; }
.message--operator { background: #e6f4ea; }
.message__head { font-size: .75rem; color: var(--muted); }
.message__text { margin: .15rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.message__docs { margin: .25rem 0 0; padding-left: 1.1rem; font-size: .8125rem; }
.message__files { list-style: none; margin: .25rem 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: .5rem; font-size: .8125rem; }
.message__image { display: block; max-width: 240px; max-height: 180px; width: auto; height: auto; border-radius: 6px; }
.message__tools summary { cursor: pointer; font-size: .8125rem; }
.assign { display: inline-flex; gap: .35rem; align-items: center; }
.assign select { width: auto; max-width: 14rem; }
.reply { display: flex; gap: .5rem; align-items: flex-end; }
.reply textarea { flex: 1; }
/* On a phone a table's rows become stacked cards, each cell named by its column: nothing to scroll sideways. */
@media (max-width: 600px) {
  .table-wrap { overflow-x: visible; }
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap td { display: block; width: 100%; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table-wrap tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  .table-wrap td { border: 0; padding: .15rem 0; display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; overflow-wrap: anywhere; }
  .table-wrap td[data-label]::before { content: attr(data-label); flex: 0 0 6rem; font-weight: 600; color: var(--muted); }
  .table-wrap td:empty { display: none; }
}
@media (max-width: 760px) {
  .main { padding: .5rem; }
  .inbox { grid-template-columns: 1fr; }
  .inbox--open .inbox__list { display: none; }
  .inbox:not(.inbox--open) .inbox__conversation { display: none; }
  .back { display: inline-flex; }
  .inbox__list, .inbox__conversation { min-height: 0; }
  .message { max-width: 100%; }
}
.warning { color: var(--danger); font-weight: 600; }
.appearance { display: grid; grid-template-columns: minmax(0, 1fr) 20rem; gap: 1rem; align-items: start; }
@media (max-width: 50rem) { .appearance { grid-template-columns: minmax(0, 1fr); } }
.hours, .languages { border: 1px solid var(--line); border-radius: var(--radius); padding: .5rem .75rem; margin: 0 0 .75rem; }
.hours__day { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .25rem 0; }
.hours__day .check { min-width: 8rem; }
.check { display: flex; gap: .5rem; align-items: center; }
.check input { width: auto; flex: none; margin: 0; }
input[type=color] { width: 6rem; height: 2.5rem; padding: .2rem; }
.preview { margin: 0; }
.preview__frame { border: 1px solid var(--line); border-radius: 16px; padding: .75rem; }
.preview__frame--light { background: #ffffff; color: #17212b; }
.preview__frame--dark { background: #12161c; color: #e7ebf0; }
.preview__head { display: flex; gap: .5rem; align-items: center; }
.preview__avatar { width: 2.25rem; height: 2.25rem; border-radius: 50%; display: grid; place-items: center; font-weight: 600; }
.preview__greeting { white-space: pre-line; }
.preview__bubble { margin-left: auto; width: fit-content; max-width: 80%; padding: .5rem .75rem; border-radius: 16px 16px 4px 16px; }
.preview__avatar { overflow: hidden; }
.preview__avatar img, .preview__reply img { width: 100%; height: 100%; object-fit: cover; border-radius: 50%; }
.preview__reply { display: flex; flex-direction: column; gap: .2rem; align-items: flex-start; margin-top: .5rem; }
.preview__reply img { width: 1.5rem; height: 1.5rem; flex: none; }
.preview__agent { margin: 0; max-width: 80%; padding: .5rem .75rem; border-radius: 16px 16px 16px 4px; background: #f1f4f9; }
.preview__frame--dark .preview__agent { background: #1d242d; }
.contact-panel { border: 1px solid var(--line); border-radius: var(--radius); padding: .5rem .75rem; margin: 0 0 .75rem; }
.contact-panel summary { cursor: pointer; font-weight: 600; }
.contact-panel h3 { font-size: 1rem; margin: .75rem 0 .25rem; }
.contact-panel__fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .25rem 1rem; margin: .5rem 0 0; }
.contact-panel__fields dt { font-weight: 600; color: var(--muted); }
.contact-panel__fields dd { margin: 0; overflow-wrap: anywhere; }
.contact-panel__list { margin: 0; padding-left: 1.25rem; }
.endpoints { list-style: none; padding: 0; margin: 0 0 1rem; }
.endpoint__url { overflow-wrap: anywhere; }
.events { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .25rem 1rem; }
.report-summary { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
.report-summary dt { color: var(--muted); }
.report-summary dd { margin: 0; font-weight: 600; }
.report-chart { margin: 0; }
.report-bar-row { display: grid; grid-template-columns: 6.5rem 1fr 3.5rem; align-items: center; gap: .5rem; }
.report-bar-key, .report-bar-value { font-size: 13px; color: var(--muted); white-space: nowrap; }
.report-bar-value { text-align: right; }
.report-bar { display: block; height: .8rem; min-width: 1px; background: var(--accent); border-radius: 3px; }
.report-views { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; }
.report-views label { display: inline-flex; align-items: center; gap: .35rem; font-weight: 400; white-space: nowrap; width: auto; }
.report-views input { width: auto; margin: 0; }
.report-who { font-size: 13px; font-weight: 400; overflow-wrap: anywhere; }
${INBOX_CSS}`;
