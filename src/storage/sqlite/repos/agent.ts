import type { AgentRepository } from "../../../domain/agent/tools.js";
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
} from "../../agent-rows.js";
import { bit } from "../../row-values.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Agent tools, settings, usage and handovers in SQLite. A name another tool holds changes nothing. */
export function sqliteAgents(db: Db): Sync<AgentRepository> {
  const tools = db.prepare<[string], ToolRow>(
    `SELECT ${TOOL_COLUMNS} FROM agent_tools WHERE chatbot_id = ? ORDER BY name`,
  );
  const tool = db.prepare<[string, string, string], ToolRow>(
    `SELECT ${TOOL_COLUMNS} FROM agent_tools WHERE account_id = ? AND chatbot_id = ? AND tool_id = ?`,
  );
  const insertTool = db.prepare(
    `INSERT INTO agent_tools (${TOOL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const updateTool = db.prepare(
    `UPDATE OR IGNORE agent_tools SET name = ?, description = ?, parameters = ?, url = ?, method = ?, timeout_ms = ?,
       requires_approval = ?, secret_sealed = ? WHERE tool_id = ? AND account_id = ? AND chatbot_id = ?`,
  );
  const deleteTool = db.prepare("DELETE FROM agent_tools WHERE account_id = ? AND chatbot_id = ? AND tool_id = ?");
  const settings = db.prepare<[string], SettingsRow>(
    `SELECT ${SETTINGS_COLUMNS} FROM agent_settings WHERE chatbot_id = ?`,
  );
  const putSettings = db.prepare(
    `INSERT INTO agent_settings (${SETTINGS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (chatbot_id) DO UPDATE SET instructions = excluded.instructions,
        handover_phrases = excluded.handover_phrases, dont_know_limit = excluded.dont_know_limit,
        daily_token_budget = excluded.daily_token_budget, updated_at = excluded.updated_at`,
  );
  const addTokens = db.prepare(
    `INSERT INTO agent_usage (chatbot_id, day, tokens) VALUES (?, ?, ?)
      ON CONFLICT (chatbot_id, day) DO UPDATE SET tokens = tokens + excluded.tokens`,
  );
  const used = db.prepare<[string, string], { tokens: number }>(
    "SELECT tokens FROM agent_usage WHERE chatbot_id = ? AND day = ?",
  );
  const handover = db.prepare<[string], HandoverRow>(
    "SELECT conversation_id, reason, at FROM conversation_handovers WHERE conversation_id = ?",
  );
  const setHandover = db.prepare(
    `INSERT INTO conversation_handovers (conversation_id, reason, at) VALUES (?, ?, ?)
      ON CONFLICT (conversation_id) DO UPDATE SET reason = excluded.reason, at = excluded.at`,
  );
  const clearHandover = db.prepare("DELETE FROM conversation_handovers WHERE conversation_id = ?");
  return {
    tools: (chatbotId) => tools.all(chatbotId).map(toTool),
    tool: (accountId, chatbotId, toolId) => {
      const r = tool.get(accountId, chatbotId, toolId);
      return r && toTool(r);
    },
    insertTool: (t) => insertTool.run(...toolValues(t, bit)).changes === 1,
    updateTool: (t) => updateTool.run(...toolUpdateValues(t, bit)).changes === 1,
    deleteTool: (accountId, chatbotId, toolId) => deleteTool.run(accountId, chatbotId, toolId).changes === 1,
    settings: (chatbotId) => {
      const r = settings.get(chatbotId);
      return r && toSettings(r);
    },
    putSettings: (s) => void putSettings.run(...settingsValues(s)),
    addTokens: (chatbotId, day, tokens) => void addTokens.run(chatbotId, day, tokens),
    tokensUsed: (chatbotId, day) => used.get(chatbotId, day)?.tokens ?? 0,
    handover: (conversationId) => {
      const r = handover.get(conversationId);
      return r && toHandover(r);
    },
    setHandover: (h) => void setHandover.run(h.conversationId, h.reason, h.at),
    clearHandover: (conversationId) => void clearHandover.run(conversationId),
  };
}
