import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describeError } from "./api.js";
import { BASE, navigate } from "./router.js";

/** What a load is doing. */
export type Loaded<T> = { state: "loading" } | { state: "error"; error: unknown } | { state: "ok"; data: T };

/** Runs a load on mount (and when deps change); `reload` runs it again, keeping the shown data meanwhile. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[] = []): [Loaded<T>, () => void] {
  const [s, set] = useState<Loaded<T>>({ state: "loading" });
  const seq = useRef(0);
  const run = useCallback(() => {
    const n = ++seq.current;
    fn().then(
      (data) => n === seq.current && set({ state: "ok", data }),
      (error: unknown) => n === seq.current && set({ state: "error", error }),
    );
  }, deps);
  useEffect(run, [run]);
  return [s, run];
}

/** A page's heading, focused when the page opens so keyboard and screen-reader users land on it. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** A link to a console page, followed without a reload. */
export function Link(props: { href: string; class?: string; children: ComponentChildren; current?: boolean }) {
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a
      href={`${BASE}${props.href}`}
      class={props.class}
      onClick={onClick}
      aria-current={props.current ? "page" : undefined}
    >
      {props.children}
    </a>
  );
}

/** The loading state of a part of a page. */
export function Loading({ what }: { what: string }) {
  return (
    <p class="state state--loading" role="status">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

/** The error state of a part of a page, with a retry. */
export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div class="state state--error" role="alert">
      <p>{describeError(error)}</p>
      {onRetry && (
        <button type="button" class="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * A failed action's reason as one line beside its form (no retry: the form is the retry), or nothing before it
 * fails.
 */
export function ActionError({ error }: { error: unknown }) {
  if (error === undefined) return null;
  return (
    <p class="state state--error" role="alert">
      {describeError(error)}
    </p>
  );
}

/** The account's chatbots as a select's options, once loaded: every chatbot picker lists them alike. */
export function ChatbotOptions({ chatbots }: { chatbots: Loaded<readonly { chatbotId: string; name: string }[]> }) {
  if (chatbots.state !== "ok") return null;
  return (
    <>
      {chatbots.data.map((c) => (
        <option key={c.chatbotId} value={c.chatbotId}>
          {c.name}
        </option>
      ))}
    </>
  );
}

/** The empty state of a list: what is missing and what to do. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="state state--empty">{children}</div>;
}

/**
 * A value shown once (a key, a secret, a link) with the button that copies it, and `children` after them in the row:
 * every such value looks and copies alike.
 */
export function SecretRow(props: { value: string; testId: string; copyLabel: string; children?: ComponentChildren }) {
  return (
    <div class="secret__row">
      <code class="secret__value" data-testid={props.testId}>
        {props.value}
      </code>
      <CopyButton text={props.value} label={props.copyLabel} />
      {props.children}
    </div>
  );
}

/** A button that copies text to the clipboard and says so. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState<string>("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone("Copied");
    } catch {
      setDone("Copy failed: select the text and copy it");
    }
  };
  return (
    <span class="copy">
      <button type="button" class="button" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" class="copy__status">
        {done}
      </span>
    </span>
  );
}

/** Runs an action, tracking its pending state and its error. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (fn: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

/** A labelled form field. */
export function Field(props: { label: string; id: string; hint?: string; children: JSX.Element }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <p class="field__hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
    </div>
  );
}

/**
 * A labelled text input bound to a value: the field every form writes (its hint, if any, describes the input).
 * Other attributes (type, autocomplete, required, …) go to the input as given.
 */
export function TextField(
  props: { label: string; id: string; hint?: string; value: string; onValue: (v: string) => void } & Omit<
    JSX.IntrinsicElements["input"],
    "id" | "value" | "onInput"
  >,
) {
  const { label, id, hint, value, onValue, ...input } = props;
  return (
    <Field label={label} id={id} {...(hint ? { hint } : {})}>
      <input
        id={id}
        {...input}
        {...(hint ? { "aria-describedby": `${id}-hint` } : {})}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  );
}

/** A labelled whole-number input from `min` to `max` (its value kept as the text typed). */
export function NumberField(props: {
  label: string;
  id: string;
  min: number;
  max?: number;
  hint?: string;
  value: string;
  onValue: (v: string) => void;
}) {
  return <TextField type="number" {...props} />;
}

/**
 * A labelled textarea bound to a value, as TextField is for an input (its hint, if any, describes it). Other
 * attributes (rows, maxLength, required, …) go to the textarea as given.
 */
export function TextAreaField(
  props: { label: string; id: string; hint?: string; value: string; onValue: (v: string) => void } & Omit<
    JSX.IntrinsicElements["textarea"],
    "id" | "value" | "onInput"
  >,
) {
  const { label, id, hint, value, onValue, ...area } = props;
  return (
    <Field label={label} id={id} {...(hint ? { hint } : {})}>
      <textarea
        id={id}
        {...area}
        {...(hint ? { "aria-describedby": `${id}-hint` } : {})}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  );
}

/** An ISO instant as the reader's local date and time; "" stays "". */
export function when(iso: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}
