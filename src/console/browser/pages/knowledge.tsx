import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { KnowledgePassage, KnowledgeSource } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts, isNotFound } from "../api.js";
import { SessionContext } from "../session.js";
import { DataTable, RowAction } from "../table.js";
import {
  ActionError,
  Empty,
  ErrorNote,
  Field,
  Loading,
  NumberField,
  TextAreaField,
  TextField,
  useAction,
  useLoad,
  when,
} from "../ui.js";
import { ChatbotNotFound, ChatbotPage } from "./chatbot-page.js";

/** The most a file may weigh (CreateKnowledgeSource's limit), told before it is sent. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** How often the list is read again while a source is queued or indexing. */
const POLL_MS = 1000;

const KIND_LABEL: Record<string, string> = { file: "File", page: "Web page", site: "Site", snippets: "Snippets" };

/**
 * A chatbot's knowledge sources: their status as indexing goes on; admins add (text, a file, a page, a site),
 * resync and delete them. Anyone of the team tries a question against them (SearchKnowledge).
 */
export function KnowledgePage({ chatbotId }: { chatbotId: string }) {
  return (
    <ChatbotPage chatbotId={chatbotId} title="Knowledge" sub="/knowledge">
      {() => <Knowledge chatbotId={chatbotId} />}
    </ChatbotPage>
  );
}

function Knowledge({ chatbotId }: { chatbotId: string }) {
  const s = useContext(SessionContext)!;
  const [list, reload] = useLoad(
    async () => (await accounts.listKnowledgeSources({ chatbotId })).data?.sources ?? [],
    [chatbotId],
  );
  const pending = list.state === "ok" && list.data.some((x) => x.status === "queued" || x.status === "indexing");
  useEffect(() => {
    if (!pending) return;
    const t = setTimeout(reload, POLL_MS);
    return () => clearTimeout(t);
  }, [list, pending]);
  if (list.state === "error" && isNotFound(list.error)) return <ChatbotNotFound />;
  return (
    <>
      <p class="muted">
        The built-in agent answers from these sources and cites the passage it used. Indexing runs in the background: a
        source is <strong>queued</strong>, then <strong>indexing</strong>, then <strong>indexed</strong> (or{" "}
        <strong>failed</strong>, with what to do).
      </p>
      {!s.admin && <p class="muted">Only the account's admins add, resync or delete sources.</p>}
      <h2>Sources</h2>
      {list.state === "loading" && <Loading what="the sources" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && (
        <Empty>No sources yet: the agent knows only its snippets.</Empty>
      )}
      {list.state === "ok" && list.data.length > 0 && (
        <Sources chatbotId={chatbotId} sources={list.data} admin={s.admin} onChanged={reload} />
      )}
      {s.admin && <NewSource chatbotId={chatbotId} onAdded={reload} />}
      <TryQuestion chatbotId={chatbotId} />
    </>
  );
}

function Sources(props: { chatbotId: string; sources: KnowledgeSource[]; admin: boolean; onChanged: () => void }) {
  const a = useAction();
  const act = (fn: () => Promise<unknown>) =>
    void a.run(async () => {
      await fn();
      props.onChanged();
    });
  const ref = (x: KnowledgeSource) => ({ chatbotId: props.chatbotId, sourceId: x.sourceId });
  return (
    <>
      <ActionError error={a.error} />
      <DataTable
        caption="Knowledge sources"
        columns={["Source", "Kind", "Status", "Passages", "Indexed"]}
        actions={props.admin}
        testId="knowledge-sources"
      >
        {props.sources.map((x) => (
          <tr key={x.sourceId} data-testid="knowledge-source" data-status={x.status}>
            <td data-label="Source">
              <div>
                <span class="source__title">{x.title || x.fileName || x.url}</span>
                {(x.url || x.fileName) !== (x.title || x.fileName || x.url) && (
                  <span class="muted source__where">{x.url || x.fileName}</span>
                )}
              </div>
            </td>
            <td data-label="Kind">{KIND_LABEL[x.kind] ?? x.kind}</td>
            <td data-label="Status">
              <div>
                <span class={`badge badge--${x.status}`} data-testid="knowledge-status">
                  {x.status}
                </span>
                {x.status === "failed" && x.statusReason && (
                  <span class="warning" data-testid="knowledge-reason">
                    {x.statusReason}
                  </span>
                )}
              </div>
            </td>
            <td data-label="Passages">
              <span data-testid="knowledge-chunks">{x.chunkCount}</span>
              {x.pageCount > 1 && <span class="muted">from {x.pageCount} pages</span>}
            </td>
            <td data-label="Indexed">
              <div>
                <span class="source__when">{x.indexedAt ? when(x.indexedAt) : "not yet"}</span>
                {x.version > 0 && <span class="muted source__where">version {x.version}</span>}
                {x.resyncIntervalHours > 0 && (
                  <span class="muted source__where" data-testid="knowledge-schedule">
                    re-synced every {x.resyncIntervalHours} h
                  </span>
                )}
              </div>
            </td>
            {props.admin && (
              <td class="row-actions">
                <button
                  type="button"
                  class="button"
                  disabled={a.busy || x.status === "queued" || x.status === "indexing"}
                  aria-label={`Resync ${x.title}`}
                  onClick={() => act(() => accounts.resyncKnowledgeSource(ref(x)))}
                >
                  Resync
                </button>
                <RowAction
                  label={`Delete ${x.title}`}
                  busy={a.busy}
                  onClick={() => {
                    if (confirm(`Delete the source ${x.title}? The agent never cites its passages again.`))
                      act(() => accounts.deleteKnowledgeSource(ref(x)));
                  }}
                >
                  Delete
                </RowAction>
              </td>
            )}
          </tr>
        ))}
      </DataTable>
    </>
  );
}

type Kind = "text" | "file" | "page" | "site";

/** A file name for pasted text: Markdown, named after its title. */
function textFileName(title: string): string {
  const stem = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 60);
  return `${stem || "text"}.md`;
}

