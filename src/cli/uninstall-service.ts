// `llamux uninstall-service`: stops and removes the systemd service install-service made. Models, the
// system user and its state stay unless --purge.
import { existsSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { SERVICE_NAME, defaultServiceSettings } from "../service/systemd-unit.ts";
import { run, systemdIsRunning, userExists } from "../service/system.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const uninstallServiceFlags = {
  purge: { type: "boolean", help: `also remove the "${defaultServiceSettings.user}" user, /var/lib/llamux (its models included) and /var/cache/llamux` },
  "dry-run": { type: "boolean", help: "print the steps; change nothing" },
  ...helpFlag,
} as const satisfies Flags;

export const uninstallServicePage: HelpPage = {
  usage: ["llamux uninstall-service [options]"],
  description: `Stops and disables the llamux systemd service and removes ${defaultServiceSettings.unitPath} and
${defaultServiceSettings.environmentPath} (run as root). Models and the "${defaultServiceSettings.user}" user stay.`,
  flags: uninstallServiceFlags,
};

export const uninstallServiceHelp = renderHelp(uninstallServicePage);

export async function uninstallServiceCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true,
    options: uninstallServiceFlags,
  });
  if (values.help) {
    console.log(uninstallServiceHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const { unitPath, environmentPath, user } = defaultServiceSettings;
  const plan: Array<{ say: string; act: () => unknown }> = [
    { say: `systemctl disable --now ${SERVICE_NAME}`, act: () => systemdIsRunning() && run(["systemctl", "disable", "--now", SERVICE_NAME], { allowFailure: true }) },
    { say: `remove ${unitPath} and ${environmentPath}`, act: () => [unitPath, environmentPath].forEach((path) => rmSync(path, { force: true })) },
    { say: "systemctl daemon-reload", act: () => systemdIsRunning() && run(["systemctl", "daemon-reload"]) },
  ];
  if (values.purge) {
    plan.push(
      { say: `remove the user ${user}`, act: () => userExists(user) && run(["userdel", user]) },
      { say: "remove /var/lib/llamux and /var/cache/llamux", act: () => ["/var/lib/llamux", "/var/cache/llamux"].forEach((dir) => rmSync(dir, { recursive: true, force: true })) },
    );
  }
  if (values["dry-run"]) {
    console.log(plan.map((step, i) => `${i + 1}. ${step.say}`).join("\n"));
    return 0;
  }
  if (process.getuid?.() !== 0) throw new Error("uninstall-service must run as root (try: sudo llamux uninstall-service)");
  if (!existsSync(unitPath)) console.log(`${unitPath} does not exist: nothing was installed, or it was removed already`);
  for (const step of plan) {
    console.log(`- ${step.say}`);
    step.act();
  }
  if (!values.purge) console.log("The models and the llamux user stay; --purge removes them.");
  return 0;
}
