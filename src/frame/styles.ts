/** The frame's stylesheet, served as /chatbot-iframe/assets/frame.css (a file of its own, so the CSP needs no inline styles). */
export const FRAME_CSS = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #17212b; --muted: #5f6b7a; --line: #e3e8ef;
  --accent: #2456d6; --accent-fg: #ffffff; --bot: #f1f4f9; --user: #2456d6; --user-fg: #ffffff;
  --error-bg: #fdecec; --error-fg: #8a1c1c; --warn-bg: #fff5db; --warn-fg: #6b4b00;
  --radius: 16px; --font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) {
    --bg: #12161c; --fg: #e7ebf0; --muted: #9aa5b4; --line: #27303b;
    --accent: #6d94ff; --accent-fg: #0b1020; --bot: #1d242d; --user: #3d6bea; --user-fg: #ffffff;
    --error-bg: #3a1717; --error-fg: #ffb4b4; --warn-bg: #3a2f12; --warn-fg: #ffe08a;
  }
}
/* A chatbot set to light or dark keeps it whatever the visitor prefers. */
:root[data-theme="light"] { color-scheme: light; }
:root[data-theme="dark"] {
  color-scheme: dark;
  --bg: #12161c; --fg: #e7ebf0; --muted: #9aa5b4; --line: #27303b;
  --accent: #6d94ff; --accent-fg: #0b1020; --bot: #1d242d; --user: #3d6bea; --user-fg: #ffffff;
  --error-bg: #3a1717; --error-fg: #ffb4b4; --warn-bg: #3a2f12; --warn-fg: #ffe08a;
}
.away { margin: 10px 16px 0; padding: 10px 12px; border-radius: 10px; background: var(--bot); color: var(--fg); font-size: 14px; }
.empty { white-space: pre-line; }
.rating fieldset { border: 1px solid var(--line); border-radius: 12px; padding: 8px 12px; margin: 0; text-align: start; }
.rating legend { font-weight: 600; color: var(--fg); }
.rating__scores { display: flex; flex-wrap: wrap; gap: 4px 12px; margin: 4px 0 8px; color: var(--fg); }
.rating textarea { width: 100%; font: inherit; border: 1px solid var(--line); border-radius: 8px; padding: 6px 8px; background: var(--bg); color: var(--fg); }
.rating button { margin-top: 6px; font: inherit; font-weight: 600; border: 0; border-radius: 8px; padding: 6px 12px; background: var(--accent); color: var(--accent-fg); cursor: pointer; }
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { background: var(--bg); color: var(--fg); font: 15px/1.45 var(--font); }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.chat { display: flex; flex-direction: column; height: 100%; max-width: 720px; margin: 0 auto; }
.chat__header { display: flex; align-items: center; gap: 12px; padding: 14px 16px; border-bottom: 1px solid var(--line); }
.chat__avatar { flex: none; width: 36px; height: 36px; border-radius: 50%; display: grid; place-items: center; background: var(--accent); color: var(--accent-fg); font-weight: 600; }
.chat__title { margin: 0; font-size: 16px; font-weight: 600; }
.chat__subtitle { margin: 0; color: var(--muted); font-size: 13px; }
.notice { display: flex; align-items: center; gap: 12px; margin: 10px 16px 0; padding: 10px 12px; border-radius: 10px; background: var(--warn-bg); color: var(--warn-fg); font-size: 14px; }
.notice[hidden] { display: none; }
.notice[data-kind="error"], .notice[data-kind="expired"] { background: var(--error-bg); color: var(--error-fg); }
.notice span { flex: 1; }
.notice button { font: inherit; font-weight: 600; border: 1px solid currentColor; background: transparent; color: inherit; border-radius: 8px; padding: 4px 10px; cursor: pointer; }
.empty { margin: auto; padding: 24px; color: var(--muted); text-align: center; }
.empty[hidden] { display: none; }
.log { flex: 1; overflow-y: auto; list-style: none; margin: 0; padding: 16px; display: flex; flex-direction: column; gap: 10px; }
.log:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
.msg { display: flex; flex-direction: column; max-width: 85%; align-self: flex-start; }
.msg--user { align-self: flex-end; align-items: flex-end; }
.msg__bubble { padding: 9px 13px; border-radius: var(--radius); background: var(--bot); white-space: pre-wrap; overflow-wrap: anywhere; }
.msg--assistant .msg__bubble, .msg--operator .msg__bubble { border-end-start-radius: 4px; }
.msg--user .msg__bubble { background: var(--user); color: var(--user-fg); border-end-end-radius: 4px; }
.msg--operator .msg__bubble { border: 1px solid var(--accent); }
.msg--pending .msg__bubble { opacity: 0.7; }
.msg--event { align-self: center; max-width: 90%; text-align: center; font-size: 13px; color: var(--muted); padding: 2px 10px; }
.msg--error .msg__bubble { background: var(--error-bg); color: var(--error-fg); }
.msg__retry { align-self: flex-start; margin: 6px 2px 0; font: inherit; font-size: 14px; font-weight: 600; border: 1px solid var(--error-fg); background: transparent; color: var(--error-fg); border-radius: 8px; padding: 4px 10px; cursor: pointer; }
.msg__activity { margin: 4px 6px 0; font-size: 13px; font-style: italic; color: var(--muted); }
.msg__time { margin: 3px 6px 0; font-size: 11px; color: var(--muted); }
.msg__sources { margin: 6px 2px 0; font-size: 13px; display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 8px; }
.msg__sources-label { color: var(--muted); }
.msg__sources-list { display: contents; list-style: none; }
.msg__source { color: var(--accent); text-decoration: none; border: 1px solid var(--line); border-radius: 999px; padding: 1px 9px; }
.msg__source:hover, .msg__source:focus-visible { text-decoration: underline; }
.typing { margin: 0; padding: 0 16px 4px; font-size: 13px; color: var(--muted); }
.msg__who { display: flex; align-items: center; gap: 6px; font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.pic { width: 20px; height: 20px; border-radius: 50%; object-fit: cover; flex: none; }
.chat__avatar { position: relative; overflow: hidden; }
.chat__avatar .pic { position: absolute; inset: 0; width: 100%; height: 100%; }
.msg--event .pic { vertical-align: middle; margin-inline-end: 6px; }
.msg--typing .msg__bubble::after { content: "• • •"; letter-spacing: 2px; color: var(--muted); animation: pulse 1.2s ease-in-out infinite; }
@keyframes pulse { 50% { opacity: 0.35; } }
@media (prefers-reduced-motion: reduce) { .msg--typing .msg__bubble::after { animation: none; } }
.composer { display: flex; gap: 8px; align-items: flex-end; padding: 12px 16px 16px; border-top: 1px solid var(--line); }
.composer textarea { flex: 1; resize: none; min-height: 42px; max-height: 160px; padding: 10px 12px; font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 12px; }
.composer textarea:focus-visible { outline: 2px solid var(--accent); outline-offset: 0; border-color: transparent; }
.composer button { flex: none; width: 42px; height: 42px; border: 0; border-radius: 12px; background: var(--accent); color: var(--accent-fg); cursor: pointer; display: grid; place-items: center; }
/* Right to left, the send arrow points the way the text runs. */
[dir="rtl"] .composer button svg { transform: scaleX(-1); }
.composer button:disabled { opacity: 0.45; cursor: default; }
.composer button:focus-visible { outline: 2px solid var(--fg); outline-offset: 2px; }
.mail { padding: 6px 16px 0; font-size: 13px; display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.mail__note { margin: 0; flex: 1 1 100%; color: var(--muted); }
.mail__note:empty, .mail [hidden] { display: none; }
.mail__form { display: flex; gap: 6px; flex: 1 1 100%; }
.mail__input { flex: 1; min-width: 0; font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 8px; padding: 6px 8px; }
.mail button { font: inherit; border: 1px solid var(--accent); background: transparent; color: var(--accent); border-radius: 8px; padding: 5px 10px; cursor: pointer; }
.mail__form button { background: var(--accent); color: var(--accent-fg); }
.page-error { max-width: 480px; margin: 15vh auto; padding: 0 20px; text-align: center; }
.page-error h1 { font-size: 18px; }
.page-error p { color: var(--muted); }
/* Files (attach.ts): the attach button beside the message box, images inline in their message, the upload's bar. */
.composer button[type="button"] { background: none; color: var(--muted); font-size: 28px; font-weight: 300; }
.composer input[type="file"] { display: none; }
.msg__bubble a { display: block; margin-top: 4px; color: inherit; }
.msg__bubble img { display: block; max-width: 100%; max-height: 240px; border-radius: 8px; }
.msg__bubble progress { display: block; width: 100%; }
`;
