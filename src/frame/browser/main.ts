import { ApiError, type ChatMessage, type ConversationState, FrameApi, SessionExpiredError } from "./api.js";
import { applyAppearance, foldAway } from "./appearance.js";
import { attachments } from "./attach.js";
import { Handover } from "./handover.js";
import { HostEvents } from "./host-events.js";
import { LiveUpdates } from "./live.js";
import { mailLine } from "./mail.js";
import { f, T } from "./strings.js";
import { TokenRefresher } from "./token-refresh.js";
import { FrameTyping } from "./typing.js";
import { ChatView, type ReplyHandle } from "./view.js";

const HISTORY_PAGE = 100;
const HISTORY_PAGES = 5;

/** The frame's settings, written into the page by the server (never the token). */
interface FrameSettings {
  apiBase: string;
  hostOrigin: string | undefined;
  allowedOrigins: string[];
  refreshTimeoutMs: number;
  chatbotName: string;
  /** The assistant's name in the header: the chatbot's, or the one its appearance sets. */
  agentName: string;
}

function settings(root: HTMLElement): FrameSettings {
  const allowedOrigins = (root.dataset.allowedOrigins ?? "").split(" ").filter(Boolean);
  let hostOrigin = root.dataset.hostOrigin || undefined;
  // With several allowed origins and none named, the browser can tell which one embeds us (Chromium, Safari).
  const ancestor = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins?.[0];
  if (hostOrigin === undefined && ancestor && allowedOrigins.includes(ancestor)) hostOrigin = ancestor;
  return {
    apiBase: root.dataset.apiBase ?? "",
    hostOrigin,
    allowedOrigins,
    refreshTimeoutMs: Number(root.dataset.refreshTimeoutMs) || 10_000,
    chatbotName: root.dataset.chatbotName ?? "",
    agentName: root.dataset.agentName || root.dataset.chatbotName || "",
  };
}

function sentence(text: string): string {
  const t = text.trim();
  return t ? t[0]!.toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".") : t;
}