function NewSource({ chatbotId, onAdded }: { chatbotId: string; onAdded: () => void }) {
  const [kind, setKind] = useState<Kind>("text");
  const [title, setTitle] = useState("");
  const [text, setText] = useState("");
  const [url, setUrl] = useState("");
  const [maxPages, setMaxPages] = useState("50");
  const [maxDepth, setMaxDepth] = useState("2");
  const [resync, setResync] = useState("0");
  const file = useRef<HTMLInputElement>(null);
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      const base = { chatbotId, title: title.trim() };
      if (kind === "text") {
        const content = new TextEncoder().encode(text);
        await accounts.createKnowledgeSource({ ...base, kind: "file", fileName: textFileName(title), content });
      } else if (kind === "file") {
        const f = file.current?.files?.[0];
        if (!f) throw new Error("Choose a file to upload.");
        if (f.size > MAX_FILE_BYTES) throw new Error(`${f.name} is larger than 8 MiB: split it, or add it as pages.`);
        const content = new Uint8Array(await f.arrayBuffer());
        await accounts.createKnowledgeSource({ ...base, kind: "file", fileName: f.name, content });
        if (file.current) file.current.value = "";
      } else if (kind === "page") {
        await accounts.createKnowledgeSource({
          ...base,
          kind: "page",
          url: url.trim(),
          resyncIntervalHours: Number(resync) || 0,
        });
      } else {
        await accounts.createKnowledgeSource({
          ...base,
          kind: "site",
          url: url.trim(),
          maxPages: Number(maxPages) || 0,
          maxDepth: Number(maxDepth) || 0,
          resyncIntervalHours: Number(resync) || 0,
        });
      }
      setTitle("");
      setText("");
      setUrl("");
      onAdded();
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-source">
      <h2 id="new-source">Add a source</h2>
      <Field
        label="What to add"
        id="source-kind"
        hint="Text is kept as Markdown: # headings cut it into passages. A file is at most 8 MiB. A site is read from its sitemap or start page, on its own origin only, honouring robots.txt."
      >
        <select
          id="source-kind"
          aria-describedby="source-kind-hint"
          value={kind}
          onChange={(e) => setKind(e.currentTarget.value as Kind)}
        >
          <option value="text">Text, typed or pasted</option>
          <option value="file">A file: .md, .txt, .html, .pdf, .docx</option>
          <option value="page">One web page</option>
          <option value="site">A whole site</option>
        </select>
      </Field>
      <TextField
        label={kind === "text" ? "Title" : "Title (optional: else the document's own)"}
        id="source-title"
        required={kind === "text"}
        maxLength={256}
        value={title}
        onValue={setTitle}
      />
      {kind === "text" && (
        <TextAreaField label="Text" id="source-text" rows={6} required value={text} onValue={setText} />
      )}
      {kind === "file" && (
        <Field label="File" id="source-file">
          <input
            id="source-file"
            type="file"
            required
            ref={file}
            accept=".md,.markdown,.txt,.html,.htm,.pdf,.docx,text/markdown,text/plain,text/html,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
          />
        </Field>
      )}
      {(kind === "page" || kind === "site") && (
        <TextField
          label={kind === "page" ? "Page address" : "Sitemap or start page address"}
          id="source-url"
          type="url"
          required
          placeholder={kind === "page" ? "https://help.example/returns" : "https://help.example/sitemap.xml"}
          hint="Read through the service's address guard: in production only public addresses."
          value={url}
          onValue={setUrl}
        />
      )}
      {kind === "site" && (
        <div class="inline-form">
          <NumberField
            label="Most pages (1-500)"
            id="source-max-pages"
            min={1}
            max={500}
            value={maxPages}
            onValue={setMaxPages}
          />
          <NumberField
            label="Most links deep (1-5)"
            id="source-max-depth"
            min={1}
            max={5}
            value={maxDepth}
            onValue={setMaxDepth}
          />
        </div>
      )}
      {(kind === "page" || kind === "site") && (
        <Field
          label="Re-sync"
          id="source-resync"
          hint="Fetched again on this schedule; only pages whose content changed are indexed again."
        >
          <select
            id="source-resync"
            aria-describedby="source-resync-hint"
            value={resync}
            onChange={(e) => setResync(e.currentTarget.value)}
          >
            <option value="0">Only when I press Resync</option>
            <option value="6">Every 6 hours</option>
            <option value="24">Every day</option>
            <option value="168">Every week</option>
          </select>
        </Field>
      )}
      <button type="submit" class="button button--primary" disabled={a.busy}>
        Add source
      </button>
      <ActionError error={a.error} />
    </form>
  );
}

