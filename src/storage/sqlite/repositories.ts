import type { Db } from "./database.js";
import { sqliteAccounts } from "./repos/accounts.js";
import { sqliteActivities } from "./repos/activities.js";
import { sqliteAgents } from "./repos/agent.js";
import { sqliteApiKeys } from "./repos/api-keys.js";
import { sqliteApprovals } from "./repos/approvals.js";
import { sqliteAttachments } from "./repos/attachments.js";
import { sqliteAudit } from "./repos/audit.js";
import { sqliteChatbots } from "./repos/chatbots.js";
import { sqliteContacts } from "./repos/contacts.js";
import { sqliteConversations } from "./repos/conversations.js";
import { sqliteCredentialChanges } from "./repos/credential-changes.js";
import { sqliteDemoSetup } from "./repos/demo-setup.js";
import { sqliteDrafts } from "./repos/drafts.js";
import { sqliteIdempotency } from "./repos/idempotency.js";
import { sqliteInvitations } from "./repos/invitations.js";
import { sqliteKnowledge } from "./repos/knowledge.js";
import { sqliteLabels } from "./repos/labels.js";
import { sqliteLaunchCodes } from "./repos/launch-codes.js";
import { sqliteMail } from "./repos/mail.js";
import { sqliteMembers } from "./repos/members.js";
import { sqliteMentionAlerts, sqliteMentions, sqliteNotes, sqliteSavedReplies } from "./repos/notes.js";
import { sqlitePictures } from "./repos/pictures.js";
import { sqlitePrivacy } from "./repos/privacy.js";
import { sqliteProfiles } from "./repos/profiles.js";
import { sqliteRatings } from "./repos/ratings.js";
import { sqliteRefreshTokens } from "./repos/refresh-tokens.js";
import { sqliteReplies } from "./repos/replies.js";
import { sqliteReports } from "./repos/reports.js";
import { sqlitePresence, sqliteRouting } from "./repos/routing.js";
import { sqliteSearch } from "./repos/search.js";
import { sqliteSigningKeys } from "./repos/signing-keys.js";
import { sqliteTeams } from "./repos/teams.js";
import { sqliteTimers } from "./repos/timers.js";
import { sqliteEvents, sqliteWebhooks } from "./repos/webhooks.js";

/** Every repository, synchronous, over one database handle (the store wraps them into the async port). */
export function sqliteRepositories(db: Db) {
  const accounts = sqliteAccounts(db);
  const apiKeys = sqliteApiKeys(db);
  return {
    accounts,
    apiKeys,
    chatbots: sqliteChatbots(db),
    refreshTokens: sqliteRefreshTokens(db, { accounts, apiKeys }),
    launchCodes: sqliteLaunchCodes(db),
    signingKeys: sqliteSigningKeys(db),
    contacts: sqliteContacts(db),
    conversations: sqliteConversations(db),
    demoSetup: sqliteDemoSetup(db),
    members: sqliteMembers(db),
    invitations: sqliteInvitations(db),
    profiles: sqliteProfiles(db),
    pictures: sqlitePictures(db),
    attachments: sqliteAttachments(db),
    notes: sqliteNotes(db),
    mentions: sqliteMentions(db),
    mentionAlerts: sqliteMentionAlerts(db),
    activities: sqliteActivities(db),
    savedReplies: sqliteSavedReplies(db),
    teams: sqliteTeams(db),
    routing: sqliteRouting(db),
    presence: sqlitePresence(db),
    events: sqliteEvents(db),
    webhooks: sqliteWebhooks(db),
    idempotency: sqliteIdempotency(db),
    audit: sqliteAudit(db),
    privacy: sqlitePrivacy(db),
    ratings: sqliteRatings(db),
    replies: sqliteReplies(db),
    reports: sqliteReports(db),
    credentialChanges: sqliteCredentialChanges(db),
    knowledge: sqliteKnowledge(db),
    agents: sqliteAgents(db),
    approvals: sqliteApprovals(db),
    drafts: sqliteDrafts(db),
    mail: sqliteMail(db),
    search: sqliteSearch(db),
    labels: sqliteLabels(db),
    timers: sqliteTimers(db),
  };
}

/** The synchronous repositories as one type. */
export type SqliteRepositories = ReturnType<typeof sqliteRepositories>;
