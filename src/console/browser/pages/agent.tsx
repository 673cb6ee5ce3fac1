import { useState } from "preact/hooks";
import type { Chatbot } from "../../../../gen/aiagent/v1/account_service_pb.js";
import type { AgentBehaviour, ChatbotTool } from "../../../../gen/aiagent/v1/agent_service_pb.js";
import { accounts, agents } from "../api.js";
import { DataTable, RowAction } from "../table.js";
import {
  ActionError,
  Empty,
  ErrorNote,
  Field,
  Loading,
  NumberField,
  SecretRow,
  TextAreaField,
  TextField,
  useAction,
  useLoad,
  when,
} from "../ui.js";
import { ChatbotPage } from "./chatbot-page.js";
import { schemaProblem } from "./tool-schema.js";

/** A chatbot's agent (admins): its name, instructions, handover rules, daily budget, and the tools it may call. */
export function AgentPage({ chatbotId }: { chatbotId: string }) {
  return (
    <ChatbotPage chatbotId={chatbotId} title="Agent" sub="/agent">
      {(bot) => bot && <Agent bot={bot} />}
    </ChatbotPage>
  );
}

function Agent({ bot }: { bot: Chatbot }) {
  const chatbotId = bot.chatbotId;
  const [settings, reload] = useLoad(async () => (await agents.getAgentSettings({ chatbotId })).data, [chatbotId]);
  return (
    <>
      {settings.state === "loading" && <Loading what="the agent's settings" />}
      {settings.state === "error" && <ErrorNote error={settings.error} onRetry={reload} />}
      {settings.state === "ok" && settings.data && <Behaviour bot={bot} settings={settings.data} />}
      <Tools chatbotId={chatbotId} />
    </>
  );
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

function Behaviour({ bot, settings }: { bot: Chatbot; settings: AgentBehaviour }) {
  const [agentName, setAgentName] = useState(bot.appearance?.agentName ?? "");
  const [instructions, setInstructions] = useState(settings.instructions);
  const [phrases, setPhrases] = useState(settings.handoverPhrases.join("\n"));
  const [dontKnow, setDontKnow] = useState(String(settings.dontKnowLimit));
  const [budget, setBudget] = useState(String(settings.dailyTokenBudget));
  const [used, setUsed] = useState(settings.tokensUsedToday);
  const [saved, setSaved] = useState(false);
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void a.run(async () => {
      const r = await agents.updateAgentSettings({
        chatbotId: bot.chatbotId,
        instructions,
        handoverPhrases: { phrases: lines(phrases) },
        dontKnowLimit: Number(dontKnow),
        dailyTokenBudget: Number(budget),
      });
      if ((bot.appearance?.agentName ?? "") !== agentName)
        await accounts.updateChatbot({ chatbotId: bot.chatbotId, appearance: { agentName } });
      if (r.data) setUsed(r.data.tokensUsedToday);
      setSaved(true);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="agent-behaviour">
      <h2 id="agent-behaviour">What the agent is told</h2>
      <TextField
        label="Agent name"
        id="agent-name"
        maxLength={80}
        hint={`The name the agent gives itself and the chat shows; empty: the chatbot's name (${bot.name}).`}
        value={agentName}
        onValue={setAgentName}
      />
      <TextAreaField
        label="Instructions"
        id="agent-instructions"
        hint="Tone, what to say and what never to say: sent to the model with every question (at most 4000 characters)."
        rows={5}
        maxLength={4000}
        value={instructions}
        onValue={setInstructions}
      />
      <fieldset>
        <legend>Handover to the team</legend>
        <TextAreaField
          label="Handover phrases"
          id="agent-phrases"
          hint="One per line: a customer's message containing one goes to the team (beside asking for a person, which always does)."
          rows={3}
          value={phrases}
          onValue={setPhrases}
        />
        <NumberField
          label={`"I don't know" answers in a row before handing over`}
          id="agent-dont-know"
          min={0}
          max={20}
          hint="0 to 20; 0: never."
          value={dontKnow}
          onValue={setDontKnow}
        />
        <NumberField
          label="Daily token budget"
          id="agent-budget"
          min={0}
          hint={`Model tokens a day (UTC); once used, conversations go to the team. 0: the service's default. Used today: ${used}.`}
          value={budget}
          onValue={setBudget}
        />
      </fieldset>
      <ActionError error={a.error} />
      {saved && (
        <p class="state state--ok" role="status">
          Saved.
        </p>
      )}
      <button type="submit" class="button button--primary" disabled={a.busy}>
        Save the agent's settings
      </button>
    </form>
  );
}

/** A secret just made (a new tool, a rotation): shown until dismissed or the page is left, never again. */
type Shown = { name: string; secret: string };

function Tools({ chatbotId }: { chatbotId: string }) {
  const [list, reload] = useLoad(
    async () => (await agents.listChatbotTools({ chatbotId })).data?.tools ?? [],
    [chatbotId],
  );
  const [shown, setShown] = useState<Shown | undefined>();
  const [editing, setEditing] = useState<ChatbotTool | undefined>();
  const a = useAction();
  const rotate = (t: ChatbotTool) =>
    void a.run(async () => {
      if (!confirm(`Rotate the secret of ${t.name}? Calls are signed with the new one at once.`)) return;
      const r = await agents.updateChatbotTool({ chatbotId, toolId: t.toolId, rotateSecret: true });
      if (r.data) setShown({ name: t.name, secret: r.data.secret });
    });
  const remove = (t: ChatbotTool) =>
    void a.run(async () => {
      if (!confirm(`Delete the tool ${t.name}? The agent no longer sees it.`)) return;
      await agents.deleteChatbotTool({ chatbotId, toolId: t.toolId });
      if (editing?.toolId === t.toolId) setEditing(undefined);
      reload();
    });
  return (
    <>
      <h2>Tools</h2>
      <p class="muted">
        Calls the agent may make to your own servers while it answers (a model is needed: the built-in agent calls
        none). Each call is signed with the tool's secret, the Standard Webhooks way.
      </p>
      {shown && (
        <section class="secret" aria-label="Signing secret" data-testid="tool-secret">
          <p>
            The signing secret of the tool {shown.name}. Copy it now into your tool server's settings: it is shown this
            once and cannot be read again.
          </p>
          <SecretRow value={shown.secret} testId="tool-secret-value" copyLabel="Copy the secret">
            <button type="button" class="button button--quiet" onClick={() => setShown(undefined)}>
              Done
            </button>
          </SecretRow>
        </section>
      )}
      <ActionError error={a.error} />
      {list.state === "loading" && <Loading what="the tools" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && <Empty>No tools yet: add one below.</Empty>}
      {list.state === "ok" && list.data.length > 0 && (
        <DataTable caption="Tools" columns={["Name", "What it does", "Where", "Approval"]} actions testId="tools">
          {list.data.map((t) => (
            <tr key={t.toolId} data-testid="tool">
              <td data-label="Name">
                <code>{t.name}</code>
              </td>
              <td data-label="What it does">{t.description}</td>
              <td data-label="Where">
                <div>
                  <span class="source__where">
                    {t.method} {t.url}
                  </span>
                  <span class="muted">
                    within {t.timeoutMs / 1000} s · added {when(t.createdAt)}
                  </span>
                </div>
              </td>
              <td data-label="Approval">{t.requiresApproval ? "a person approves each call" : "none"}</td>
              <td class="row-actions">
                <button type="button" class="button" aria-label={`Edit ${t.name}`} onClick={() => setEditing(t)}>
                  Edit
                </button>
                <button
                  type="button"
                  class="button"
                  disabled={a.busy}
                  aria-label={`Rotate the secret of ${t.name}`}
                  onClick={() => rotate(t)}
                >
                  Rotate secret
                </button>
                <RowAction label={`Delete ${t.name}`} busy={a.busy} onClick={() => remove(t)}>
                  Delete
                </RowAction>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ToolForm
        key={editing?.toolId ?? "new"}
        chatbotId={chatbotId}
        tool={editing}
        onDone={(secret, name) => {
          if (secret) setShown({ name, secret });
          setEditing(undefined);
          reload();
        }}
        onCancel={() => setEditing(undefined)}
      />
    </>
  );
}

const EXAMPLE_SCHEMA = `{
  "type": "object",
  "properties": { "order_id": { "type": "string", "description": "The order's number" } },
  "required": ["order_id"]
}`;

function ToolForm(props: {
  chatbotId: string;
  tool: ChatbotTool | undefined;
  onDone: (secret: string, name: string) => void;
  onCancel: () => void;
}) {
  const t = props.tool;
  const [name, setName] = useState(t?.name ?? "");
  const [description, setDescription] = useState(t?.description ?? "");
  const [url, setUrl] = useState(t?.url ?? "");
  const [method, setMethod] = useState(t?.method || "POST");
  const [timeout, setTimeoutMs] = useState(String(t?.timeoutMs || 10000));
  const [approval, setApproval] = useState(t?.requiresApproval ?? false);
  const [parameters, setParameters] = useState(t?.parameters ?? "");
  const [problem, setProblem] = useState("");
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    // The schema is checked here first, so a mistake is told beside its field and nothing is sent.
    const p = schemaProblem(parameters);
    setProblem(p);
    if (p) {
      document.getElementById("tool-parameters")?.focus();
      return;
    }
    void a.run(async () => {
      const fields = {
        chatbotId: props.chatbotId,
        name: name.trim(),
        description,
        parameters: parameters.trim(),
        url: url.trim(),
        method,
        timeoutMs: Number(timeout) || 0,
        requiresApproval: approval,
      };
      const r = t
        ? await agents.updateChatbotTool({ ...fields, toolId: t.toolId })
        : await agents.createChatbotTool(fields);
      props.onDone(r.data?.secret ?? "", fields.name);
    });
  };
  const heading = t ? `Edit the tool ${t.name}` : "Add a tool";
  return (
    <form class="card" onSubmit={submit} aria-labelledby="tool-form" data-testid="tool-form">
      <h2 id="tool-form">{heading}</h2>
      <TextField
        label="Name"
        id="tool-name"
        required
        maxLength={64}
        pattern="[A-Za-z0-9_\-]{1,64}"
        hint="What the model calls it by: letters, digits, _ or - (not handover or search_knowledge)."
        value={name}
        onValue={setName}
      />
      <TextAreaField
        label="What it does and when to use it"
        id="tool-description"
        rows={2}
        required
        maxLength={1024}
        value={description}
        onValue={setDescription}
      />
      <TextField
        label="URL"
        id="tool-url"
        type="url"
        required
        maxLength={2048}
        hint="https on your server (plain http on loopback outside production only)."
        value={url}
        onValue={setUrl}
      />
      <div class="inline-form">
        <Field label="Method" id="tool-method">
          <select id="tool-method" value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
            <option value="POST">POST (the call is a JSON body)</option>
            <option value="GET">GET (the call is in the query string)</option>
          </select>
        </Field>
        <NumberField
          label="Time limit (ms)"
          id="tool-timeout"
          min={100}
          max={30000}
          value={timeout}
          onValue={setTimeoutMs}
        />
      </div>
      <p class="field">
        <label class="check">
          <input type="checkbox" checked={approval} onChange={(e) => setApproval(e.currentTarget.checked)} />A person of
          the team approves each call first
        </label>
      </p>
      <div class="field">
        <label for="tool-parameters">Parameters (JSON Schema)</label>
        <textarea
          id="tool-parameters"
          class="code"
          rows={6}
          maxLength={16384}
          spellcheck={false}
          placeholder={EXAMPLE_SCHEMA}
          aria-describedby="tool-parameters-hint"
          aria-invalid={problem ? true : undefined}
          aria-errormessage={problem ? "tool-parameters-error" : undefined}
          value={parameters}
          onInput={(e) => setParameters(e.currentTarget.value)}
        />
        <p class="field__hint" id="tool-parameters-hint">
          An object schema, as the placeholder shows; empty: the tool takes no arguments.
        </p>
        {problem && (
          <p class="state state--error" role="alert" id="tool-parameters-error" data-testid="tool-schema-error">
            {problem}
          </p>
        )}
      </div>
      <ActionError error={a.error} />
      <p class="actions">
        <button type="submit" class="button button--primary" disabled={a.busy}>
          {t ? "Save the tool" : "Add the tool"}
        </button>
        {t && (
          <button type="button" class="button button--quiet" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </p>
    </form>
  );
}
