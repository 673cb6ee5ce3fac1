import { createContext } from "preact";
import type { AccountInfo } from "../../../gen/aiagent/v1/account_service_pb.js";

/** The signed-in person and their account, as GetAccount answered. */
export interface Session {
  account: AccountInfo;
  admin: boolean;
  /** Forgets the session (after sign-out, or when a call says it has expired). */
  end(): void;
  /** Shows the account as a call answered it (after the person changed their own profile). */
  update(account: AccountInfo): void;
}

/** The session, for every page below the layout. */
export const SessionContext = createContext<Session | undefined>(undefined);
