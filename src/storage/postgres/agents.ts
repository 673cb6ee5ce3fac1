import type { AgentRepository } from "../../domain/agent/tools.js";
import {
  type HandoverRow,
  SETTINGS_COLUMNS,
  type SettingsRow,
  settingsValues,
  TOOL_COLUMNS,
  type ToolRow,
  toHandover,
  toolUpdateValues,
  toolValues,
  toSettings,
  toTool,
} from "../agent-rows.js";
import { bool } from "../row-values.js";
import type { PgDb } from "./db.js";

/** Agent tools, settings, usage and handovers in PostgreSQL. A name another tool holds changes nothing. */
export function pgAgents(db: PgDb): AgentRepository {
  return {
    tools: async (chatbotId) =>
      (
        await db.rows<ToolRow>(
          "agent_tools",
          `SELECT ${TOOL_COLUMNS} FROM agent_tools WHERE chatbot_id = $1 ORDER BY name`,
          [chatbotId],
        )
      ).map(toTool),
    tool: async (accountId, chatbotId, toolId) => {
      const [r] = await db.rows<ToolRow>(
        "agent_tool",
        `SELECT ${TOOL_COLUMNS} FROM agent_tools WHERE account_id = $1 AND chatbot_id = $2 AND tool_id = $3`,
        [accountId, chatbotId, toolId],
      );
      return r && toTool(r);
    },
    insertTool: async (t) =>
      (await db.count(
        "agent_tool_insert",
        `INSERT INTO agent_tools (${TOOL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
          ON CONFLICT DO NOTHING`,
        toolValues(t, bool),
      )) === 1,
    // A name another tool holds: the update is skipped (no unique violation to abort a unit of work).
    updateTool: async (t) =>
      (await db.count(
        "agent_tool_update",
        `UPDATE agent_tools SET name = $1, description = $2, parameters = $3, url = $4, method = $5, timeout_ms = $6,
           requires_approval = $7, secret_sealed = $8
          WHERE tool_id = $9 AND account_id = $10 AND chatbot_id = $11
            AND NOT EXISTS (SELECT 1 FROM agent_tools o WHERE o.chatbot_id = $11 AND o.name = $1 AND o.tool_id <> $9)`,
        toolUpdateValues(t, bool),
      )) === 1,
    deleteTool: async (accountId, chatbotId, toolId) =>
      (await db.count(
        "agent_tool_delete",
        "DELETE FROM agent_tools WHERE account_id = $1 AND chatbot_id = $2 AND tool_id = $3",
        [accountId, chatbotId, toolId],
      )) === 1,
    settings: async (chatbotId) => {
      const [r] = await db.rows<SettingsRow>(
        "agent_settings",
        `SELECT ${SETTINGS_COLUMNS} FROM agent_settings WHERE chatbot_id = $1`,
        [chatbotId],
      );
      return r && toSettings(r);
    },
    putSettings: async (s) =>
      void (await db.count(
        "agent_settings_put",
        `INSERT INTO agent_settings (${SETTINGS_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
          ON CONFLICT (chatbot_id) DO UPDATE SET instructions = excluded.instructions,
            handover_phrases = excluded.handover_phrases, dont_know_limit = excluded.dont_know_limit,
            daily_token_budget = excluded.daily_token_budget, updated_at = excluded.updated_at`,
        settingsValues(s),
      )),
    addTokens: async (chatbotId, day, tokens) =>
      void (await db.count(
        "agent_usage_add",
        `INSERT INTO agent_usage (chatbot_id, day, tokens) VALUES ($1, $2, $3)
          ON CONFLICT (chatbot_id, day) DO UPDATE SET tokens = agent_usage.tokens + excluded.tokens`,
        [chatbotId, day, tokens],
      )),
    tokensUsed: async (chatbotId, day) => {
      const [r] = await db.rows<{ tokens: string }>(
        "agent_usage",
        "SELECT tokens FROM agent_usage WHERE chatbot_id = $1 AND day = $2",
        [chatbotId, day],
      );
      return r ? Number(r.tokens) : 0;
    },
    handover: async (conversationId) => {
      const [r] = await db.rows<HandoverRow>(
        "handover_get",
        "SELECT conversation_id, reason, at FROM conversation_handovers WHERE conversation_id = $1",
        [conversationId],
      );
      return r && toHandover(r);
    },
    setHandover: async (h) =>
      void (await db.count(
        "handover_set",
        `INSERT INTO conversation_handovers (conversation_id, reason, at) VALUES ($1, $2, $3)
          ON CONFLICT (conversation_id) DO UPDATE SET reason = excluded.reason, at = excluded.at`,
        [h.conversationId, h.reason, h.at],
      )),
    clearHandover: async (conversationId) =>
      void (await db.count("handover_clear", "DELETE FROM conversation_handovers WHERE conversation_id = $1", [
        conversationId,
      ])),
  };
}
