// `llamux keys create|list|revoke|usage`: the named keys of the keys file, which a running `llamux serve`
// reads again within a second of any change. Only an argon2id hash of each secret is stored; the secret
// is printed once, by `create`.
import { parseArgs } from "node:util";
import { defaultKeysPath, emptyKeyFile, type KeyEntry, keyNameSchema, readKeyFile, usagePathFor, writeKeyFile } from "../keys/key-file.ts";
import { expiryFrom } from "../keys/key-expiry.ts";
import { DEFAULT_SCOPES, isKeyScope, KEY_SCOPES, type KeyScope } from "../keys/key-scopes.ts";
import { hashSecret, newKeySecret } from "../keys/key-secret.ts";
import { readUsageFile } from "../keys/usage-book.ts";
import { UsageError, wholeNumberOption } from "../usage-error.ts";
import { formatTable } from "./terminal/table.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

const options = {
  scope: { type: "string", multiple: true, value: "SCOPE", help: "create: what the key may do, of the scopes above; repeat or comma-separate (default: chat, embeddings, audio)" },
  models: { type: "string", value: "LIST", help: `create: models the key may run, comma-separated ("llama3.2", "hf.co/org/*"); default all` },
  rpm: { type: "string", value: "N", help: "create: requests per minute" },
  tpm: { type: "string", value: "N", help: "create: prompt plus completion tokens per minute" },
  "tokens-per-day": { type: "string", value: "N", help: "create: prompt plus completion tokens per day (UTC)" },
  "max-parallel": { type: "string", value: "N", help: "create: sequences the key's requests may hold at once" },
  weight: { type: "string", value: "N", help: "create: the key's share of sequences against other keys' when several wait (default 1)" },
  expires: { type: "string", value: "WHEN", help: "create: 30d, 12h, 90m, 2w, or an ISO date: the key is refused from then on" },
  "keys-file": { type: "string", value: "FILE", help: "the keys file" },
  json: { type: "boolean", help: "list and usage: print JSON" },
  ...helpFlag,
} as const satisfies Flags;

export const keysFlags = options;

export const keysPage: HelpPage = {
  usage: ["llamux keys create NAME [options]", "llamux keys list [--json]", "llamux keys revoke NAME", "llamux keys usage [NAME] [--json]"],
  description: `Named API keys for "llamux serve", kept in $XDG_CONFIG_HOME/llamux/keys.json (else
~/.config/llamux/keys.json; --keys-file FILE for another). A running server reads the file again within
a second of a change: a new key works at once, a revoked one stops at once.`,
  sections: [
    {
      title: "Commands",
      items: [
        ["create NAME", "prints the new key's secret once (llx-...); the file keeps only an argon2id hash of it"],
        ["list", "the keys: name, id, scopes, models, limits, expiry (never a secret)"],
        ["revoke NAME", "removes the key: its requests are refused from the server's next read of the file"],
        ["usage [NAME]", "requests, tokens and refusals per key, as the server last wrote them (keys.usage.json)"],
      ],
    },
    {
      title: "Scopes",
      items: [
        ["chat", "generate (chat, completions, responses, messages, tokenize)"],
        ["embeddings", "embeddings, reranking, scoring"],
        ["audio", "transcription and speech"],
        ["admin", "pull, create, copy, delete, push, load, unload, downloads; read every key's usage and /metrics"],
        ["mcp", "let requests use the server's MCP servers (tools it runs)"],
      ],
    },
  ],
  flags: options,
};

export const keysHelp = renderHelp(keysPage);


type Values = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof options }>>["values"];

function scopesOf(given: string[] | undefined): KeyScope[] {
  if (!given) return [...DEFAULT_SCOPES];
  const scopes = given.flatMap((value) => value.split(",")).map((scope) => scope.trim()).filter(Boolean);
  for (const scope of scopes) if (!isKeyScope(scope)) throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(", ")}, got "${scope}"`);
  return [...new Set(scopes as KeyScope[])];
}

function keyName(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`keys ${command} takes one key NAME`);
  const parsed = keyNameSchema.safeParse(positionals[0]);
  if (!parsed.success) throw new UsageError(`Cannot use key name "${positionals[0]}": ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

