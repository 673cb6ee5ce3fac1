import { useContext, useEffect, useState } from "preact/hooks";
import type { AccountInfo } from "../../../gen/aiagent/v1/account_service_pb.js";
import { accounts, isSignedOut, SIGNED_OUT_EVENT, signOut } from "./api.js";
import { AgentPage } from "./pages/agent.js";
import { ChatbotAppearancePage } from "./pages/appearance.js";
import { AuditLog } from "./pages/audit.js";
import { AvailabilityToggle } from "./pages/availability.js";
import { ChatbotEdit, ChatbotEmbed, ChatbotList } from "./pages/chatbots.js";
import { Inbox } from "./pages/inbox.js";
import { AcceptInvitation } from "./pages/invitation.js";
import { KnowledgePage } from "./pages/knowledge.js";
import { MailPage } from "./pages/mail.js";
import { MENTIONS_CHANGED, MentionsPage } from "./pages/mentions.js";
import { Profile } from "./pages/profile.js";
import { ReplayPage } from "./pages/replay.js";
import { ReportsPage } from "./pages/reports.js";
import { SavedRepliesPage } from "./pages/saved-replies.js";
import { SignIn } from "./pages/sign-in.js";
import { Team } from "./pages/team.js";
import { TeamsPage } from "./pages/teams.js";
import { Webhooks } from "./pages/webhooks.js";
import { navigate, usePath } from "./router.js";
import { type Session, SessionContext } from "./session.js";
import { ErrorNote, Link, Loading, PageTitle } from "./ui.js";

type Boot =
  | { state: "loading" }
  | { state: "out" }
  | { state: "error"; error: unknown }
  | { state: "in"; account: AccountInfo };

/** The console: the sign-in page until GetAccount answers through the session cookie, then the pages by path. */
export function App() {
  const path = usePath();
  const [boot, setBoot] = useState<Boot>({ state: "loading" });
  const load = () => {
    setBoot({ state: "loading" });
    accounts.getAccount({}).then(
      (r) => setBoot(r.data ? { state: "in", account: r.data } : { state: "out" }),
      (e: unknown) => setBoot(isSignedOut(e) ? { state: "out" } : { state: "error", error: e }),
    );
  };
  useEffect(load, []);
  useEffect(() => {
    const out = () => setBoot({ state: "out" });
    addEventListener(SIGNED_OUT_EVENT, out);
    return () => removeEventListener(SIGNED_OUT_EVENT, out);
  }, []);

  if (path === "/invitation")
    return (
      <AcceptInvitation
        onSignedIn={() => {
          navigate("/inbox", true);
          load();
        }}
      />
    );
  if (boot.state === "loading")
    return (
      <main class="center">
        <Loading what="the console" />
      </main>
    );
  if (boot.state === "error")
    return (
      <main class="center">
        <ErrorNote error={boot.error} onRetry={load} />
      </main>
    );
  if (boot.state === "out") return <SignIn onSignedIn={load} />;
  const session: Session = {
    account: boot.account,
    admin: boot.account.callerRole === "admin",
    end: () => setBoot({ state: "out" }),
    update: (account) => setBoot({ state: "in", account }),
  };
  return (
    <SessionContext.Provider value={session}>
      <Layout path={path} />
    </SessionContext.Provider>
  );
}

const ADMIN_PAGES = ["/chatbots", "/profile", "/team", "/teams", "/audit", "/webhooks", "/reports", "/mail"];

