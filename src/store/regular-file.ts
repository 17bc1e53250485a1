// Opening a file a request (or a manifest) names, without letting it stall the process: opening a FIFO
// for reading blocks until something writes to it, and a directory or a device reads as something no
// GGUF is. Files are opened with O_NONBLOCK (which never blocks on a FIFO and changes nothing for a
// regular file) and refused unless fstat says they are regular files; statting first answers the common
// case without opening anything.
import { closeSync, constants, fstatSync, openSync, statSync, type Stats } from "node:fs";

/** The kind of a file that is not a regular one, in words. */
export function fileKind(stats: Stats): string {
  if (stats.isFile()) return "a regular file";
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

export class NotRegularFileError extends Error {
  constructor(readonly path: string, readonly kind: string) {
    super(`"${path}" is ${kind}, not a regular file`);
    this.name = "NotRegularFileError";
  }
}

/**
 * What is at `path` (symbolic links followed): undefined when nothing is, else its kind in words.
 * Stats without opening, so a FIFO is told apart before anything could block on it.
 */
export function kindAt(path: string): { regular: boolean; kind: string } | undefined {
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats ? { regular: stats.isFile(), kind: fileKind(stats) } : undefined;
}

/** A descriptor of the regular file at `path`, opened for reading; throws NotRegularFileError for anything else. */
export function openRegularFileSync(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(path, fileKind(stats));
  }
  return fd;
}
