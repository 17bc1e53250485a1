// Column tables as Ollama's CLI prints them: a header row, left-aligned columns, four spaces between
// columns, no borders.

const COLUMN_GAP = "    ";

/** The table's lines (header first), each without trailing spaces. */
export function formatTable(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  return all
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join(COLUMN_GAP).trimEnd())
    .join("\n");
}