/** One try: the question, and what the agent finds for it (SearchKnowledge). */
interface Tried {
  question: string;
  answers: boolean;
  threshold: number;
  passages: KnowledgePassage[];
}

/**
 * Searches the chatbot's knowledge as the agent does (SearchKnowledge: nothing is stored, no conversation is
 * opened): the passages best first with their scores and sources, those the agent would answer from marked, and
 * whether it would answer or say it does not know.
 */
function TryQuestion({ chatbotId }: { chatbotId: string }) {
  const [question, setQuestion] = useState("");
  const [tried, setTried] = useState<Tried | undefined>();
  const a = useAction();
  const ask = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      const r = (await accounts.searchKnowledge({ chatbotId, query: question, limit: 5 })).data;
      setTried({
        question,
        answers: r?.answers ?? false,
        threshold: r?.threshold ?? 0,
        passages: r?.passages ?? [],
      });
    });
  };
  return (
    <form class="card" onSubmit={ask} aria-labelledby="try-question">
      <h2 id="try-question">Try a question</h2>
      <p class="muted">
        Searches the knowledge as the agent does, without a conversation: the passages it finds, best first, with their
        scores and sources. The built-in agent answers from the first when its score reaches the threshold, and says it
        does not know otherwise.
      </p>
      <div class="inline-form">
        <TextField
          label="Question"
          id="try-question-text"
          required
          maxLength={500}
          value={question}
          onValue={setQuestion}
        />
        <button type="submit" class="button button--primary" disabled={a.busy || !question.trim()}>
          Ask
        </button>
      </div>
      <ActionError error={a.error} />
      {tried && (
        <div data-testid="try-answer" aria-live="polite">
          <p data-testid="try-verdict" data-answers={String(tried.answers)}>
            {tried.answers ? (
              <strong>The agent would answer from the first passage.</strong>
            ) : (
              <strong>The agent would say it does not know.</strong>
            )}{" "}
            <span class="muted">(a passage needs a score of {tried.threshold.toFixed(2)})</span>
          </p>
          {tried.passages.length === 0 && <p class="muted">No passage shares a word with the question.</p>}
          <ol class="passages">
            {tried.passages.map((d, i) => (
              <li key={i} data-testid="try-passage" data-above={String(d.score >= tried.threshold)}>
                <p class="passage__source">
                  {d.url ? (
                    <a href={d.url} target="_blank" rel="noopener noreferrer">
                      {d.sourceTitle || d.title}
                    </a>
                  ) : (
                    <span>{d.sourceTitle || d.title}</span>
                  )}
                  {d.headingPath && <span class="muted"> › {d.headingPath}</span>}
                </p>
                <blockquote>{d.excerpt}</blockquote>
                <p class="muted">
                  score {d.score.toFixed(2)}
                  {d.score < tried.threshold && <> · below the threshold</>}
                  {d.knowledgeVersion > 0 && <> · version {d.knowledgeVersion}</>}
                  {d.sourceId ? <> · source {d.sourceId.slice(0, 8)}</> : <> · the chatbot's snippets</>}
                </p>
              </li>
            ))}
          </ol>
        </div>
      )}
    </form>
  );
}
