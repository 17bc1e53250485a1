// The three personalities by name; what each is lives in its own file. Every profile serves Anthropic's
// Messages API, whose errors are Anthropic's shape whatever the profile (Claude Code reads their types).
import { anthropicErrorBody, isAnthropicPath } from "../anthropic/errors.ts";
import { profileA } from "./a.ts";
import { profileB } from "./b.ts";
import { profileC } from "./c.ts";
import type { Profile, ProfileName } from "./profile.ts";

export type { Profile, ProfileName } from "./profile.ts";

function withMessagesApiErrors(profile: Profile): Profile {
  return { ...profile, errorBody: (error, path) => (isAnthropicPath(path) ? anthropicErrorBody(error) : profile.errorBody(error, path)) };
}

export const profiles: Record<ProfileName, Profile> = {
  a: withMessagesApiErrors(profileA), b: withMessagesApiErrors(profileB), c: withMessagesApiErrors(profileC),
};

/** The profiles `--profile a|b|c|all` names. */
export function profileNamesOf(choice: ProfileName | "all"): ProfileName[] {
  return choice === "all" ? ["a", "b", "c"] : [choice];
}
