// `llamux install-service`: runs llamux as a systemd service under its own system user, with the
// hardening of src/service/systemd-unit.ts. `--dry-run` prints what would be installed and changes nothing.
import { copyFileSync, chmodSync, existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { isCompiledExecutable } from "../binary/self.ts";
import { SERVICE_NAME, defaultServiceSettings, environmentFile, systemdUnit, type ServiceSettings } from "../service/systemd-unit.ts";
import { run, systemdIsRunning, userExists } from "../service/system.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

/** Where the executable is installed for the service: outside any home, which the unit hides. */
const INSTALLED_EXECUTABLE = "/usr/local/bin/llamux";

export const installServiceFlags = {
  profile: { type: "string", value: "a|b|c|all", help: "which API to serve (default a: Ollama-compatible on port 11434)" },
  host: { type: "string", value: "HOST", help: "address to bind (default 127.0.0.1; set LLAMUX_API_KEY in the settings file before exposing it)" },
  models: { type: "string", value: "DIR", help: `the model store (default ${defaultServiceSettings.modelsDir})` },
  binary: { type: "string", value: "PATH", help: "the llamux executable to install (default: this one)" },
  "dry-run": { type: "boolean", help: "print the unit, the settings file and the steps; change nothing" },
  ...helpFlag,
} as const satisfies Flags;

export const installServicePage: HelpPage = {
  usage: ["llamux install-service [options]"],
  description: `Installs llamux as a systemd service (run as root): copies this executable to ${INSTALLED_EXECUTABLE},
creates the system user "${defaultServiceSettings.user}", writes ${defaultServiceSettings.unitPath} (restart on failure,
hardened: no new privileges, read-only system, no access to home directories, private /tmp, writable only
where models and caches live) and the settings file ${defaultServiceSettings.environmentPath}, then enables and starts it.`,
  flags: installServiceFlags,
};

export const installServiceHelp = renderHelp(installServicePage);

function settingsFrom(values: Record<string, string | boolean | undefined>): ServiceSettings {
  const profile = (values.profile as string | undefined) ?? defaultServiceSettings.profile;
  if (!["a", "b", "c", "all"].includes(profile)) throw new UsageError(`--profile must be a, b, c or all, got "${profile}"`);
  const binary = values.binary as string | undefined;
  if (!binary && !isCompiledExecutable && !values["dry-run"]) {
    throw new UsageError("install-service installs the llamux executable: run it from dist/llamux (make binary) or give --binary PATH");
  }
  return {
    ...defaultServiceSettings,
    profile: profile as ServiceSettings["profile"],
    host: (values.host as string | undefined) ?? defaultServiceSettings.host,
    modelsDir: resolve((values.models as string | undefined) ?? defaultServiceSettings.modelsDir),
    executable: INSTALLED_EXECUTABLE,
  };
}

function source(values: Record<string, string | boolean | undefined>): string {
  const binary = (values.binary as string | undefined) ?? process.execPath;
  if (!existsSync(binary)) throw new UsageError(`--binary ${binary} does not exist`);
  return realpathSync(binary);
}

/** The steps, as text for --dry-run and as actions for a real install. */
function steps(settings: ServiceSettings, from: string) {
  const { user, modelsDir } = settings;
  return [
    { say: `install ${from} as ${settings.executable}`, act: () => installExecutable(from, settings.executable) },
    {
      say: `create the system user ${user} (home /var/lib/llamux, no login shell) unless it exists`,
      act: () => userExists(user) || run(["useradd", "--system", "--user-group", "--home-dir", "/var/lib/llamux", "--create-home", "--shell", "/usr/sbin/nologin", user]),
    },
    { say: `add ${user} to the groups render and video where they exist (GPU access)`, act: () => addGpuGroups(user) },
    { say: `create ${modelsDir} owned by ${user}`, act: () => { mkdirSync(modelsDir, { recursive: true }); run(["chown", `${user}:${user}`, modelsDir]); } },
    { say: `write ${settings.environmentPath} (an existing one is kept as .bak)`, act: () => writeKeepingBackup(settings.environmentPath, environmentFile(settings), 0o640) },
    { say: `write ${settings.unitPath}`, act: () => writeKeepingBackup(settings.unitPath, systemdUnit(settings), 0o644) },
    { say: `systemctl daemon-reload && systemctl enable --now ${SERVICE_NAME}`, act: () => enableService() },
  ];
}

function installExecutable(from: string, to: string): void {
  if (from === to) return;
  mkdirSync(dirname(to), { recursive: true });
  // Copied beside and renamed, so a running service never sees a half-written file.
  copyFileSync(from, `${to}.new`);
  chmodSync(`${to}.new`, 0o755);
  renameSync(`${to}.new`, to);
}

function addGpuGroups(user: string): void {
  for (const group of ["render", "video"]) {
    if (run(["getent", "group", group], { allowFailure: true })) run(["usermod", "-a", "-G", group, user]);
  }
}

function writeKeepingBackup(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  if (existsSync(path)) renameSync(path, `${path}.bak`);
  writeFileSync(path, text, { mode });
}

function enableService(): void {
  if (!systemdIsRunning()) {
    console.log(`systemd is not running on this machine: start it later with "systemctl enable --now ${SERVICE_NAME}"`);
    return;
  }
  run(["systemctl", "daemon-reload"]);
  run(["systemctl", "enable", "--now", SERVICE_NAME]);
}

export async function installServiceCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: installServiceFlags,
    allowPositionals: true,
  });
  if (values.help) {
    console.log(installServiceHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const settings = settingsFrom(values);
  const plan = steps(settings, values["dry-run"] && !values.binary && !isCompiledExecutable ? "<the llamux executable>" : source(values));
  if (values["dry-run"]) {
    console.log(`# ${settings.unitPath}\n${systemdUnit(settings)}\n# ${settings.environmentPath}\n${environmentFile(settings)}`);
    console.log(`# steps\n${plan.map((step, i) => `${i + 1}. ${step.say}`).join("\n")}`);
    return 0;
  }
  if (process.getuid?.() !== 0) throw new Error("install-service must run as root (try: sudo llamux install-service)");
  for (const step of plan) {
    console.log(`- ${step.say}`);
    step.act();
  }
  console.log(`llamux is installed as a service. Logs: journalctl -u ${SERVICE_NAME}; settings: ${settings.environmentPath}`);
  return 0;
}
