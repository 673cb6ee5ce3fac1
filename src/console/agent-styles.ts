/** The styles of a chatbot's knowledge and agent pages, kept beside the console's own sheet. */
export const AGENT_CSS = `
.subnav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0 0 1rem; padding: 0; }
.subnav a { display: block; padding: .3rem .7rem; border-radius: 6px; border: 1px solid var(--line); text-decoration: none; color: var(--fg); font-weight: 600; background: var(--panel); }
.subnav a[aria-current=page] { background: #e3ebff; color: #1b3f98; border-color: #b8c8f2; }
.badge--queued { background: #fff1c7; color: #5c4300; }
.badge--indexing { background: #e3ebff; color: #1b3f98; }
.badge--indexed { background: #dff3e6; color: #145a2c; }
.badge--failed { background: #fde2e1; color: #8a1116; }
.source__title { font-weight: 600; display: block; }
.source__where { display: block; overflow-wrap: anywhere; font-size: .875rem; }
td .warning { display: block; font-size: .875rem; max-width: 22rem; }
.source__when { white-space: nowrap; }
.row-actions { white-space: nowrap; }
.table-wrap + .card, .table-wrap + form { margin-top: 1rem; }
.row-actions .button { margin: 0 .25rem .25rem 0; }
.passages { padding-left: 1.25rem; }
.passages li { margin: 0 0 .75rem; }
.passages blockquote { margin: .25rem 0; padding: .25rem .75rem; border-left: 3px solid var(--accent); background: var(--bg); white-space: pre-wrap; }
.passage__source { margin: 0; font-weight: 600; }
textarea.code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.replay { list-style: none; padding: 0; margin: .75rem 0 0; display: grid; gap: .75rem; }
.replay__item { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; }
.replay__item[data-changed=true] { border-color: #b7791f; }
.replay__sides { display: grid; grid-template-columns: 1fr 1fr; gap: .75rem; }
.replay__side h3 { font-size: .875rem; margin: 0; }
.replay__answer { white-space: pre-wrap; overflow-wrap: anywhere; }
.replay__missing { color: #8a1116; }
.badge--muted { background: var(--bg); color: var(--fg); }
@media (max-width: 600px) { .replay__sides { grid-template-columns: 1fr; } .row-actions { white-space: normal; } .table-wrap td > div { flex: 1 1 0; min-width: 0; } }
`;
