import { useEffect, useState } from "preact/hooks";

/** Where the console lives; every page is a path under it. */
export const BASE = "/console";

const listeners = new Set<() => void>();
addEventListener("popstate", () => {
  for (const l of listeners) l();
});

/** Goes to a console page without reloading (the History API; Back works). */
export function navigate(path: string, replace = false): void {
  const url = path.startsWith(BASE) ? path : `${BASE}${path}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  for (const l of listeners) l();
}

/** The current page's path below /console ("/inbox"), re-rendering on every change. */
export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const l = () => setPath(current());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return path;
}

function current(): string {
  const p = location.pathname.slice(BASE.length).replace(/\/+$/, "");
  return p === "" ? "/" : p;
}
