// Named voices: speaker files found in folders, read without blocking (a FIFO named like a voice is
// skipped), the first folder winning a name, OpenAI's names meaning the model's own voice.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AudioInputError } from "../../src/audio/audio-input-error.ts";
import { MAX_SPEAKER_FILE_BYTES, UnknownVoiceError, chooseVoice, listVoices, resolveVoice } from "../../src/audio/voices.ts";

const root = mkdtempSync(join(tmpdir(), "llamux-voices-unit-"));
const own = join(root, "own");
const shared = join(root, "shared");
mkdirSync(own);
mkdirSync(shared);
writeFileSync(join(own, "narrator.WAV"), "");
writeFileSync(join(own, "notes.txt"), "");
writeFileSync(join(own, ".wav"), "");
mkdirSync(join(own, "folder.wav"));
writeFileSync(join(shared, "narrator.mp3"), "");
writeFileSync(join(shared, "alloy.flac"), "");
writeFileSync(join(shared, "guide.mp3"), "");
writeFileSync(join(shared, "guide.wav"), "");
expect(Bun.spawnSync(["mkfifo", join(shared, "pipe.wav")]).exitCode).toBe(0);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("listVoices", () => {
  test("regular speaker files by name, the first folder winning; FIFOs, folders and other files are not voices", async () => {
    const voices = await listVoices([own, join(root, "missing"), shared]);
    expect([...voices.entries()].sort()).toEqual([
      ["alloy", join(shared, "alloy.flac")],
      ["guide", join(shared, "guide.mp3")],
      ["narrator", join(own, "narrator.WAV")],
    ]);
  });

  test("lists asynchronously, so a request path never waits on the disk with the thread held", async () => {
    const listing = listVoices([own]);
    expect(listing).toBeInstanceOf(Promise);
    expect((await listing).size).toBe(1);
  });

  test("a missing folder lists nothing", async () => {
    expect((await listVoices([join(root, "missing")])).size).toBe(0);
  });
});

describe("chooseVoice", () => {
  test("a file by name, else the model's own voice for no name or an OpenAI name, else unknown with what is available", async () => {
    expect(await chooseVoice("guide", [own, shared])).toEqual({ kind: "file", name: "guide", path: join(shared, "guide.mp3") });
    expect(await chooseVoice("alloy", [shared])).toEqual({ kind: "file", name: "alloy", path: join(shared, "alloy.flac") });
    expect(await chooseVoice("alloy", [own])).toEqual({ kind: "model" });
    expect(await chooseVoice("Echo", [own])).toEqual({ kind: "model" });
    expect(await chooseVoice(undefined, [own])).toEqual({ kind: "model" });
    expect(await chooseVoice("", [own])).toEqual({ kind: "model" });
    expect(await chooseVoice("pipe", [own, shared])).toEqual({ kind: "unknown", available: ["narrator", "alloy", "guide"] });
  });
});

describe("resolveVoice", () => {
  test("a speaker file's bytes, undefined for the model's own voice, an UnknownVoiceError (a 400's AudioInputError) for anything else", async () => {
    const small = join(root, "small");
    mkdirSync(small);
    writeFileSync(join(small, "tiny.wav"), "RIFF");
    expect(await resolveVoice("tiny", [small, own])).toEqual(new TextEncoder().encode("RIFF"));
    expect(await resolveVoice("nova", [small, own])).toBeUndefined();
    expect(await resolveVoice(undefined, [small])).toBeUndefined();
    const unknown = await resolveVoice("nobody", [small, own]).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(UnknownVoiceError);
    expect(unknown).toBeInstanceOf(AudioInputError);
    expect((unknown as Error).message).toStartWith(`Voice "nobody" is not available: this server has the speaker files "tiny", "narrator"; OpenAI's names (alloy,`);
    const none = await resolveVoice("nobody", [join(root, "missing")]).catch((error: unknown) => error);
    expect((none as Error).message).toContain(`no speaker files (add WAV, MP3 or FLAC files to ${join(root, "missing")})`);
  });

  test("a speaker file past the size limit is refused without reading it", async () => {
    const big = join(root, "big");
    mkdirSync(big);
    writeFileSync(join(big, "huge.wav"), "");
    truncateSync(join(big, "huge.wav"), MAX_SPEAKER_FILE_BYTES + 1);
    await expect(resolveVoice("huge", [big])).rejects.toThrow(`Cannot use voice "huge": its file is ${MAX_SPEAKER_FILE_BYTES + 1} bytes`);
  });
});
