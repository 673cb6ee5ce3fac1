/** The styles of the inbox's team features (views, internal notes, saved replies), appended to the console's. */
export const INBOX_CSS = `
.views { margin-top: .5rem; }
.approvals { border: 2px solid #2b6cb0; background: #ebf4ff; border-radius: var(--radius); padding: .5rem .75rem; }
.approvals h3 { font-size: .9375rem; margin: 0 0 .35rem; }
.approvals ul { list-style: none; margin: 0; padding: 0; display: grid; gap: .5rem; }
.approval__arguments { margin: .25rem 0; max-height: 8rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.notes { border: 2px dashed #b7791f; background: #fff8e6; border-radius: var(--radius); padding: .5rem .75rem; }
.notes h3 { font-size: .9375rem; margin: 0; }
.notes__hint { font-size: .8125rem; margin: 0 0 .35rem; color: #6b4a00; }
.notes ol { list-style: none; margin: 0 0 .5rem; padding: 0; display: grid; gap: .35rem; max-height: 12rem; overflow-y: auto; }
.note { background: #fff1c7; border-left: 4px solid #b7791f; border-radius: 6px; padding: .35rem .6rem; }
.note__head { font-size: .75rem; color: #5c4300; }
.note__text { margin: .1rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.note-form { display: flex; gap: .5rem; align-items: flex-end; }
.note-form textarea { flex: 1; }
.reply-box { position: relative; flex: 1; display: flex; flex-wrap: wrap; }
.reply-box textarea { flex: 1; }
/* On a phone the reply box takes the whole row, its buttons below it: a box squeezed beside them holds a few words. */
@media (max-width: 600px) { .reply { flex-wrap: wrap; justify-content: flex-end; } .reply-box { flex-basis: 100%; } }
.picker { position: absolute; bottom: 100%; left: 0; right: 0; margin: 0 0 .25rem; padding: .25rem; list-style: none;
  background: var(--panel); border: 1px solid #8a94a3; border-radius: 8px; max-height: 14rem; overflow-y: auto;
  box-shadow: 0 4px 16px rgba(0,0,0,.15); z-index: 5; }
.picker [role=option] { padding: .35rem .5rem; border-radius: 6px; cursor: pointer; overflow-wrap: anywhere; }
.picker [aria-selected=true] { background: var(--accent); color: var(--accent-fg); }
.picker__shortcut { font-weight: 700; }
.picker__empty { color: var(--muted); cursor: default; }
.activity { align-self: center; text-align: center; color: var(--muted); font-size: .875rem; margin: .25rem 0; padding: .15rem .75rem; border-top: 1px solid var(--line); border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.activity time { white-space: nowrap; }
.confirm { flex-basis: 100%; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; border: 2px solid var(--accent); border-radius: var(--radius); padding: .5rem .75rem; background: var(--panel); }
.confirm p { margin: 0; flex-basis: 100%; }
.taken:empty { display: none; }
.taken__notice { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; margin: .5rem 0; padding: .5rem .75rem; border-left: 4px solid var(--accent); background: #eef3ff; border-radius: 6px; }
.contact { grid-template-columns: minmax(0, 1fr) auto; }
.contact__preview { grid-column: 1 / -1; font-size: .8125rem; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.contact__bot { grid-column: 1 / -1; font-size: .75rem; color: var(--muted); overflow-wrap: anywhere; }
.segmented[hidden] { display: none; }
.search-filters { display: flex; flex-wrap: wrap; gap: .5rem; }
.search-filters label { display: flex; flex-direction: column; gap: .15rem; font-size: .8125rem; font-weight: 600; flex: 1 1 7rem; min-width: 0; }
.search-filters select, .search-filters input { width: 100%; min-width: 0; box-sizing: border-box; font: inherit; font-weight: 400; }
.hits { list-style: none; margin: 0; padding: 0; }
.hit { display: flex; flex-direction: column; gap: .2rem; width: 100%; text-align: left; font: inherit; color: inherit; background: transparent; border: 0; border-bottom: 1px solid var(--line); padding: .6rem .5rem; cursor: pointer; }
.hit:hover { background: #f1f4f9; }
.hit[aria-current=true] { background: #e3ebff; }
.hit__head { display: flex; flex-wrap: wrap; gap: .25rem .5rem; align-items: baseline; }
.hit__snippet { font-size: .875rem; overflow-wrap: anywhere; }
.hit mark { background: #ffe58a; color: inherit; font-weight: 700; border-radius: 3px; padding: 0 .1rem; }
.badge--note { background: #fff1c7; color: #5c4300; }
.labels { display: flex; flex-wrap: wrap; align-items: center; gap: .35rem; margin-top: .5rem; }
.chips { display: flex; flex-wrap: wrap; gap: .35rem; list-style: none; margin: 0; padding: 0; }
.chips:empty { display: none; }
.chip { background: #e3ebff; color: #1b3f98; border-radius: 999px; padding: .1rem .6rem; font-size: .8125rem; font-weight: 600; overflow-wrap: anywhere; }
.labels__menu { flex-basis: 100%; border: 1px solid #8a94a3; border-radius: var(--radius); padding: .5rem .75rem; margin: 0; display: flex; flex-wrap: wrap; gap: .35rem .75rem; min-width: 0; }
.labels__menu legend { font-weight: 600; font-size: .875rem; }
.labels__choice { display: inline-flex; align-items: center; gap: .3rem; max-width: 100%; overflow-wrap: break-word; }
.labels__new { flex-basis: 100%; display: flex; gap: .5rem; }
.labels__new input { flex: 1; min-width: 0; }
.labels__priority { display: inline-flex; align-items: center; gap: .35rem; font-size: .875rem; font-weight: 600; }
.labels__priority select { font: inherit; font-weight: 400; }
.badge--personal { background: #e3ebff; color: #1b3f98; }
.badge--shared { background: #ececec; color: #3d3d3d; }
.picker__whose { font-size: .75rem; color: var(--muted); margin-inline-start: .35rem; }
.reply-box__warning { flex-basis: 100%; margin: .25rem 0 0; font-size: .875rem; }
.note-form { position: relative; }
.note__mentions { margin: .25rem 0 0; font-size: .875rem; color: var(--muted); }
.picker [aria-selected=true] .picker__whose { color: inherit; }
.mentions { list-style: none; padding: 0; margin: 0; display: grid; gap: .5rem; }
.mention { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; }
.mention--unread { border-color: #1b3f98; border-width: 2px; }
.mention__text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .25rem 0; }
.nav-count { display: inline-block; min-width: 1.25rem; padding: 0 .35rem; margin-inline-start: .25rem; border-radius: 999px;
  background: #8a1116; color: #fff; font-size: .75rem; text-align: center; }
.snooze { display: inline-flex; flex-wrap: wrap; align-items: center; gap: .5rem; font-size: .875rem; }
.snooze__menu { flex-basis: 100%; display: flex; flex-wrap: wrap; gap: .5rem; }
.snooze__chosen { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
.snooze__chosen input { min-width: 0; }
.sla { display: inline-block; padding: 0 .4rem; border-radius: .6rem; font-size: .8rem; font-weight: 600; background: #eef2f7; color: #1f3a5f; }
.sla--breached { background: #fde8e8; color: #8a1c1c; }
.sla--met { background: #e6f4ea; color: #1e5b2e; }
.priority { display: inline-block; padding: 0 .4rem; border-radius: .6rem; font-size: .75rem; font-weight: 600; white-space: nowrap; background: #eef2f7; color: #2b3642; }
.priority--high { background: #fff1c7; color: #5c4300; }
.priority--urgent { background: #fde8e8; color: #8a1c1c; }
.contact__timers { grid-column: 1 / -1; font-size: .8rem; overflow-wrap: anywhere; }
.inbox__label-filter { display: inline-flex; align-items: center; gap: .35rem; font-size: .875rem; font-weight: 600; }
.inbox__label-filter select { font: inherit; font-weight: 400; max-width: 12rem; }
`;
