import { agentKeyBinding } from "../domain/account/account-service.js";
import type { Sealer } from "../domain/account/chatbot-rules.js";
import type { ChatbotRecord } from "../domain/account/repository.js";
import type { Agent, AgentContext, AgentEvent, AgentTurn, ReplyScope } from "../domain/agent/agent.js";
import type { Post } from "./guarded-post.js";
import { OpenAiCompatibleAgent } from "./openai-compatible.js";

/**
 * The agent each chatbot's settings name: its own OpenAI-compatible endpoint (the key opened from its sealed form
 * only when a reply is asked for), or the service's default agent.
 */
export class PerChatbotAgent implements Agent {
  // One client per chatbot and settings; replaced when the settings change.
  private readonly endpoints = new Map<string, { settings: string; agent: Agent }>();

  constructor(
    private readonly fallback: Agent,
    private readonly sealer: Sealer,
    /** How a chatbot's own endpoint is reached (in production: public addresses only, checked at connection). */
    private readonly post?: Post,
    /** The service's built-in agent, for chatbots set to built_in explicitly. */
    private readonly builtIn: Agent = fallback,
  ) {}

  reply(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    scope?: ReplyScope,
    context?: AgentContext,
  ): AsyncIterable<AgentEvent> {
    return this.agentFor(chatbot).reply(chatbot, history, signal, scope, context);
  }

  /** True when the chatbot's replies come from a model (its own endpoint, or the service's AIAGENT_LLM_*). */
  usesModel(chatbot: ChatbotRecord): boolean {
    const a = chatbot.agent;
    if (a.kind === "openai_compatible") return true;
    return !a.explicit && this.fallback !== this.builtIn;
  }

  private agentFor(chatbot: ChatbotRecord): Agent {
    const a = chatbot.agent;
    // A chatbot whose owner chose the built-in agent gets it, whatever the service's default agent is.
    if (a.kind === "built_in") return a.explicit ? this.builtIn : this.fallback;
    const settings = JSON.stringify(a);
    const hit = this.endpoints.get(chatbot.chatbotId);
    if (hit?.settings === settings) return hit.agent;
    const apiKey = a.apiKeySealed ? this.sealer.open(a.apiKeySealed, agentKeyBinding(chatbot.chatbotId)) : "";
    const agent = new OpenAiCompatibleAgent({
      baseUrl: a.baseUrl,
      model: a.model,
      apiKey,
      ...(this.post ? { post: this.post } : {}),
    });
    if (this.endpoints.size > 10_000) this.endpoints.clear();
    this.endpoints.set(chatbot.chatbotId, { settings, agent });
    return agent;
  }
}
