// Text from elsewhere (an MCP server's tool names, descriptions and errors, a peer's answer in an error)
// as it may be printed to a terminal or a log line: control characters (C0, DEL, C1) and the invisible
// direction marks written as escapes, so that none can move the cursor, retitle or clear the terminal,
// start a fake log line or reorder what follows; and, where a width is given, cut to it.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escape(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with its control characters escaped (`\x1b`), at most `maxChars` long (the cut marked with "…"). */
export function printable(text: string, maxChars = Number.POSITIVE_INFINITY): string {
  const shown = text.replace(UNPRINTABLE, escape);
  return shown.length > maxChars ? `${shown.slice(0, Math.max(0, maxChars - 1))}…` : shown;
}
