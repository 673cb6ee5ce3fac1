import { useEffect, useState } from "preact/hooks";
import type { Chatbot, KnowledgeSource } from "../../../../gen/aiagent/v1/account_service_pb.js";
import type {
  AgentDraft,
  CreatedChatbotTool,
  ReplayAnswer,
  ReplayResult,
} from "../../../../gen/aiagent/v1/agent_service_pb.js";
import { accounts, agents, isNotFound } from "../api.js";
import { ActionError, Empty, NumberField, SecretRow, TextAreaField, TextField, useAction } from "../ui.js";
import { ChatbotPage } from "./chatbot-page.js";

/**
 * A draft of the chatbot's agent (instructions, knowledge list, model, tools, knowledge sources), replayed against a test set or the latest
 * real conversations side by side with the live configuration, then published or dropped (admins).
 */
export function ReplayPage({ chatbotId }: { chatbotId: string }) {
  return (
    <ChatbotPage chatbotId={chatbotId} title="Draft and replay" sub="/replay">
      {(bot) => bot && <Replay bot={bot} />}
    </ChatbotPage>
  );
}

function Replay({ bot }: { bot: Chatbot }) {
  const chatbotId = bot.chatbotId;
  const [draft, setDraft] = useState<AgentDraft | null | undefined>();
  const [result, setResult] = useState<ReplayResult | undefined>();
  const [done, setDone] = useState("");
  const [created, setCreated] = useState<CreatedChatbotTool[]>([]);
  const a = useAction();
  useEffect(() => {
    agents.getAgentDraft({ chatbotId }).then(
      (r) => setDraft(r.data ?? null),
      (e: unknown) => setDraft(isNotFound(e) ? null : undefined),
    );
  }, [chatbotId]);
  return (
    <>
      <DraftForm
        bot={bot}
        draft={draft}
        onSaved={(d) => [setDraft(d), setDone("The draft is saved. Customers still get the live agent.")]}
      />
      {draft && (
        <div class="card">
          <h2>Publish or drop</h2>
          <p>
            Publishing makes the draft's instructions, knowledge list, model, tools and knowledge sources live for every
            customer. A tool the draft adds gets its signing secret then, shown once.
          </p>
          <button
            type="button"
            class="button button--primary"
            disabled={a.busy}
            onClick={() =>
              void a.run(async () => {
                const r = await agents.publishAgentDraft({ chatbotId });
                setCreated(r.data?.createdTools ?? []);
                setDraft(null);
                setResult(undefined);
                setDone("The draft is live.");
              })
            }
          >
            Publish draft
          </button>{" "}
          <button
            type="button"
            class="button"
            disabled={a.busy}
            onClick={() =>
              void a.run(async () => {
                await agents.deleteAgentDraft({ chatbotId });
                setDraft(null);
                setResult(undefined);
                setDone("The draft is dropped.");
              })
            }
          >
            Drop draft
          </button>
          <ActionError error={a.error} />
        </div>
      )}
      {done && (
        <p class="state state--ok" role="status">
          {done}
        </p>
      )}
      {created.length > 0 && (
        <div class="card secret" data-testid="created-tools">
          <h2>New tools' signing secrets</h2>
          <p>Shown once: give each to the server behind its tool.</p>
          {created.map((c) => (
            <div key={c.tool?.toolId}>
              <p>{c.tool?.name}</p>
              <SecretRow value={c.secret} testId="tool-secret" copyLabel={`Copy ${c.tool?.name}'s secret`} />
            </div>
          ))}
        </div>
      )}
      {draft && <DraftParts chatbotId={chatbotId} draft={draft} onSaved={setDraft} />}
      {draft && <ReplayForm chatbotId={chatbotId} onResult={setResult} />}
      {result && <ReplayTable result={result} />}
    </>
  );
}

function DraftForm(props: { bot: Chatbot; draft: AgentDraft | null | undefined; onSaved: (d: AgentDraft) => void }) {
  const d = props.draft;
  const [instructions, setInstructions] = useState("");
  const [knowledge, setKnowledge] = useState("");
  const [model, setModel] = useState("");
  const a = useAction();
  useEffect(() => {
    if (d === undefined) return;
    setInstructions(d?.instructions ?? "");
    const list = d ? d.knowledge : props.bot.knowledge;
    setKnowledge(
      JSON.stringify(
        list.map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
        null,
        2,
      ),
    );
    setModel(d?.model ?? "");
  }, [d]);
  const withModel = props.bot.agent?.kind === "openai_compatible";
  const submit = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      let snippets: { title: string; url: string; snippet: string }[];
      try {
        snippets = JSON.parse(knowledge || "[]");
      } catch {
        throw new Error('Knowledge list: not JSON. Write a list of {"title", "url", "snippet"} entries.');
      }
      const r = await agents.putAgentDraft({
        chatbotId: props.bot.chatbotId,
        instructions,
        knowledge: { snippets },
        ...(withModel ? { model } : {}),
      });
      if (r.data) props.onSaved(r.data);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="draft-title">
      <h2 id="draft-title">Draft</h2>
      <p>{d ? "Change the draft, then replay it." : "No draft yet: saving makes one from the live agent."}</p>
      <TextAreaField
        label="Draft instructions"
        id="draft-instructions"
        rows={4}
        maxLength={4000}
        value={instructions}
        onValue={setInstructions}
      />
      <TextAreaField
        label="Draft knowledge list"
        id="draft-knowledge"
        hint='JSON: a list of {"title", "url", "snippet"} entries.'
        rows={8}
        value={knowledge}
        onValue={setKnowledge}
      />
      {withModel && <TextField label="Draft model" id="draft-model" maxLength={200} value={model} onValue={setModel} />}
      <ActionError error={a.error} />
      <button type="submit" class="button button--primary" disabled={a.busy}>
        Save draft
      </button>
    </form>
  );
}

