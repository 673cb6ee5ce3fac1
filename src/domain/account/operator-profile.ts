import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument } from "../errors.js";

/** What a customer sees of the person who answers them: a name and a picture. */
export interface OperatorProfile {
  displayName: string;
  avatarUrl: string;
}

/** Storage of the people's profiles, one per (account, e-mail); the e-mail as the caller's, matched in any case. */
export interface OperatorProfileRepository {
  get(accountId: string, email: string): Promise<OperatorProfile | undefined>;
  set(accountId: string, email: string, profile: OperatorProfile, now: number): Promise<void>;
  /** Where the person wants the inbox's alerts (the defaults when they set nothing). */
  alerts(accountId: string, email: string): Promise<AlertSettings>;
  /** Sets them (the profile's name and picture kept, or empty when the person has no profile yet). */
  setAlerts(accountId: string, email: string, alerts: AlertSettings, now: number): Promise<void>;
}

/** Where a person wants the inbox's alerts. */
export interface AlertSettings {
  /** An e-mail when a conversation they hold (or, as an admin, an unassigned one) misses its first-response SLA. */
  slaBreachEmail: boolean;
}

/** What a person who set nothing gets: the SLA alert by e-mail, as Chatwoot's and Intercom's defaults send it. */
export const DEFAULT_ALERTS: AlertSettings = { slaBreachEmail: true };

const MAX_NAME = 60;
const MAX_URL = 2048;

function displayName(v: string): string {
  const name = v.trim().replace(/\s+/g, " ");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalidArgument("display_name", "must not contain control characters");
  if ([...name].length > MAX_NAME) throw invalidArgument("display_name", `must be at most ${MAX_NAME} characters`);
  return name;
}

function avatarUrl(v: string): string {
  const url = v.trim();
  if (url === "") return "";
  if (url.length > MAX_URL) throw invalidArgument("avatar_url", `must be at most ${MAX_URL} characters`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalidArgument("avatar_url", "must be an absolute https address");
  }
  // A picture shown in customers' browsers: never a script or data address, never an unencrypted one.
  if (u.protocol !== "https:" || u.username || u.password)
    throw invalidArgument("avatar_url", "must be an https address without credentials");
  return u.href;
}

/** The signed-in person's own profile: read with the account, set by themself (any role). */
export class OperatorProfiles {
  constructor(private readonly d: { profiles: OperatorProfileRepository; clock: Clock }) {}

  async get(caller: AccountCaller): Promise<OperatorProfile> {
    return (await this.d.profiles.get(caller.accountId, caller.email)) ?? { displayName: "", avatarUrl: "" };
  }

  async update(caller: AccountCaller, input: OperatorProfile): Promise<OperatorProfile> {
    const profile = { displayName: displayName(input.displayName), avatarUrl: avatarUrl(input.avatarUrl) };
    await this.d.profiles.set(caller.accountId, caller.email, profile, this.d.clock.now());
    return profile;
  }

  /** The caller's alert settings. */
  alerts(caller: AccountCaller): Promise<AlertSettings> {
    return this.d.profiles.alerts(caller.accountId, caller.email);
  }

  /** Changes the settings given (a field left out keeps its value). */
  async setAlerts(caller: AccountCaller, input: Partial<AlertSettings>): Promise<AlertSettings> {
    const next = { ...(await this.alerts(caller)), ...definedOnly(input) };
    await this.d.profiles.setAlerts(caller.accountId, caller.email, next, this.d.clock.now());
    return next;
  }
}

function definedOnly(input: Partial<AlertSettings>): Partial<AlertSettings> {
  return input.slaBreachEmail === undefined ? {} : { slaBreachEmail: input.slaBreachEmail };
}
