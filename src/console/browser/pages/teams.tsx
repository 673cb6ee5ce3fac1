import { useState } from "preact/hooks";
import type { Chatbot, Member, Team } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts } from "../api.js";
import {
  ActionError,
  Empty,
  ErrorNote,
  Field,
  Loading,
  NumberField,
  PageTitle,
  TextField,
  useAction,
  useLoad,
} from "../ui.js";
import { TeamTabs } from "./team.js";

/** How a team's new conversations are assigned, as the service names it and as a person reads it. */
const ASSIGNMENTS: readonly [string, string][] = [
  ["off", "Off (they wait in Unassigned)"],
  ["round_robin", "Round robin (next in turn)"],
  ["balanced", "Balanced (fewest open)"],
];

type Everything = { teams: Team[]; members: Member[]; chatbots: Chatbot[] };

/**
 * The account's teams (admins): each is given some chatbots, whose conversations its members see and may be
 * assigned automatically (round robin or balanced, with a capacity per member). Operators see the chatbots of their
 * teams and those given to no team.
 */
export function TeamsPage() {
  const [all, reload] = useLoad<Everything>(async () => {
    const [t, m, c] = await Promise.all([accounts.listTeams({}), accounts.listMembers({}), accounts.listChatbots({})]);
    return { teams: t.data?.teams ?? [], members: m.data?.members ?? [], chatbots: c.data?.chatbots ?? [] };
  });
  return (
    <section>
      <PageTitle>Teams</PageTitle>
      <TeamTabs current="teams" />
      <p class="muted">
        A team is given chatbots: its members see their conversations, and new ones can be assigned to its online
        members automatically. A chatbot given to no team is seen by every operator; admins see everything.
      </p>
      <NewTeam onCreated={reload} />
      {all.state === "loading" && <Loading what="the teams" />}
      {all.state === "error" && <ErrorNote error={all.error} onRetry={reload} />}
      {all.state === "ok" && all.data.teams.length === 0 && (
        <Empty>No teams yet: every operator sees every chatbot's conversations. Add a team above.</Empty>
      )}
      {all.state === "ok" &&
        all.data.teams.map((t) => <TeamCard key={t.teamId} team={t} all={all.data} onChanged={reload} />)}
    </section>
  );
}

function NewTeam({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      await accounts.createTeam({ name: name.trim() });
      setName("");
      onCreated();
    });
  };
  return (
    <form class="card inline-form" onSubmit={submit} aria-label="New team">
      <TextField label="New team's name" id="team-new-name" required maxLength={60} value={name} onValue={setName} />
      <button type="submit" class="button button--primary" disabled={a.busy || name.trim() === ""}>
        Add team
      </button>
      <ActionError error={a.error} />
    </form>
  );
}

/** Which of `ids` changed from `was`, as sets. */
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

function TeamCard({ team, all, onChanged }: { team: Team; all: Everything; onChanged: () => void }) {
  const [name, setName] = useState(team.name);
  const [assignment, setAssignment] = useState(team.assignment || "off");
  const [capacity, setCapacity] = useState(String(team.capacity));
  const [members, setMembers] = useState<string[]>(team.memberIds);
  const [chatbots, setChatbots] = useState<string[]>(team.chatbotIds);
  const [saved, setSaved] = useState(false);
  const a = useAction();
  const id = `team-${team.teamId}`;
  // A chatbot given to another team: choosing it here is refused by the service, so it says whose it is.
  const owner = new Map<string, string>();
  for (const t of all.teams) if (t.teamId !== team.teamId) for (const c of t.chatbotIds) owner.set(c, t.name);
  const toggle = (list: string[], set: (v: string[]) => void, v: string, on: boolean) =>
    set(on ? [...list, v] : list.filter((x) => x !== v));
  const save = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void a.run(async () => {
      const cap = Number(capacity);
      if (!Number.isInteger(cap) || cap < 0 || cap > 1000)
        throw new Error("Capacity: a whole number from 0 (no limit) to 1000.");
      if (name.trim() === "") throw new Error("Name: the team needs a name.");
      if (name.trim() !== team.name || assignment !== (team.assignment || "off") || cap !== team.capacity)
        await accounts.updateTeam({ teamId: team.teamId, name: name.trim(), assignment, capacity: cap });
      if (!same(members, team.memberIds)) await accounts.setTeamMembers({ teamId: team.teamId, memberIds: members });
      if (!same(chatbots, team.chatbotIds))
        await accounts.setTeamChatbots({ teamId: team.teamId, chatbotIds: chatbots });
      setSaved(true);
      onChanged();
    });
  };
  const remove = () =>
    void a.run(async () => {
      if (!confirm(`Delete the team ${team.name}? Its chatbots will be seen by every operator.`)) return;
      await accounts.deleteTeam({ teamId: team.teamId });
      onChanged();
    });
  return (
    <form class="card team" data-testid="team" aria-labelledby={`${id}-title`} onSubmit={save}>
      <h2 id={`${id}-title`}>{team.name}</h2>
      <div class="inline-form">
        <TextField label="Name" id={`${id}-name`} required maxLength={60} value={name} onValue={setName} />
        <Field label="Assignment" id={`${id}-assignment`}>
          <select id={`${id}-assignment`} value={assignment} onChange={(e) => setAssignment(e.currentTarget.value)}>
            {ASSIGNMENTS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <NumberField
          label="Capacity per member"
          id={`${id}-capacity`}
          min={0}
          max={1000}
          hint="Open conversations at most before auto-assignment passes a member by; 0: no limit."
          value={capacity}
          onValue={setCapacity}
        />
      </div>
      <div class="team__lists">
        <fieldset>
          <legend>Members</legend>
          {all.members.length === 0 && <p class="muted">The account has no people yet.</p>}
          {all.members.map((m) => (
            <label key={m.memberId}>
              <input
                type="checkbox"
                checked={members.includes(m.memberId)}
                onChange={(e) => toggle(members, setMembers, m.memberId, e.currentTarget.checked)}
              />
              {m.email} <span class="muted">({m.role})</span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Chatbots</legend>
          {all.chatbots.length === 0 && <p class="muted">The account has no chatbots yet.</p>}
          {all.chatbots.map((c) => (
            <label key={c.chatbotId}>
              <input
                type="checkbox"
                checked={chatbots.includes(c.chatbotId)}
                disabled={owner.has(c.chatbotId) && !chatbots.includes(c.chatbotId)}
                onChange={(e) => toggle(chatbots, setChatbots, c.chatbotId, e.currentTarget.checked)}
              />
              {c.name}
              {owner.has(c.chatbotId) && <span class="muted"> (given to {owner.get(c.chatbotId)})</span>}
            </label>
          ))}
        </fieldset>
      </div>
      <div class="actions">
        <button type="submit" class="button button--primary" disabled={a.busy}>
          Save {team.name}
        </button>
        <button type="button" class="button button--danger" disabled={a.busy} onClick={remove}>
          Delete {team.name}
        </button>
        {saved && (
          <span class="state state--ok" role="status">
            Saved.
          </span>
        )}
      </div>
      <ActionError error={a.error} />
    </form>
  );
}