/**
 * The draft's tools (a JSON list, as the knowledge list is written; each entry a tool as declared, with the tool_id of
 * the live tool it keeps or changes) and knowledge sources (which live ones it leaves out; sources added to it only).
 */
function DraftParts(props: { chatbotId: string; draft: AgentDraft; onSaved: (d: AgentDraft) => void }) {
  const d = props.draft;
  const [toolList, setToolList] = useState("");
  const [live, setLive] = useState<KnowledgeSource[]>([]);
  const [title, setTitle] = useState("");
  const [text, setText] = useState("");
  const a = useAction();
  useEffect(() => {
    setToolList(
      JSON.stringify(
        d.tools.map((t) => ({
          tool_id: t.toolId,
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          url: t.url,
          method: t.method,
          timeout_ms: t.timeoutMs,
          requires_approval: t.requiresApproval,
        })),
        null,
        2,
      ),
    );
  }, [d]);
  useEffect(() => {
    accounts.listKnowledgeSources({ chatbotId: props.chatbotId }).then(
      (r) => setLive(r.data?.sources ?? []),
      () => setLive([]),
    );
  }, [props.chatbotId]);
  const leftOut = new Set(d.leftOutSourceIds);
  const put = (change: Parameters<typeof agents.putAgentDraft>[0]) =>
    a.run(async () => {
      const r = await agents.putAgentDraft({ ...change, chatbotId: props.chatbotId });
      if (r.data) props.onSaved(r.data);
    });
  const saveTools = (e: Event) => {
    e.preventDefault();
    let list: Record<string, unknown>[];
    try {
      list = JSON.parse(toolList || "[]");
    } catch {
      void a.run(async () => {
        throw new Error("Tool list: not JSON. Write a list of tools as declared (name, description, url…).");
      });
      return;
    }
    void put({
      tools: {
        tools: list.map((t) => ({
          toolId: String(t.tool_id ?? ""),
          name: String(t.name ?? ""),
          description: String(t.description ?? ""),
          parameters: String(t.parameters ?? ""),
          url: String(t.url ?? ""),
          method: String(t.method ?? ""),
          timeoutMs: Number(t.timeout_ms ?? 0),
          requiresApproval: t.requires_approval === true,
        })),
      },
    });
  };
  const toggle = (sourceId: string, use: boolean) => {
    const next = new Set(leftOut);
    if (use) next.delete(sourceId);
    else next.add(sourceId);
    void put({ sources: { leftOutSourceIds: [...next] } });
  };
  const addSource = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      await agents.addAgentDraftSource({
        chatbotId: props.chatbotId,
        kind: "snippets",
        title,
        snippets: [{ title: title || "Draft snippet", url: "https://draft.invalid/", snippet: text }],
      });
      const r = await agents.getAgentDraft({ chatbotId: props.chatbotId });
      if (r.data) props.onSaved(r.data);
      setTitle("");
      setText("");
    });
  };
  return (
    <section class="card" aria-labelledby="draft-parts">
      <h2 id="draft-parts">Draft tools and knowledge sources</h2>
      <ul data-testid="draft-tools">
        {d.tools.map((t) => (
          <li key={t.name}>
            {t.name} <span class={t.change === "unchanged" ? "badge badge--muted" : "badge"}>{t.change}</span>
          </li>
        ))}
        {d.removedTools.map((t) => (
          <li key={t.toolId}>
            {t.name} <span class="badge">removed</span>
          </li>
        ))}
      </ul>
      <form onSubmit={saveTools}>
        <TextAreaField
          label="Draft tool list"
          id="draft-tools"
          hint="JSON: the tools as declared, each with the tool_id of the live tool it keeps or changes (none: a new tool). A live tool left out is removed."
          rows={8}
          value={toolList}
          onValue={setToolList}
        />
        <button type="submit" class="button" disabled={a.busy}>
          Save draft tools
        </button>
      </form>
      <fieldset>
        <legend>Knowledge sources the draft uses</legend>
        {live.length === 0 && d.draftSources.length === 0 && <Empty>No knowledge sources.</Empty>}
        {live.map((x) => (
          <label key={x.sourceId} class="check">
            <input
              type="checkbox"
              checked={!leftOut.has(x.sourceId)}
              disabled={a.busy}
              onChange={(e) => toggle(x.sourceId, e.currentTarget.checked)}
            />{" "}
            {x.title}
          </label>
        ))}
        {d.draftSources.map((x) => (
          <p key={x.sourceId} data-testid="draft-source">
            {x.title} <span class="badge">draft only · {x.status}</span>{" "}
            <button type="button" class="button" disabled={a.busy} onClick={() => toggle(x.sourceId, false)}>
              Remove {x.title}
            </button>
          </p>
        ))}
      </fieldset>
      <form onSubmit={addSource}>
        <TextField
          label="New draft source: title"
          id="draft-source-title"
          maxLength={256}
          value={title}
          onValue={setTitle}
        />
        <TextAreaField
          label="New draft source: text"
          id="draft-source-text"
          hint="Indexed now, searched only by the replay's draft side until the draft is published."
          rows={3}
          value={text}
          onValue={setText}
        />
        <button type="submit" class="button" disabled={a.busy || text.trim() === ""}>
          Add to the draft
        </button>
      </form>
      <ActionError error={a.error} />
    </section>
  );
}

