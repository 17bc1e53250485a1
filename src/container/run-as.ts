// Inside the container image the server drops root for the image's own user when the model cache
// (usually a mounted volume) lets that user write there; a volume only root can write keeps root, and
// says so, rather than failing every pull.
import { accessSync, constants, statSync } from "node:fs";
import { logger } from "../log.ts";

const log = logger("container");

export interface ContainerUser {
  uid: number;
  gid: number;
}

/** "1000:1000" or "1000"; undefined for an empty value (stay as started). */
export function parseContainerUser(value: string | undefined): ContainerUser | undefined {
  if (!value) return undefined;
  const match = /^(\d+)(?::(\d+))?$/.exec(value.trim());
  if (!match) throw new Error(`Cannot use LLAMUX_CONTAINER_USER="${value}": expected UID or UID:GID`);
  const uid = Number(match[1]);
  return { uid, gid: match[2] !== undefined ? Number(match[2]) : uid };
}

/** Whether `user` may create files in `dir`: its owner with write permission, or a world-writable one. */
export function writableBy(dir: string, user: ContainerUser): boolean {
  try {
    const stat = statSync(dir);
    if (!stat.isDirectory()) return false;
    if (stat.uid === user.uid) return (stat.mode & 0o200) !== 0;
    if (stat.gid === user.gid) return (stat.mode & 0o020) !== 0;
    return (stat.mode & 0o002) !== 0;
  } catch {
    return false;
  }
}

/** Switches to `user` when running as root and `dir` lets that user write; returns who the process runs as. */
export function dropRootIfAllowed(dir: string, user: ContainerUser | undefined): "dropped" | "root" | "unchanged" {
  if (!user || process.getuid?.() !== 0 || user.uid === 0) return "unchanged";
  if (!writableBy(dir, user)) {
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      log.warn(`the model cache ${dir} is not writable: pulls will fail (mount a writable volume there)`);
    }
    log.info(`running as root: the model cache ${dir} is not writable by uid ${user.uid} (chown it to ${user.uid}:${user.gid}, or use a named volume, to run unprivileged)`);
    return "root";
  }
  process.setgroups?.([user.gid]);
  process.setgid!(user.gid);
  process.setuid!(user.uid);
  log.debug(`running as uid ${user.uid}, gid ${user.gid}`);
  return "dropped";
}