function start(): void {
  const root = document.getElementById("chat") as HTMLElement;
  const cfg = settings(root);
  applyAppearance(root);
  // Read the token (or launch code), then take it out of the address bar and history at once: from here on the token
  // lives in memory only.
  const params = new URLSearchParams(location.search);
  const initialToken = params.get("access_token") ?? "";
  const launchCode = params.get("launch") ?? "";
  history.replaceState(null, "", location.pathname + location.hash);

  const pic = root.dataset.agentPicture;
  const view = new ChatView({ name: cfg.agentName, picture: pic ? cfg.apiBase + pic : "" });
  let conversationId: string | undefined;
  let loaded = false;
  let sending = false;
  let expired = false;

  const refresher = new TokenRefresher(cfg.hostOrigin, cfg.refreshTimeoutMs, (token) => {
    api.setToken(token);
    // A token pushed by the host page ends an expired session.
    if (expired) void resume();
  });
  const api = new FrameApi(cfg.apiBase, initialToken, refresher);
  const handover = new Handover(view, cfg.chatbotName, (path) => api.url(path), cfg.agentName);
  const host = new HostEvents(cfg.hostOrigin);
  host.locale(document.documentElement.lang);
  // "How did it go?" under a closed conversation: a chunk loaded when the first one shows.
  const rate = (id: string, order: number) =>
    void import("./rating.js").then((m) => m.offerRating(view, api, showError, { T, f }, id, order), showError);
  const mail = mailLine(api, root.dataset.awayUntil !== undefined);
  handover.onClosed = rate;
  const typing = new FrameTyping(() => {
    if (conversationId) api.typing(conversationId);
  });
  const live = new LiveUpdates(api, {
    onConversation: (c) => handover.state(c),
    onTyping: (t) => typing.shown(t),
    onActivity: (x) => {
      if (x === "looking_up") typing.lookingUp();
    },
    onMessage: (m) => {
      if (m.role === "operator") {
        typing.hide();
        foldAway();
      } else if (m.role === "assistant") typing.hide();
      handover.message(m);
      if (m.role && m.role !== "user") host.message(m.role);
      // The agent's answer to the message being sent can arrive live before the send call's own copy: it takes the
      // place of the reply being streamed, so it is never shown twice.
      if (inFlight && m.role === "assistant" && m.message_order === inFlight.userOrder + 1) inFlight.reply.finish(m);
      else view.upsert(m);
    },
    onSessionExpired: (e) => showError(e),
  });
  /** The message being sent and the agent's reply streaming for it, while a send is under way. */
  let inFlight: { userOrder: number; reply: ReplyHandle } | undefined;
  /** The highest message_order shown. */
  let lastOrder = 0;
  const follow = (id: string) => live.follow(id, lastOrder);

  const canSend = () => loaded && !sending && !expired && navigator.onLine;
  /** Files given while a message is being sent: they go when it ends (attach.ts). */
  const afterSend: (() => void)[] = [];
  const update = () => view.setCanSend(canSend());
  attachments({
    view,
    api,
    conversation: () => conversationId,
    can: () => loaded && !expired && navigator.onLine,
    free: () => (sending ? new Promise((go) => afterSend.push(go)) : Promise.resolve()),
    stored: adopt,
    failed: (e) => showError(e),
  });

  /** The customer's message (or file) is stored: a conversation it started is followed live from here. */
  function adopt(m: ChatMessage): void {
    handover.seen(m.message_order);
    if (conversationId !== undefined) return;
    conversationId = m.conversation_id;
    // A new conversation: the operator's replies arrive on its live stream.
    lastOrder = m.message_order;
    // What every new conversation starts as; changes from here are told in the log.
    handover.state({ conversation_id: m.conversation_id, status: "live", assigned_to: "ai_agent" }, true);
    follow(m.conversation_id);
    mail(m.conversation_id);
  }

  function showError(e: unknown, retry?: () => void): void {
    if (e instanceof SessionExpiredError) {
      expired = true;
      view.showNotice(
        "expired",
        refresher.canRefresh ? T.expiredReconnect : T.expiredReload,
        refresher.canRefresh ? { label: T.reconnect, run: () => void reconnect() } : undefined,
      );
    } else if (e instanceof ApiError && e.code === "network") {
      if (!navigator.onLine) view.showNotice("offline", T.offline);
      else view.showNotice("error", T.unreachable, retry ? { label: T.tryAgain, run: retry } : undefined);
    } else if (e instanceof ApiError && e.code === "unauthenticated") {
      expired = true;
      view.showNotice("expired", T.invalidSession);
    } else {
      view.showNotice(
        "error",
        sentence(e instanceof Error ? e.message : String(e)),
        retry ? { label: T.tryAgain, run: retry } : undefined,
      );
    }
    update();
  }

  async function loadHistory(): Promise<void> {
    try {
      const latest: ConversationState | undefined = (await api.conversations())[0];
      const messages: ChatMessage[] = [];
      if (latest) {
        conversationId = latest.conversation_id;
        // Bounded: the newest few hundred messages are enough for a chat view.
        for (let page = 0, offset = 0; page < HISTORY_PAGES; page++) {
          const p = await api.messages(latest.conversation_id, offset, HISTORY_PAGE);
          messages.push(...p.messages);
          offset += p.messages.length;
          if (!p.hasMore || p.messages.length === 0) break;
        }
      }
      // The state first: operators' messages show the name and picture of who holds the conversation.
      if (latest) handover.state(latest, true);
      view.render(messages);
      if (messages.some((m) => m.role === "operator")) foldAway();
      lastOrder = messages[messages.length - 1]?.message_order ?? 0;
      handover.seen(lastOrder);
      if (latest) {
        if (latest.status === "closed" && !latest.rating) rate(latest.conversation_id, lastOrder);
        follow(latest.conversation_id);
      }
      loaded = true;
      mail(conversationId);
      view.hideNotice();
      document.documentElement.dataset.state = "ready";
    } catch (e) {
      showError(e, () => void loadHistory());
    }
    update();
  }

  async function reconnect(): Promise<void> {
    const token = await refresher.request();
    if (token === null) {
      view.showNotice("expired", T.stillNoSession, {
        label: T.reconnect,
        run: () => void reconnect(),
      });
      return;
    }
    api.setToken(token);
    await resume();
  }

  async function resume(): Promise<void> {
    expired = false;
    view.hideNotice("expired");
    if (!loaded) await loadHistory();
    else live.resume();
    update();
  }

  /**
   * The customer's message whose answer failed: its text and the request it was stored by (key and conversation).
   * "Try again", or the same text sent again, repeats that request: the service finds the stored message and asks the
   * agent again, so the question is never stored twice. Kept until another message is sent or the page reloads.
   */
  let unanswered: { text: string; key: string; conversationId: string | undefined; failure: ReplyHandle } | undefined;

  async function send(text: string): Promise<void> {
    sending = true;
    update();
    const again = unanswered?.text === text ? unanswered : undefined;
    unanswered = undefined;
    again?.failure.remove();
    const key = again?.key ?? crypto.randomUUID();
    const requestedIn = again ? again.conversationId : conversationId;
    // Asked again: the stored message is shown already.
    const pending = again ? undefined : view.addPending(text);
    const reply = view.startReply();
    let stored = false;
    let userOrder = 0;
    let replied = false;
    try {
      await api.send(
        requestedIn,
        text,
        {
          onUserMessage: (m) => {
            stored = true;
            userOrder = m.message_order;
            inFlight = { userOrder, reply };
            adopt(m);
            if (pending) view.confirm(pending, m);
          },
          onDelta: (t) => reply.append(t),
          onActivity: () => reply.lookingUp(),
          onReply: (m) => {
            replied = true;
            handover.seen(m.message_order);
            reply.finish(m);
          },
        },
        key,
      );
      // No reply: a person from the support team holds the conversation and answers later; say so at once.
      if (!replied) {
        reply.remove();
        handover.waiting(userOrder);
      }
      live.nudge();
      view.hideNotice("error");
    } catch (e) {
      if (stored || again) {
        // The question is stored (now, or before this retry); only its answer is missing: "Try again" asks for it under the same key.
        unanswered = { text, key, conversationId: requestedIn, failure: reply };
        reply.fail(
          e instanceof ApiError && e.code === "network"
            ? T.connectionLost
            : sentence(e instanceof Error ? e.message : String(e)),
          {
            label: T.tryAgain,
            run: () => {
              if (canSend()) void send(text);
            },
          },
        );
        if (e instanceof ApiError && e.code === "network") showError(e);
      } else {
        reply.remove();
        if (pending) view.drop(pending);
        // Nothing was stored: give the text back so it is not lost.
        if (view.input.value.trim() === "") view.input.value = text;
        showError(e, () => view.form.requestSubmit());
      }
    } finally {
      inFlight = undefined;
      sending = false;
      update();
      view.input.focus();
      for (const go of afterSend.splice(0)) go();
    }
  }

  view.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = view.input.value.trim();
    if (!text || !canSend()) return;
    view.input.value = "";
    view.input.dispatchEvent(new Event("input"));
    typing.sent();
    void send(text);
  });
  view.input.addEventListener("input", () => {
    if (view.input.value.trim() !== "") typing.typed();
  });
  view.input.addEventListener("keydown", (ev) => {
    // Enter sends; Shift+Enter starts a new line; an IME composition is left alone.
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      view.form.requestSubmit();
    }
  });
  // Escape asks a launcher around the frame to close it; the focus given to the frame goes to the message box.
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") host.close();
  });
  window.addEventListener("focus", () => {
    if (document.activeElement === document.body || document.activeElement === null) view.input.focus();
  });
  window.addEventListener("offline", () => {
    view.showNotice("offline", T.offline);
    update();
  });
  window.addEventListener("online", () => {
    view.hideNotice("offline");
    if (!loaded) void loadHistory();
    update();
  });

  update();
  if (launchCode && !initialToken) {
    void launch(launchCode);
    return;
  }
  if (!initialToken) {
    expired = true;
    view.showNotice("expired", T.needsToken);
    return;
  }
  begin(initialToken);

  function begin(token: string): void {
    refresher.plan(token);
    if (!navigator.onLine) view.showNotice("offline", T.offlineLoad);
    else void loadHistory();
  }

  /** Trades the address's launch code for the token, once: only inside the page it was issued for. */
  async function launch(code: string): Promise<void> {
    // The embedding page's origin as the browser tells it (Chromium, Safari), else the one the code is bound to.
    const ancestor = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins?.[0];
    const embedOrigin = ancestor ?? cfg.hostOrigin ?? "";
    if (window.parent === window || !embedOrigin) {
      expired = true;
      view.showNotice("expired", T.onlyInside);
      update();
      return;
    }
    try {
      begin(await api.launch(location.pathname.split("/").filter(Boolean)[1] ?? "", code, embedOrigin));
    } catch (e) {
      expired = true;
      view.showNotice("expired", e instanceof ApiError && e.code === "network" ? T.unreachableReload : T.linkUsed);
      update();
    }
  }
}

start();
