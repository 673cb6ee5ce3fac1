import { accountCases } from "./accounts.case.js";
import { invitationCases } from "./invitations.case.js";
import { memberCases } from "./members.case.js";
import { operatorReportCases } from "./operator-reports.case.js";
import { profileCases } from "./profiles.case.js";
import { ratingCases } from "./ratings.case.js";
import { reportCases } from "./reports.case.js";
import { runContract } from "./suite.js";
import { teamCases } from "./team.case.js";

// The storage contract, part of it (see suite.ts): accounts, members, invitations, profiles, ratings, reports, team.
await runContract([
  accountCases,
  memberCases,
  invitationCases,
  profileCases,
  ratingCases,
  reportCases,
  operatorReportCases,
  teamCases,
]);
