import { useState } from "preact/hooks";
import type { Chatbot } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts, consoleSession } from "../api.js";
import { navigate } from "../router.js";
import { CopyButton, Empty, ErrorNote, Field, Link, Loading, PageTitle, useAction, useLoad, when } from "../ui.js";
import { ChatbotPagesNav } from "./chatbot-page.js";

/** The account's chatbots. */
export function ChatbotList() {
  const [list, reload] = useLoad(async () => (await accounts.listChatbots({})).data?.chatbots ?? []);
  return (
    <section>
      <div class="page-head">
        <PageTitle>Chatbots</PageTitle>
        <Link href="/chatbots/new" class="button button--primary">
          New chatbot
        </Link>
      </div>
      {list.state === "loading" && <Loading what="the chatbots" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && (
        <Empty>
          <p>No chatbots yet.</p>
          <Link href="/chatbots/new" class="button button--primary">
            Create your first chatbot
          </Link>
        </Empty>
      )}
      {list.state === "ok" && list.data.length > 0 && (
        <ul class="cards">
          {list.data.map((c) => (
            <li key={c.chatbotId} class="card">
              <h2>{c.name}</h2>
              <p>
                <span class={`badge badge--${c.active ? "active" : "revoked"}`}>
                  {c.active ? "active" : "disabled"}
                </span>{" "}
                <span class="muted">
                  {c.agent?.kind === "openai_compatible" ? "OpenAI-compatible agent" : "built-in agent"} ·{" "}
                  {c.knowledge.length} knowledge snippets · made {when(c.createdAt)}
                </span>
              </p>
              <p class="muted">Allowed origins: {c.allowedOrigins.join(", ")}</p>
              <p class="actions">
                <Link href={`/chatbots/${c.chatbotId}`} class="button">
                  Edit <span class="sr-only">{c.name}</span>
                </Link>
                <Link href={`/chatbots/${c.chatbotId}/embed`} class="button">
                  Embed <span class="sr-only">{c.name}</span>
                </Link>
                <Link href={`/chatbots/${c.chatbotId}/knowledge`} class="button">
                  Knowledge <span class="sr-only">of {c.name}</span>
                </Link>
                <Link href={`/chatbots/${c.chatbotId}/agent`} class="button">
                  Agent <span class="sr-only">of {c.name}</span>
                </Link>
                <Link href={`/chatbots/${c.chatbotId}/appearance`} class="button">
                  Appearance <span class="sr-only">of {c.name}</span>
                </Link>
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

interface Snippet {
  title: string;
  url: string;
  snippet: string;
}

/** Creates a chatbot (no id) or edits one: name, allowed origins, knowledge, the agent that answers. */
export function ChatbotEdit({ chatbotId }: { chatbotId?: string }) {
  const [loaded, reload] = useLoad(
    async () => (chatbotId ? (await accounts.getChatbot({ chatbotId })).data : undefined),
    [chatbotId],
  );
  if (loaded.state === "loading") return <Loading what="the chatbot" />;
  if (loaded.state === "error") return <ErrorNote error={loaded.error} onRetry={reload} />;
  return <ChatbotForm key={chatbotId ?? "new"} chatbot={loaded.data} />;
}

function ChatbotForm({ chatbot }: { chatbot: Chatbot | undefined }) {
  const [name, setName] = useState(chatbot?.name ?? "");
  const [origins, setOrigins] = useState((chatbot?.allowedOrigins ?? []).join("\n"));
  const [knowledge, setKnowledge] = useState<Snippet[]>(
    (chatbot?.knowledge ?? []).map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
  );
  // "": the service's default agent (a chatbot that never chose one).
  const [kind, setKind] = useState(
    !chatbot || chatbot.agent?.followsServiceDefault ? "" : chatbot.agent?.kind || "built_in",
  );
  const [baseUrl, setBaseUrl] = useState(chatbot?.agent?.baseUrl ?? "");
  const [model, setModel] = useState(chatbot?.agent?.model ?? "");
  const [apiKey, setApiKey] = useState("");
  const [sla, setSla] = useState(String(chatbot?.firstResponseSlaMinutes ?? 0));
  const [saved, setSaved] = useState(false);
  const a = useAction();
  const set = (i: number, k: keyof Snippet, v: string) =>
    setKnowledge(knowledge.map((s, j) => (j === i ? { ...s, [k]: v } : s)));
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void a.run(async () => {
      const allowedOrigins = origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean);
      const agent = kind === "openai_compatible" ? { kind, baseUrl, model, apiKey } : { kind, baseUrl: "", model: "" };
      if (!chatbot) {
        const r = await accounts.createChatbot({
          name,
          allowedOrigins,
          knowledge,
          agent,
          firstResponseSlaMinutes: Number(sla) || 0,
        });
        navigate(`/chatbots/${r.data!.chatbotId}/embed`);
        return;
      }
      await accounts.updateChatbot({
        chatbotId: chatbot.chatbotId,
        name,
        allowedOrigins,
        knowledge: { snippets: knowledge },
        agent,
        firstResponseSlaMinutes: Number(sla) || 0,
      });
      setApiKey("");
      setSaved(true);
    });
  };
  const disable = () =>
    void a.run(async () => {
      if (!chatbot || !confirm(`Disable ${chatbot.name}? Its frame stops working at once.`)) return;
      await accounts.disableChatbot({ chatbotId: chatbot.chatbotId });
      navigate("/chatbots");
    });
  return (
    <section>
      <PageTitle>{chatbot ? `Edit ${chatbot.name}` : "New chatbot"}</PageTitle>
      {chatbot && <ChatbotPagesNav chatbotId={chatbot.chatbotId} current="" />}
      <form class="card" onSubmit={submit}>
        <Field
          label="Name"
          id="bot-name"
          hint="How the console and reports name this chatbot; the chat's header shows the appearance's agent name when one is set."
        >
          <input
            id="bot-name"
            required
            maxLength={100}
            aria-describedby="bot-name-hint"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field
          label="Allowed origins"
          id="bot-origins"
          hint="One per line, e.g. https://shop.example: the sites that may embed the chat."
        >
          <textarea
            id="bot-origins"
            rows={3}
            required
            aria-describedby="bot-origins-hint"
            value={origins}
            onInput={(e) => setOrigins(e.currentTarget.value)}
          />
        </Field>
        <Field
          label="First-response SLA (minutes)"
          id="bot-sla"
          hint="A conversation that goes to the team must get a person's reply within this; 0 for none. The inbox shows the time left."
        >
          <input
            id="bot-sla"
            type="number"
            min={0}
            max={10080}
            step={1}
            aria-describedby="bot-sla-hint"
            value={sla}
            onInput={(e) => setSla(e.currentTarget.value)}
          />
        </Field>
        <fieldset>
          <legend>Agent</legend>
          <Field label="Who answers" id="bot-kind">
            <select id="bot-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
              <option value="">The service's default agent (its model when it has one, else the built-in agent)</option>
              <option value="built_in">Built-in agent (answers from the knowledge below)</option>
              <option value="openai_compatible">OpenAI-compatible endpoint</option>
            </select>
          </Field>
          {kind === "openai_compatible" && (
            <>
              <Field label="Endpoint base URL" id="bot-base-url">
                <input
                  id="bot-base-url"
                  type="url"
                  required
                  placeholder="https://api.openai.com/v1"
                  value={baseUrl}
                  onInput={(e) => setBaseUrl(e.currentTarget.value)}
                />
              </Field>
              <Field label="Model" id="bot-model">
                <input id="bot-model" required value={model} onInput={(e) => setModel(e.currentTarget.value)} />
              </Field>
              <Field
                label="Endpoint API key"
                id="bot-agent-key"
                hint={
                  chatbot?.agent?.hasApiKey
                    ? "A key is stored; leave empty to keep it."
                    : "Stored encrypted, never shown again."
                }
              >
                <input
                  id="bot-agent-key"
                  type="password"
                  autocomplete="off"
                  aria-describedby="bot-agent-key-hint"
                  value={apiKey}
                  onInput={(e) => setApiKey(e.currentTarget.value)}
                />
              </Field>
            </>
          )}
        </fieldset>
        <fieldset>
          <legend>Knowledge</legend>
          {knowledge.length === 0 && <p class="muted">No snippets: the built-in agent can only greet and hand over.</p>}
          {knowledge.map((s, i) => (
            <div class="snippet" key={i}>
              <Field label={`Snippet ${i + 1} title`} id={`k-title-${i}`}>
                <input
                  id={`k-title-${i}`}
                  required
                  value={s.title}
                  onInput={(e) => set(i, "title", e.currentTarget.value)}
                />
              </Field>
              <Field label={`Snippet ${i + 1} link`} id={`k-url-${i}`}>
                <input
                  id={`k-url-${i}`}
                  type="url"
                  value={s.url}
                  onInput={(e) => set(i, "url", e.currentTarget.value)}
                />
              </Field>
              <Field label={`Snippet ${i + 1} text`} id={`k-text-${i}`}>
                <textarea
                  id={`k-text-${i}`}
                  rows={2}
                  required
                  value={s.snippet}
                  onInput={(e) => set(i, "snippet", e.currentTarget.value)}
                />
              </Field>
              <button
                type="button"
                class="button button--quiet"
                onClick={() => setKnowledge(knowledge.filter((_, j) => j !== i))}
              >
                Remove snippet {i + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            class="button"
            onClick={() => setKnowledge([...knowledge, { title: "", url: "", snippet: "" }])}
          >
            Add a snippet
          </button>
        </fieldset>
        {a.error !== undefined && <ErrorNote error={a.error} />}
        {saved && (
          <p class="state state--ok" role="status">
            Saved.
          </p>
        )}
        <p class="actions">
          <button type="submit" class="button button--primary" disabled={a.busy}>
            {chatbot ? "Save changes" : "Create chatbot"}
          </button>
          {chatbot?.active && (
            <button type="button" class="button button--danger" disabled={a.busy} onClick={disable}>
              Disable chatbot
            </button>
          )}
        </p>
      </form>
    </section>
  );
}

/** The code that embeds this chatbot: the example server's settings and the host page, filled in. */
export function ChatbotEmbed({ chatbotId }: { chatbotId: string }) {
  const [loaded, reload] = useLoad(async () => (await accounts.getChatbot({ chatbotId })).data, [chatbotId]);
  if (loaded.state === "loading") return <Loading what="the chatbot" />;
  if (loaded.state === "error") return <ErrorNote error={loaded.error} onRetry={reload} />;
  const c = loaded.data!;
  const service = location.origin;
  const hostOrigin = c.allowedOrigins[0] ?? "https://shop.example";
  const port = /:(\d+)$/.exec(hostOrigin)?.[1] ?? "3000";
  const server = [
    `export AIAGENT_URL=${service} AIAGENT_APP_URL=${service}`,
    `export AIAGENT_CHATBOT_ID=${c.chatbotId}`,
    "export AIAGENT_CLIENT_API_KEY=cak_…   # a key from Profile → API keys",
    `PORT=${port} node --conditions=source --import tsx examples/embed/server.ts   # or: python3 examples/embed/server.py`,
  ].join("\n");
  const page = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>Example Shop</title>
<h1>Example Shop</h1>
<div id="chat" style="width: 380px; height: 560px"></div>
<script src="${service}/embed/v1.js"></script>
<script type="module">
  // Your server's two routes; the custom header keeps other sites from calling them (no CORS preflight is granted).
  const post = (path) =>
    fetch(path, { method: "POST", headers: { "x-requested-with": "aiagent-host" } }).then((r) => (r.ok ? r.json() : null));
  const { frame_url } = await post("/aiagent/session");
  AiAgent.mount(document.getElementById("chat"), { frameUrl: frame_url, refresh: () => post("/aiagent/refresh") });
</script>
</html>`;
  // With several allowed origins the frame must be told which page embeds it (the example server sends the page's
  // Origin by itself; by hand it is host_origin in the frame's address).
  const several = c.allowedOrigins.length > 1;
  const token = `curl -s ${service}/ai_agent/get_access_token -H 'content-type: application/json' \\
  -d '{"user_id":"customer-42","chatbot_id":"${c.chatbotId}","client_api_key":"'$KEY'","contact":{"contact_name":"Ada Lovelace","email":"ada@example.com"}}'
# then the frame's address: ${service}/chatbot-iframe/${c.chatbotId}?user_id=customer-42&access_token=<access_token>${
    several ? `&host_origin=${encodeURIComponent(hostOrigin)}` : ""
  }`;
  return (
    <section>
      <PageTitle>Embed {c.name}</PageTitle>
      <p>
        Three pieces: your server keeps the API key and gets tokens, your page shows the frame, the frame chats. The
        example server in <code>examples/embed/</code> does the server's part; run it with these settings.
      </p>
      <dl class="facts">
        <dt>Chatbot id</dt>
        <dd>
          <code data-testid="chatbot-id">{c.chatbotId}</code> <CopyButton text={c.chatbotId} label="Copy id" />
        </dd>
        <dt>Allowed origins</dt>
        <dd>{c.allowedOrigins.join(", ")}</dd>
      </dl>
      {several && (
        <p>
          This chatbot allows several origins: the example server passes the page's own origin (the browser's{" "}
          <code>Origin</code> header) with each session, so the frame works on each of them.
        </p>
      )}
      <Snippet title="Your server" code={server} copy="Copy the server's settings" />
      <Snippet title="Your page (page.html)" code={page} copy="Copy the page" />
      <Snippet title="Or by hand: an access token for one customer" code={token} copy="Copy the curl command" />
      <div class="card">
        <h2>Live preview</h2>
        <p class="muted">
          The chat as your customers will see it, answering with this chatbot's current settings. You chat as "Console
          preview", who shows in the inbox like a customer.
        </p>
        <Preview chatbotId={c.chatbotId} name={c.name} />
      </div>
    </section>
  );
}

/** The chat frame with a preview user's access token, which an admin's OpenPreview call issues. */
function Preview({ chatbotId, name }: { chatbotId: string; name: string }) {
  const [preview, reload] = useLoad(
    async () => (await consoleSession.openPreview({ chatbotId })).data?.framePath ?? "",
    [chatbotId],
  );
  if (preview.state === "loading") return <Loading what="the preview" />;
  if (preview.state === "error") return <ErrorNote error={preview.error} onRetry={reload} />;
  return <iframe class="preview" title={`Live preview of ${name}`} src={preview.data} />;
}

function Snippet({ title, code, copy }: { title: string; code: string; copy: string }) {
  const id = title.replace(/\W+/g, "-").toLowerCase();
  return (
    <div class="card">
      <div class="page-head">
        <h2 id={id}>{title}</h2>
        <CopyButton text={code} label={copy} />
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable code block must be reachable by keyboard */}
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </div>
  );
}
