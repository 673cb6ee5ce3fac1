/**
 * What a global set-up file starts once for the whole run although each project runs the file: the first project's
 * set-up makes it (kept on `globalThis`, which the projects' set-ups share), every later one gets the same, and
 * `lastOut()`, called in each project's teardown, answers true only for the last project to finish, which stops it
 * (a project can finish while others still use it).
 */
export function sharedByProjects<T>(name: string, make: () => T): { value: T; lastOut: () => boolean } {
  const key = Symbol.for(`aiagent.test.${name}`);
  const holder = globalThis as { [key: symbol]: { users: number; value: T } | undefined };
  const shared = (holder[key] ??= { users: 0, value: make() });
  shared.users++;
  return { value: shared.value, lastOut: () => --shared.users === 0 };
}
