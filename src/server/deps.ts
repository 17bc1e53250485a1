// What every route handler of one listener needs.
import type { ModelService } from "./model-service.ts";
import type { Profile } from "./profiles.ts";

export interface ServerDeps {
  profile: Profile;
  models: ModelService;
}
