/** The styles of the team features (typing, pictures, alerts), kept beside the console's own sheet. */
export const TEAM_CSS = `
.typing { min-height: 1.5em; margin: 0 .75rem; font-size: .875rem; }
.picture-row { display: flex; flex-wrap: wrap; align-items: center; gap: .75rem; margin: .5rem 0; }
.picture { width: 64px; height: 64px; border-radius: 50%; object-fit: cover; flex: none; }
.picture--none { display: grid; place-items: center; background: var(--accent); color: var(--accent-fg); font-weight: 600; font-size: 1.5rem; }
.picture-row input[type=file]:focus-visible + label { outline: 3px solid var(--focus); outline-offset: 2px; }
.field--check { display: flex; align-items: center; gap: .5rem; }
.field--check input { width: 1.25rem; height: 1.25rem; margin: 0; }
`;
