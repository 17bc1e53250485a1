// `llamux install-service --dry-run` prints the unit it would install: systemd itself must accept it
// (systemd-analyze verify), and it must carry the hardening the issue asks for.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");

function llamux(args: string[]): { code: number; stdout: string; stderr: string } {
  const result = Bun.spawnSync([process.execPath, main, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, LLAMUX_LOG_LEVEL: "warn" } });
  return { code: result.exitCode ?? -1, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** The sections of the dry run, split at its "# <path>" headings. */
function sections(output: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const block of output.split(/^# (?=\/|steps$)/m).slice(1)) {
    const newline = block.indexOf("\n");
    parts.set(block.slice(0, newline), block.slice(newline + 1));
  }
  return parts;
}

function dryRun(extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), "llamux-service-"));
  const binary = join(dir, "llamux");
  writeFileSync(binary, "#!/bin/sh\n");
  chmodSync(binary, 0o755);
  const result = llamux(["install-service", "--dry-run", "--binary", binary, ...extra]);
  expect(result.code).toBe(0);
  return { dir, parts: sections(result.stdout) };
}

function verify(unitText: string, dir: string): { code: number; output: string } {
  // systemd checks that ExecStart exists: point it at a real executable in the temporary copy.
  const unitPath = join(dir, "llamux.service");
  writeFileSync(unitPath, unitText.replace(/^ExecStart=\S+/m, `ExecStart=${join(dir, "llamux")}`));
  const result = Bun.spawnSync(["systemd-analyze", "verify", "--man=no", unitPath], { stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode ?? -1, output: `${result.stdout}${result.stderr}` };
}

describe("install-service --dry-run", () => {
  test("the unit passes systemd-analyze verify and carries the hardening", () => {
    const { dir, parts } = dryRun(["--profile", "all", "--host", "0.0.0.0"]);
    const unit = parts.get("/etc/systemd/system/llamux.service")!;
    expect(unit).toBeDefined();
    const verified = verify(unit, dir);
    expect(verified.output).toBe("");
    expect(verified.code).toBe(0);
    for (const directive of [
      "Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
      "User=llamux", "CapabilityBoundingSet=", "EnvironmentFile=-/etc/llamux/llamux.env",
    ]) {
      expect(unit.split("\n")).toContain(directive);
    }
    expect(unit).toMatch(/^ReadWritePaths=.*\/var\/lib\/llamux\/models/m);
    expect(unit).toMatch(/^ExecStart=\/usr\/local\/bin\/llamux serve --profile all$/m);
    const env = parts.get("/etc/llamux/llamux.env")!;
    expect(env).toContain("LLAMUX_HOST=0.0.0.0\n");
    expect(env).toContain("LLAMUX_MODELS=/var/lib/llamux/models\n");
    expect(parts.get("steps")).toContain("create the system user llamux");
  });

  test("models in a home directory are mounted into the otherwise hidden homes", () => {
    const { dir, parts } = dryRun(["--models", "/home/alice/models", "--profile", "b"]);
    const unit = parts.get("/etc/systemd/system/llamux.service")!;
    expect(unit.split("\n")).toContain("ProtectHome=tmpfs");
    expect(unit.split("\n")).toContain("BindPaths=/home/alice/models");
    expect(verify(unit, dir).code).toBe(0);
    expect(parts.get("/etc/llamux/llamux.env")).toContain("LLAMUX_HOST=127.0.0.1:8000\n");
  });

  test("a bad profile is a usage error; a real install needs root", () => {
    expect(llamux(["install-service", "--dry-run", "--profile", "x"]).code).toBe(2);
    if (process.getuid?.() !== 0) expect(llamux(["install-service", "--binary", process.execPath]).stderr).toContain("must run as root");
  });

  test("uninstall-service --dry-run lists its steps and --purge adds the user's removal", () => {
    const plain = llamux(["uninstall-service", "--dry-run"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("systemctl disable --now llamux");
    expect(plain.stdout).not.toContain("remove the user");
    expect(llamux(["uninstall-service", "--dry-run", "--purge"]).stdout).toContain("remove the user llamux");
  });
});
