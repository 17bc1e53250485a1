// The systemd unit and environment file of `llamux install-service`, as plain text from options, so
// that --dry-run shows exactly what would be installed and tests can verify it with systemd-analyze.
import { profileNamesOf, profiles, type ProfileName } from "../server/profiles/index.ts";

export interface ServiceSettings {
  /** Absolute path of the llamux executable the unit runs. */
  executable: string;
  profile: ProfileName | "all";
  /** Address to bind; loopback unless the user exposes it on purpose. */
  host: string;
  /** Model store; the service may write only here and in its state and cache directories. */
  modelsDir: string;
  /** System user and group the server runs as. */
  user: string;
  unitPath: string;
  environmentPath: string;
}

export const SERVICE_NAME = "llamux";

export const defaultServiceSettings = {
  profile: "a",
  host: "127.0.0.1",
  modelsDir: "/var/lib/llamux/models",
  user: "llamux",
  unitPath: `/etc/systemd/system/${SERVICE_NAME}.service`,
  environmentPath: `/etc/${SERVICE_NAME}/${SERVICE_NAME}.env`,
} satisfies Partial<ServiceSettings>;

/** State (the user's home) and the cache the executable extracts its libraries into. */
const STATE_DIR = "/var/lib/llamux";
const CACHE_DIR = "/var/cache/llamux";

function portsOf(profile: ProfileName | "all"): string {
  return profileNamesOf(profile).map((name) => `${profiles[name].defaultPort} (${profiles[name].anchor})`).join(", ");
}

/** systemd splits ExecStart on spaces; quote what could contain one. */
function quoteArgument(value: string): string {
  return /[\s"'\\]/.test(value) ? `"${value.replace(/(["\\])/g, "\\$1")}"` : value;
}

/** Models kept in a home directory: homes are hidden from the service, so that one is mounted back in. */
function homeProtection(modelsDir: string): string {
  const inHome = /^\/(home|root|run\/user)(\/|$)/.test(modelsDir);
  return inHome ? `ProtectHome=tmpfs\nBindPaths=${quoteArgument(modelsDir)}` : "ProtectHome=yes";
}

export function systemdUnit(s: ServiceSettings): string {
  const writable = [...new Set([STATE_DIR, CACHE_DIR, s.modelsDir])].map(quoteArgument).join(" ");
  return `# Installed by "llamux install-service"; "llamux uninstall-service" removes it.
# Settings live in ${s.environmentPath}; logs: journalctl -u ${SERVICE_NAME}
[Unit]
Description=llamux model server (profile ${s.profile}: ${portsOf(s.profile)})
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${s.user}
Group=${s.user}
EnvironmentFile=-${s.environmentPath}
Environment=HOME=${STATE_DIR} LLAMUX_CACHE_DIR=${CACHE_DIR}
ExecStart=${quoteArgument(s.executable)} serve --profile ${s.profile}
Restart=on-failure
RestartSec=3
TimeoutStopSec=30

# Hardening: the server needs the network, its models and its caches, nothing else.
NoNewPrivileges=yes
CapabilityBoundingSet=
AmbientCapabilities=
ProtectSystem=strict
${homeProtection(s.modelsDir)}
PrivateTmp=yes
ReadWritePaths=${writable}
StateDirectory=llamux
CacheDirectory=llamux
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictSUIDSGID=yes
RestrictRealtime=yes
RestrictNamespaces=yes
LockPersonality=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
SystemCallArchitectures=native
UMask=0027
# GPU devices (/dev/nvidia*, /dev/dri) stay visible; PrivateDevices would hide them.

[Install]
WantedBy=multi-user.target
`;
}

/** The environment file: the settings install-service was given, and the others commented out. */
export function environmentFile(s: ServiceSettings): string {
  const hostLine = s.profile === "all" ? `LLAMUX_HOST=${s.host}` : `LLAMUX_HOST=${s.host}:${profiles[s.profile].defaultPort}`;
  return `# Settings of the llamux service. Edit, then: systemctl restart ${SERVICE_NAME}
${hostLine}
LLAMUX_MODELS=${s.modelsDir}
# Require a key from clients (strongly advised when LLAMUX_HOST is not a loopback address):
# LLAMUX_API_KEY=change-me
# LLAMUX_LOG_LEVEL=info
# OLLAMA_KEEP_ALIVE=5m
# OLLAMA_MAX_LOADED_MODELS=3
# OLLAMA_CONTEXT_LENGTH=4096
`;
}
