import { invalidArgument } from "../../domain/errors.js";

/**
 * JSON.parse that refuses a repeated key in any object (JSON.parse keeps the last, silently). Fast path: a body
 * cannot hold more keys than places where a string is followed by `:`; when that count equals the keys the parse
 * produced, no key was lost. Only when they differ (a duplicate, or `\" :` inside a string) is the text scanned.
 */
export function parseJsonWithoutDuplicates(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument("body", "is not well-formed JSON");
  }
  if (keyMarks(text) !== keysIn(value)) {
    const repeated = repeatedKey(text);
    if (repeated !== undefined) throw invalidArgument(repeated, "is given more than once");
  }
  return value;
}

/** How many `:` follow a `"` (after blanks): every key ends so, and nothing else outside strings can. */
function keyMarks(text: string): number {
  let n = 0;
  // indexOf and charCodeAt, not a regex: this runs on every JSON body, and is several times faster so.
  for (let i = text.indexOf(":"); i >= 0; i = text.indexOf(":", i + 1)) {
    let j = i - 1;
    let c = text.charCodeAt(j);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(--j);
    if (c === 0x22) n++;
  }
  return n;
}

/** Keys of every object in a parsed value (iteratively: a body may nest deeper than the call stack). */
function keysIn(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === "object") stack.push(x);
      continue;
    }
    for (const k in v) {
      n++;
      const x = (v as Record<string, unknown>)[k];
      if (x !== null && typeof x === "object") stack.push(x);
    }
  }
  return n;
}

interface Frame {
  /** The keys seen so far in this object; null for an array. */
  keys: Set<string> | null;
  /** The current key (object) or element index (array), for naming a path. */
  at: string | number;
}

/** The path of the first repeated key in well-formed JSON text (e.g. `contact.email`), or undefined. */
export function repeatedKey(text: string): string | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      let k = j + 1;
      while (k < text.length && (text[k] === " " || text[k] === "\t" || text[k] === "\n" || text[k] === "\r")) k++;
      const top = stack[stack.length - 1];
      if (text[k] === ":" && top?.keys) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return pathOf(stack.slice(0, -1), key);
        top.keys.add(key);
        top.at = key;
      }
      i = j;
    } else if (c === "{") stack.push({ keys: new Set(), at: "" });
    else if (c === "[") stack.push({ keys: null, at: 0 });
    else if (c === "}" || c === "]") stack.pop();
    else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top && !top.keys) top.at = (top.at as number) + 1;
    }
  }
  return undefined;
}

function pathOf(outer: Frame[], key: string): string {
  let path = "";
  for (const f of outer) path += typeof f.at === "number" ? `[${f.at}]` : path === "" ? f.at : `.${f.at}`;
  return path === "" ? key : `${path}.${key}`;
}
