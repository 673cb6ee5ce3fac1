/**
 * The rules of a robots.txt for one user agent (RFC 9309): the group naming it, else the `*` group; the longest
 * matching Allow or Disallow path wins, Allow on a tie; `*` and `$` in paths as the RFC says.
 */
export function robotsRules(text: string, agent: string): (path: string) => boolean {
  const groups: { agents: string[]; rules: { allow: boolean; pattern: string }[] }[] = [];
  let current: (typeof groups)[number] | undefined;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, "").trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === "user-agent") {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
    } else if ((key === "allow" || key === "disallow") && current) {
      lastWasAgent = false;
      if (value) current.rules.push({ allow: key === "allow", pattern: value });
    } else lastWasAgent = false;
  }
  const name = agent.toLowerCase();
  const own = groups.filter((g) => g.agents.some((a) => a !== "*" && name.includes(a)));
  const rules = (own.length ? own : groups.filter((g) => g.agents.includes("*"))).flatMap((g) => g.rules);
  const compiled = rules.map((r) => ({
    ...r,
    re: new RegExp(
      `^${r.pattern
        .replace(/[.+?^{}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\\\$$|\$$/, "$")}`,
    ),
  }));
  return (path) => {
    let best: { allow: boolean; len: number } | undefined;
    for (const r of compiled)
      if (r.re.test(path) && (!best || r.pattern.length > best.len || (r.pattern.length === best.len && r.allow)))
        best = { allow: r.allow, len: r.pattern.length };
    return best ? best.allow : true;
  };
}
