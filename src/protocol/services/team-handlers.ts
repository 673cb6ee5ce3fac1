import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TeamSchema } from "../../../gen/aiagent/v1/account_service_pb.js";
import type { TeamRecord, Teams } from "../../domain/account/teams.js";
import type { Routing } from "../../domain/conversation/routing.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { AuthorizedCall } from "../call.js";

function team(t: TeamRecord): MessageInitShape<typeof TeamSchema> {
  return {
    teamId: t.teamId,
    name: t.name,
    memberIds: t.memberIds,
    chatbotIds: t.chatbotIds,
    assignment: t.assignment,
    capacity: t.capacity,
    createdAt: isoTime(t.createdAt),
    updatedAt: isoTime(t.updatedAt),
  };
}

/** The AccountService's team methods; the gate admits operators to the list, admins to the writes. */
export function teamHandlers(teams: Teams, router: Pick<Routing, "setAway" | "isAway">) {
  return {
    async setMyAvailability(req: { away: boolean }, call: AuthorizedCall) {
      return { data: { away: await router.setAway(accountCaller(call.auth), req.away) } };
    },
    async getMyAvailability(_req: unknown, call: AuthorizedCall) {
      return { data: { away: await router.isAway(accountCaller(call.auth)) } };
    },
    async listTeams(_req: unknown, call: AuthorizedCall) {
      return { data: { teams: (await teams.list(accountCaller(call.auth))).map(team) } };
    },
    async createTeam(
      req: { name: string; memberIds: string[]; chatbotIds: string[]; assignment: string; capacity: number },
      call: AuthorizedCall,
    ) {
      return { data: team(await teams.create(accountCaller(call.auth), req)) };
    },
    async updateTeam(
      req: {
        teamId: string;
        name?: string | undefined;
        assignment?: string | undefined;
        capacity?: number | undefined;
      },
      call: AuthorizedCall,
    ) {
      const t = await teams.update(accountCaller(call.auth), {
        teamId: req.teamId,
        name: req.name,
        assignment: req.assignment,
        capacity: req.capacity,
      });
      return { data: team(t) };
    },
    async setTeamMembers(req: { teamId: string; memberIds: string[] }, call: AuthorizedCall) {
      return { data: team(await teams.setMembers(accountCaller(call.auth), req.teamId, req.memberIds)) };
    },
    async setTeamChatbots(req: { teamId: string; chatbotIds: string[] }, call: AuthorizedCall) {
      return { data: team(await teams.setChatbots(accountCaller(call.auth), req.teamId, req.chatbotIds)) };
    },
    async deleteTeam(req: { teamId: string }, call: AuthorizedCall) {
      await teams.remove(accountCaller(call.auth), req.teamId);
      return {};
    },
  };
}
