/** The styles of the team features (typing, pictures, alerts), kept beside the console's own sheet. */
export const TEAM_CSS = `
.typing { min-height: 1.5em; margin: 0 .75rem; font-size: .875rem; }
.picture-row { display: flex; flex-wrap: wrap; align-items: center; gap: .75rem; margin: .5rem 0; }
.picture { width: 64px; height: 64px; border-radius: 50%; object-fit: cover; flex: none; }
.picture--none { display: grid; place-items: center; background: var(--accent); color: var(--accent-fg); font-weight: 600; font-size: 1.5rem; }
.picture-row input[type=file]:focus-visible + label { outline: 3px solid var(--focus); outline-offset: 2px; }
.field--check { display: flex; align-items: center; gap: .5rem; }
.team__lists { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 16rem), 1fr)); gap: .75rem; margin-bottom: .75rem; }
.team__lists fieldset { display: flex; flex-direction: column; align-items: flex-start; gap: .35rem; min-width: 0; border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; }
.viewing { min-height: 1.5em; margin: .25rem 0; font-size: .875rem; font-weight: 600; }
.viewing:empty { min-height: 0; margin: 0; }
.subnav { display: flex; gap: .25rem; margin: 0 0 1rem; }
.subnav a { padding: .35rem .7rem; border-radius: 6px; text-decoration: none; color: var(--fg); font-weight: 600; border: 1px solid var(--line); }
.subnav a[aria-current=page] { background: #e3ebff; color: #1b3f98; border-color: #b9c9f5; }
.team__lists label { display: flex; align-items: center; gap: .5rem; font-weight: 400; margin: 0; }
.team__lists input[type=checkbox] { width: 1.1rem; height: 1.1rem; margin: 0; flex: none; }
.availability { flex: none; font-size: .875rem; }
.availability select { padding: .25rem .4rem; }
@media (min-width: 1101px) { .topbar nav a { padding: .4rem .375rem; } .topbar, .topbar__menu { column-gap: .75rem; } }
.field--check input { width: 1.25rem; height: 1.25rem; margin: 0; }
`;
