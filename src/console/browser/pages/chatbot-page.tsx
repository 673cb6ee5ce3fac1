import type { ComponentChildren } from "preact";
import { useContext } from "preact/hooks";
import type { Chatbot } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts, isNotFound } from "../api.js";
import { SessionContext } from "../session.js";
import { ErrorNote, Link, Loading, PageTitle, useLoad } from "../ui.js";

/** The pages of one chatbot, linked alike from its list card, its edit page and each other. */
export const CHATBOT_PAGES = [
  { sub: "", label: "Edit" },
  { sub: "/knowledge", label: "Knowledge" },
  { sub: "/agent", label: "Agent" },
  { sub: "/replay", label: "Replay" },
  { sub: "/appearance", label: "Appearance" },
  { sub: "/embed", label: "Embed" },
] as const;

/** Links to a chatbot's other pages (the current one marked), for admins. */
export function ChatbotPagesNav({ chatbotId, current }: { chatbotId: string; current: string }) {
  return (
    <nav aria-label="This chatbot's pages" class="subnav">
      <ul>
        {CHATBOT_PAGES.map((p) => (
          <li key={p.sub}>
            <Link href={`/chatbots/${chatbotId}${p.sub}`} current={p.sub === current}>
              {p.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** What a chatbot's page shows for an id the account does not have (absent, or another account's: told alike). */
export function ChatbotNotFound() {
  return (
    <section data-testid="chatbot-not-found">
      <PageTitle>Chatbot not found</PageTitle>
      <p>
        This account has no chatbot with that id. <Link href="/chatbots">See the account's chatbots</Link>.
      </p>
    </section>
  );
}

/**
 * A chatbot's page: its title with the chatbot's name (admins: GetChatbot; operators, who may not read the
 * chatbot, see `title` alone), the links to its other pages, then `children(chatbot)` (undefined for operators). An
 * unknown id is not found.
 */
export function ChatbotPage(props: {
  chatbotId: string;
  title: string;
  sub: string;
  children: (chatbot: Chatbot | undefined) => ComponentChildren;
}) {
  const s = useContext(SessionContext)!;
  const [bot, reload] = useLoad(
    async () => (s.admin ? (await accounts.getChatbot({ chatbotId: props.chatbotId })).data : undefined),
    [props.chatbotId, s.admin],
  );
  if (bot.state === "loading") return <Loading what="the chatbot" />;
  if (bot.state === "error")
    return isNotFound(bot.error) ? <ChatbotNotFound /> : <ErrorNote error={bot.error} onRetry={reload} />;
  return (
    <section>
      <PageTitle>{bot.data ? `${props.title} of ${bot.data.name}` : props.title}</PageTitle>
      {s.admin && <ChatbotPagesNav chatbotId={props.chatbotId} current={props.sub} />}
      {props.children(bot.data)}
    </section>
  );
}