function ReplayForm(props: { chatbotId: string; onResult: (r: ReplayResult) => void }) {
  const [last, setLast] = useState("20");
  const [cases, setCases] = useState("");
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      const r = await agents.replayAgentDraft({
        chatbotId: props.chatbotId,
        lastConversations: Number(last) || 0,
        cases: cases
          .split("\n")
          .map((l) => l.trim())
          .filter(Boolean)
          .map((l) => {
            const [question = "", facts = ""] = l.split("|");
            return {
              question: question.trim(),
              expectedFacts: facts
                .split(";")
                .map((f) => f.trim())
                .filter(Boolean),
            };
          }),
      });
      if (r.data) props.onResult(r.data);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="replay-title">
      <h2 id="replay-title">Replay</h2>
      <p>
        The live agent and the draft answer the same questions. Nothing reaches a customer, and no tool is called: each
        call either would make is listed as a dry run.
      </p>
      <NumberField
        label="Latest conversations"
        id="replay-last"
        min={0}
        max={50}
        hint="Their last customer question, with the conversation before it (0 to 50)."
        value={last}
        onValue={setLast}
      />
      <TextAreaField
        label="Test set"
        id="replay-cases"
        hint="One question a line; after a |, the facts a good answer has, separated by ;"
        rows={4}
        value={cases}
        onValue={setCases}
      />
      <ActionError error={a.error} />
      <button type="submit" class="button button--primary" disabled={a.busy}>
        {a.busy ? "Replaying…" : "Replay"}
      </button>
    </form>
  );
}

function ReplayTable({ result }: { result: ReplayResult }) {
  const [onlyChanged, setOnlyChanged] = useState(false);
  const items = result.items.filter((i) => !onlyChanged || i.changed);
  return (
    <section class="card" aria-labelledby="replay-result">
      <h2 id="replay-result">
        {result.changed} of {result.items.length} answers change
      </h2>
      <label>
        <input type="checkbox" checked={onlyChanged} onChange={(e) => setOnlyChanged(e.currentTarget.checked)} /> Only
        the answers that change
      </label>
      {items.length === 0 && <Empty>No answer changes.</Empty>}
      <ol class="replay">
        {items.map((i, n) => (
          <li key={`${i.conversationId}-${n}`} class="replay__item" data-testid="replay-item" data-changed={i.changed}>
            <p class="replay__question">
              <strong>{i.question}</strong>{" "}
              {i.changed ? (
                <span class="badge">changed: {i.differences.join(", ")}</span>
              ) : (
                <span class="badge badge--muted">same</span>
              )}
            </p>
            <div class="replay__sides">
              <Side title="Live" a={i.live} />
              <Side title="Draft" a={i.draft} />
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
}

function Side({ title, a }: { title: string; a: ReplayAnswer | undefined }) {
  if (!a) return null;
  let calls: { name: string; status: string }[] = [];
  try {
    calls = a.toolCalls ? JSON.parse(a.toolCalls) : [];
  } catch {
    calls = [];
  }
  return (
    <div class="replay__side" data-side={title.toLowerCase()}>
      <h3>{title}</h3>
      <p class="replay__answer">{a.content}</p>
      {a.documents.length > 0 && (
        <p>
          Cites:{" "}
          {a.documents
            .map((d) => `${d.title || d.url}${d.sourceTitle ? ` (source: ${d.sourceTitle})` : ""}`)
            .join(", ")}
        </p>
      )}
      {calls.length > 0 && <p>Tool calls: {calls.map((c) => `${c.name} (${c.status})`).join(", ")}</p>}
      {a.handover && <p>Hands over: {a.handover}</p>}
      {a.missing.length > 0 && <p class="replay__missing">Missing: {a.missing.join(", ")}</p>}
    </div>
  );
}
