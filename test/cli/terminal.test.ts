// Ollama's number and time formats, the column table, and the progress bar's drawing.
import { expect, test } from "bun:test";
import { humanBytes, humanDuration, humanTime } from "../../src/cli/terminal/format.ts";
import { ProgressView } from "../../src/cli/terminal/progress-bar.ts";
import { formatTable } from "../../src/cli/terminal/table.ts";
import { processorText } from "../../src/cli/ps.ts";
import { WordWrapWriter } from "../../src/cli/chat/word-wrap.ts";

test("humanBytes uses decimal units, one decimal below 10", () => {
  expect(humanBytes(512)).toBe("512 B");
  expect(humanBytes(2_019_393_189)).toBe("2.0 GB");
  expect(humanBytes(638_000_000)).toBe("638 MB");
  expect(humanBytes(4_000_000)).toBe("4 MB");
  expect(humanBytes(44_976_960)).toBe("44 MB");
});

test("humanTime says ago, from now, and Forever", () => {
  const now = Date.UTC(2026, 0, 1);
  expect(humanTime(new Date(now - 300), now)).toBe("Less than a second ago");
  expect(humanTime(new Date(now - 90_000), now)).toBe("About a minute ago");
  expect(humanTime(new Date(now - 14 * 86_400_000), now)).toBe("2 weeks ago");
  expect(humanTime(new Date(now + 4 * 60_000 + 500), now)).toBe("4 minutes from now");
  expect(humanTime(new Date(now + 300 * 365 * 86_400_000), now)).toBe("Forever");
  expect(humanDuration(3 * 3_600_000)).toBe("3 hours");
});

test("tables pad columns four spaces apart", () => {
  expect(formatTable(["NAME", "ID"], [["a:latest", "123"]])).toBe("NAME        ID\na:latest    123");
  expect(processorText(100, 0)).toBe("100% CPU");
  expect(processorText(100, 100)).toBe("100% GPU");
  expect(processorText(100, 52)).toBe("48%/52% CPU/GPU");
});

test("the progress bar redraws one line per status with percent, sizes, speed and time left", async () => {
  let written = "";
  const view = new ProgressView({ write: (text) => void (written += text), isTTY: true, columns: 200 });
  view.update({ status: "pulling manifest" });
  view.update({ status: "pulling abc", total: 2_000_000_000, completed: 0 });
  await Bun.sleep(300);
  view.update({ status: "pulling abc", total: 2_000_000_000, completed: 1_000_000_000 });
  view.update({ status: "pulling abc", total: 2_000_000_000, completed: 2_000_000_000 });
  view.finish();
  const lines = written.split("\n").map((line) => line.split("\r\x1b[K").at(-1));
  expect(lines[0]).toBe("pulling manifest");
  expect(lines[1]).toMatch(/^pulling abc: 100% ▕█{25}▏ 2 GB\/2 GB +\d+(\.\d)? [KMG]B\/s$/);
  expect(written).toMatch(/pulling abc:  50% ▕█{13} {12}▏ 1 GB\/2 GB +\d+(\.\d)? [KMG]B\/s +\d+(m\d+)?s/);
});

test("word wrap breaks between words at the width", () => {
  let out = "";
  const writer = new WordWrapWriter((text) => void (out += text), 10);
  for (const piece of ["hello wor", "ld again ", "and more"]) writer.push(piece);
  writer.finish();
  expect(out).toBe("hello\nworld\nagain and\nmore");
});