async function create(path: string, name: string, values: Values): Promise<number> {
  const file = readKeyFile(path) ?? emptyKeyFile();
  if (file.keys.some((key) => key.name === name)) throw new Error(`Cannot create key "${name}": a key of that name exists (revoke it first)`);
  const weight = values.weight === undefined ? undefined : Number(values.weight);
  if (weight !== undefined && !(weight > 0 && weight <= 1000)) throw new UsageError(`--weight must be a number above 0 and at most 1000, got "${values.weight}"`);
  let expiresAt: string | undefined;
  try {
    expiresAt = values.expires === undefined ? undefined : expiryFrom(values.expires);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const models = values.models?.split(",").map((model) => model.trim()).filter(Boolean);
  if (models?.length === 0) throw new UsageError("--models must name at least one model");
  let { id, secret } = newKeySecret();
  while (file.keys.some((key) => key.id === id)) ({ id, secret } = newKeySecret());
  const count = (flag: keyof Values & string) => wholeNumberOption(values[flag] as string | undefined, flag, 1);
  const entry: KeyEntry = {
    name, id, hash: await hashSecret(secret), scopes: scopesOf(values.scope),
    ...(models ? { models } : {}),
    ...(count("rpm") !== undefined ? { rpm: count("rpm")! } : {}),
    ...(count("tpm") !== undefined ? { tpm: count("tpm")! } : {}),
    ...(count("tokens-per-day") !== undefined ? { tokens_per_day: count("tokens-per-day")! } : {}),
    ...(count("max-parallel") !== undefined ? { max_parallel: count("max-parallel")! } : {}),
    ...(weight !== undefined ? { weight } : {}),
    created_at: new Date().toISOString(),
    ...(expiresAt ? { expires_at: expiresAt } : {}),
  };
  await writeKeyFile(path, { ...file, keys: [...file.keys, entry] });
  console.error(`Created key "${name}" (${entry.scopes.join(", ") || "no scopes"}) in ${path}. Its secret, shown only now:`);
  console.log(secret);
  return 0;
}

function limitsText(key: KeyEntry): string {
  const parts = [
    key.rpm !== undefined ? `rpm ${key.rpm}` : "", key.tpm !== undefined ? `tpm ${key.tpm}` : "",
    key.tokens_per_day !== undefined ? `${key.tokens_per_day} tokens/day` : "", key.max_parallel !== undefined ? `${key.max_parallel} parallel` : "",
    key.weight !== undefined && key.weight !== 1 ? `weight ${key.weight}` : "",
  ].filter(Boolean);
  return parts.join(", ") || "-";
}

function list(path: string, json: boolean): number {
  const keys = readKeyFile(path)?.keys ?? [];
  if (json) {
    console.log(JSON.stringify(keys.map(({ hash: _hash, ...key }) => key), null, 2));
    return 0;
  }
  if (keys.length === 0) {
    console.error(`No keys in ${path} (create one with: llamux keys create NAME)`);
    return 0;
  }
  console.log(formatTable(["NAME", "ID", "SCOPES", "MODELS", "LIMITS", "EXPIRES"], keys.map((key) => [
    key.name, key.id, key.scopes.join(",") || "-", key.models?.join(",") ?? "all", limitsText(key), key.expires_at ?? "never",
  ])));
  return 0;
}

async function revoke(path: string, name: string): Promise<number> {
  const file = readKeyFile(path);
  if (!file?.keys.some((key) => key.name === name)) throw new Error(`Cannot revoke key "${name}": no such key in ${path}`);
  await writeKeyFile(path, { ...file, keys: file.keys.filter((key) => key.name !== name) });
  console.error(`Revoked key "${name}": a running server refuses it from its next read of ${path}`);
  return 0;
}

function usage(path: string, name: string | undefined, json: boolean): number {
  const book = readUsageFile(usagePathFor(path));
  const owners = name === undefined ? book.owners() : [name];
  if (name !== undefined && !book.owners().includes(name) && !readKeyFile(path)?.keys.some((key) => key.name === name)) {
    throw new Error(`Cannot show the usage of key "${name}": no such key in ${path}`);
  }
  const rows = owners.map((owner) => ({ key: owner, ...book.get(owner) }));
  if (json) {
    console.log(JSON.stringify(rows, null, 2));
    return 0;
  }
  console.log(formatTable(["KEY", "REQUESTS", "PROMPT", "COMPLETION", "CACHED", "TODAY", "LIMITED", "LAST USED"], rows.map((row) => [
    row.key, String(row.requests), String(row.promptTokens), String(row.completionTokens), String(row.cachedTokens), String(row.dayTokens),
    String(row.rateLimited), row.lastUsedAt ?? "never",
  ])));
  return 0;
}

export async function keysCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options });
  if (values.help) {
    console.log(keysHelp);
    return 0;
  }
  const [command, ...rest] = positionals;
  const path = values["keys-file"] ?? defaultKeysPath();
  const createOnly = ["scope", "models", "rpm", "tpm", "tokens-per-day", "max-parallel", "weight", "expires"] as const;
  const misplaced = createOnly.find((flag) => values[flag] !== undefined);
  if (command !== "create" && misplaced) throw new UsageError(`--${misplaced} is an option of "keys create"`);
  switch (command) {
    case "create":
      return create(path, keyName(rest, "create"), values);
    case "list":
      if (rest.length) throw new UsageError("keys list takes no arguments");
      return list(path, values.json ?? false);
    case "revoke":
      return revoke(path, keyName(rest, "revoke"));
    case "usage":
      if (rest.length > 1) throw new UsageError("keys usage takes at most one key NAME");
      return usage(path, rest[0], values.json ?? false);
    default:
      throw new UsageError(command === undefined ? "keys needs a sub-command: create, list, revoke or usage" : `Unknown keys sub-command "${command}": use create, list, revoke or usage`);
  }
}