function Layout({ path }: { path: string }) {
  const s = useContext(SessionContext)!;
  useEffect(() => {
    if (path === "/" || path === "/sign-in") navigate("/inbox", true);
  }, [path]);
  const out = async () => {
    await signOut();
    s.end();
    navigate("/", true);
  };
  const section = `/${path.split("/")[1] ?? ""}`;
  // Narrow screens: the pages, who is signed in and Sign out fold behind one Menu button, closed on each navigation.
  const [menu, setMenu] = useState(false);
  useEffect(() => setMenu(false), [path]);
  // The count of unread mentions beside "Mentions": read again on each page and when a note or a read changes it.
  const [mentions, setMentions] = useState(0);
  useEffect(() => {
    const count = () =>
      void accounts.listMyMentions({ limit: 1 }).then(
        (r) => setMentions(r.data?.unread ?? 0),
        () => undefined,
      );
    count();
    addEventListener(MENTIONS_CHANGED, count);
    return () => removeEventListener(MENTIONS_CHANGED, count);
  }, [path]);
  const nav: { href: string; label: string; count?: number }[] = [
    { href: "/inbox", label: "Inbox" },
    { href: "/mentions", label: "Mentions", count: mentions },
  ];
  if (s.admin)
    nav.push(
      { href: "/chatbots", label: "Chatbots" },
      { href: "/profile", label: "Profile" },
      { href: "/team", label: "Team" },
      { href: "/audit", label: "Audit log" },
      { href: "/reports", label: "Reports" },
      { href: "/webhooks", label: "Webhooks" },
      { href: "/mail", label: "E-mail" },
    );
  // Every person keeps their own saved replies there; admins also the account's shared ones.
  nav.splice(s.admin ? 5 : 2, 0, { href: "/saved-replies", label: "Saved replies" });
  // Everyone's own things (name, picture, alerts, password); the old /password address opens it too.
  nav.push({ href: "/me", label: "My settings" });
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class={`topbar ${menu ? "topbar--open" : ""}`}>
        <span class="brand">aiagent</span>
        <button
          type="button"
          class="button button--quiet menu-toggle"
          aria-expanded={menu}
          aria-controls="console-menu"
          onClick={() => setMenu(!menu)}
        >
          Menu
        </button>
        <div class="topbar__menu" id="console-menu">
          <nav aria-label="Console">
            <ul>
              {nav.map((n) => (
                <li key={n.href}>
                  <Link href={n.href} current={section === n.href || (n.href === "/team" && section === "/teams")}>
                    {n.label}
                    {(n.count ?? 0) > 0 && (
                      <span class="nav-count" data-testid="mentions-count">
                        {n.count}
                        <span class="sr-only"> unread</span>
                      </span>
                    )}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <span class="who" title={`${s.account.callerEmail} (${s.account.callerRole})`}>
            {s.account.callerEmail} <span class="badge badge--role">{s.account.callerRole}</span>
          </span>
          <AvailabilityToggle />
          <button type="button" class="button button--quiet" onClick={() => void out()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" class="main">
        <Page path={path} admin={s.admin} />
      </main>
    </div>
  );
}

function Page({ path, admin }: { path: string; admin: boolean }) {
  const parts = path.split("/").filter(Boolean);
  // A chatbot's knowledge is open to operators too, read-only (ListKnowledgeSources admits them).
  const operatorsToo = parts[0] === "chatbots" && parts[2] === "knowledge";
  if (ADMIN_PAGES.includes(`/${parts[0]}`) && !admin && !operatorsToo) return <Forbidden />;
  switch (parts[0]) {
    case "inbox":
      return <Inbox />;
    case "me":
    case "password":
      return <Profile own />;
    case "profile":
      return <Profile />;
    case "team":
      return <Team />;
    case "teams":
      return <TeamsPage />;
    case "audit":
      return <AuditLog />;
    case "saved-replies":
      return <SavedRepliesPage />;
    case "mentions":
      return <MentionsPage />;
    case "reports":
      return <ReportsPage />;
    case "webhooks":
      return <Webhooks />;
    case "mail":
      return <MailPage />;
    case "chatbots":
      if (parts.length === 1) return <ChatbotList />;
      if (parts[1] === "new") return <ChatbotEdit />;
      if (parts[2] === "embed") return <ChatbotEmbed chatbotId={parts[1]!} />;
      if (parts[2] === "appearance") return <ChatbotAppearancePage chatbotId={parts[1]!} />;
      if (parts[2] === "knowledge") return <KnowledgePage chatbotId={parts[1]!} />;
      if (parts[2] === "agent") return <AgentPage chatbotId={parts[1]!} />;
      if (parts[2] === "replay") return <ReplayPage chatbotId={parts[1]!} />;
      return <ChatbotEdit chatbotId={parts[1]!} />;
    default:
      return (
        <section>
          <PageTitle>Page not found</PageTitle>
          <p>
            There is no such page. <Link href="/inbox">Open the inbox</Link>.
          </p>
        </section>
      );
  }
}

function Forbidden() {
  return (
    <section class="forbidden">
      <PageTitle>For admins only</PageTitle>
      <p>This page is open to the account's admins. As an operator you can work in the inbox.</p>
      <p>
        <Link href="/inbox">Open the inbox</Link>
      </p>
    </section>
  );
}
