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
  // A NUL cannot be in any file name; the system call would refuse it with a TypeError.
  if (path.includes("\0")) return { regular: false, kind: "a path with a NUL byte" };
  let stats: Stats | undefined;
  try {
    stats = statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    return { regular: false, kind: unstattable(error) };
  }
  return stats ? { regular: stats.isFile(), kind: fileKind(stats) } : undefined;
}

/** Why a path could not be statted, in words (a link loop, a name too long, a folder it may not enter). */
function unstattable(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case "ELOOP": return "a loop of symbolic links";
    case "ENAMETOOLONG": return "a name too long for the file system";
    case "EACCES": case "EPERM": return "a path this server may not read";
    case "ENOTDIR": return "a path through something that is not a directory";
    default: return `a path that cannot be read (${(error as Error).message})`;
  }
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
