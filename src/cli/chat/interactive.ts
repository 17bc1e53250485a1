// The interactive chat of `llamux run MODEL`: a `>>> ` prompt, streamed answers, slash commands
// (/set, /show, /clear, /image, /bye), """ multi-line input, Ctrl+C to stop an answer, Ctrl+D to leave.
import { existsSync, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import type { ChatMessage } from "../../chat/types.ts";
import { parseParameterValue } from "../../store/modelfile/index.ts";
import { formatDetails, formatParameters } from "../model-details.ts";
import type { ChatBackend, ChatTurn } from "./backend.ts";
import { formatStats } from "./verbose-stats.ts";
import { WordWrapWriter } from "./word-wrap.ts";

export interface SessionSettings {
  options: Record<string, unknown>;
  system?: string;
  format?: "json";
  verbose: boolean;
  wordWrap: boolean;
  keepAlive?: string;
}

const HELP = `Available Commands:
  /set            Set session variables
  /show           Show model information
  /image PATH Q   Ask a question about an image
  /clear          Clear session context
  /bye            Exit
  /?, /help       Help for a command

Use """ to begin a multi-line message.
Use Ctrl + c to stop an answer, Ctrl + d or /bye to exit.`;

const SET_HELP = `Available Commands:
  /set parameter NAME VALUE   Set a parameter (temperature, top_k, num_predict, stop, ...)
  /set system TEXT            Set the system message
  /set format json            Answer in JSON
  /set noformat               Answer in plain text
  /set verbose                Show timings after each answer
  /set quiet                  Hide timings
  /set wordwrap               Wrap answers at the terminal's width
  /set nowordwrap             Do not wrap`;

const SHOW_HELP = `Available Commands:
  /show info         Show details of this model
  /show license      Show the model's license
  /show modelfile    Show the model's Modelfile
  /show parameters   Show parameters of this model
  /show system       Show the system message
  /show template     Show the prompt template`;

const MEDIA_PATH = /(?:^|\s)((?:\.{1,2}\/|\/|~\/)(?:\\ |[^\s])+?\.(?:jpe?g|png|webp|wav|mp3|flac))\b/gi;
const AUDIO_EXTENSION = /\.(?:wav|mp3|flac)$/i;

/** Image and audio files named in the text: attached (base64), and their paths taken out of the text. */
export function extractImages(text: string): { text: string; images: string[]; audio: string[]; paths: string[]; audioPaths: string[] } {
  const images: string[] = [];
  const audio: string[] = [];
  const paths: string[] = [];
  const audioPaths: string[] = [];
  const rest = text.replace(MEDIA_PATH, (whole, raw: string) => {
    const path = raw.replace(/\\ /g, " ").replace(/^~\//, `${process.env.HOME ?? ""}/`);
    if (!existsSync(path) || !statSync(path).isFile()) return whole;
    const isAudio = AUDIO_EXTENSION.test(path);
    (isAudio ? audio : images).push(readFileSync(path).toString("base64"));
    (isAudio ? audioPaths : paths).push(path);
    return whole.startsWith(" ") || whole.startsWith("\t") ? " " : "";
  });
  return { text: rest.trim(), images, audio, paths, audioPaths };
}

export async function interactiveChat(backend: ChatBackend, settings: SessionSettings): Promise<number> {
  const out = process.stdout;
  const print = (text: string) => out.write(`${text}\n`);
  const rl = createInterface({ input: process.stdin, output: out, terminal: true, prompt: ">>> " });
  let messages: ChatMessage[] = [];
  let multiline: string[] | undefined;
  let answering: AbortController | undefined;
  let closed = false;

  rl.on("SIGINT", () => {
    if (answering) {
      answering.abort();
      return;
    }
    if (multiline) multiline = undefined;
    else if (rl.line === "") print("\nUse Ctrl + d or /bye to exit.");
    else out.write("\n");
    rl.setPrompt(">>> ");
    rl.write(null, { ctrl: true, name: "u" });
    rl.prompt();
  });

  const ask = async (content: string, images: string[], audio: string[] = []) => {
    const turnMessages: ChatMessage[] = [
      ...(settings.system !== undefined ? [{ role: "system", content: settings.system }] : []),
      ...messages,
      { role: "user", content },
    ];
    const turn: ChatTurn = {
      messages: turnMessages, images, ...(audio.length ? { audio } : {}), options: settings.options,
      ...(settings.format ? { format: settings.format } : {}), ...(settings.keepAlive !== undefined ? { keepAlive: settings.keepAlive } : {}),
    };
    answering = new AbortController();
    const writer = new WordWrapWriter((text) => out.write(text), settings.wordWrap ? out.columns : undefined);
    let answer = "";
    let stats;
    try {
      for await (const event of backend.chat(turn, answering.signal)) {
        if (event.type === "content") {
          answer += event.text;
          writer.push(event.text);
        } else stats = event.stats;
      }
    } catch (error) {
      if (!answering.signal.aborted) {
        writer.finish();
        print(`\nError: ${(error as Error).message}`);
        return;
      }
    } finally {
      writer.finish();
    }
    const stopped = answering.signal.aborted;
    answering = undefined;
    print("\n");
    if (stats && settings.verbose) print(`${formatStats(stats)}\n`);
    if (!stopped) messages = [...messages, { role: "user", content }, { role: "assistant", content: answer }];
  };

  const slash = async (line: string): Promise<boolean> => {
    const [command, ...args] = line.trim().split(/\s+/);
    switch (command) {
      case "/bye":
      case "/exit":
        return false;
      case "/?":
      case "/help":
        print(args[0] === "set" ? SET_HELP : args[0] === "show" ? SHOW_HELP : HELP);
        break;
      case "/clear":
        messages = [];
        print("Cleared session context");
        break;
      case "/set":
        setCommand(args, line);
        break;
      case "/show":
        await showCommand(args[0]);
        break;
      case "/image": {
        const [path, ...question] = args;
        if (!path) {
          print("Usage: /image PATH QUESTION");
          break;
        }
        if (!existsSync(path)) {
          print(`Error: no such image "${path}"`);
          break;
        }
        print(`Added image '${path}'`);
        await ask(question.join(" ") || "Describe this image.", [readFileSync(path).toString("base64")]);
        break;
      }
      default:
        print(`Unknown command '${command}'. Type /? for help`);
    }
    return true;
  };

  const setCommand = (args: string[], line: string) => {
    const [what, ...rest] = args;
    switch (what) {
      case "parameter": {
        const [name, ...values] = rest;
        if (!name || values.length === 0) {
          print("Usage: /set parameter NAME VALUE");
          return;
        }
        try {
          const parsed = name === "stop" ? values : parseParameterValue(name, values.join(" "));
          settings.options = { ...settings.options, [name]: parsed };
          print(`Set parameter '${name}' to '${values.join(", ")}'`);
        } catch (error) {
          print(`Couldn't set parameter: ${(error as Error).message}`);
        }
        return;
      }
      case "system": {
        const text = line.replace(/^\s*\/set\s+system\s*/, "").replace(/^"""|"""$/g, "").replace(/^"|"$/g, "");
        settings.system = text;
        print("Set system message.");
        return;
      }
      case "format":
        if (rest[0] !== "json") print("Invalid or missing format. For 'json' mode use '/set format json'");
        else {
          settings.format = "json";
          print("Set format to 'json' mode.");
        }
        return;
      case "noformat":
        delete settings.format;
        print("Disabled format.");
        return;
      case "verbose":
        settings.verbose = true;
        print("Set 'verbose' mode.");
        return;
      case "quiet":
        settings.verbose = false;
        print("Set 'quiet' mode.");
        return;
      case "wordwrap":
        settings.wordWrap = true;
        print("Set 'wordwrap' mode.");
        return;
      case "nowordwrap":
        settings.wordWrap = false;
        print("Set 'nowordwrap' mode.");
        return;
      default:
        print(SET_HELP);
    }
  };

  const showCommand = async (what: string | undefined) => {
    let details;
    try {
      details = await backend.details();
    } catch (error) {
      print(`Couldn't get model details: ${(error as Error).message}`);
      return;
    }
    switch (what) {
      case "info":
        out.write(formatDetails(details));
        return;
      case "license":
        print(details.license || "No license was specified for this model.");
        return;
      case "modelfile":
        out.write(details.modelfile);
        return;
      case "parameters": {
        const model = formatParameters(details.parameterValues);
        const session = formatParameters(settings.options);
        if (!model && !session) print("No parameters were specified for this model.");
        if (model) print(`Model defined parameters:\n${model}`);
        if (session) print(`User defined parameters:\n${session}`);
        return;
      }
      case "system":
        print(settings.system ?? (details.system || "No system message was specified for this model."));
        return;
      case "template":
        print(details.template || "No prompt template was specified for this model.");
        return;
      default:
        print(SHOW_HELP);
    }
  };

  const lines = rl[Symbol.asyncIterator]();
  rl.on("close", () => {
    closed = true;
  });
  rl.prompt();
  for (;;) {
    const next = await lines.next();
    if (next.done) break;
    let line: string = next.value;
    if (multiline) {
      const end = line.trimEnd().endsWith('"""');
      multiline.push(end ? line.trimEnd().slice(0, -3) : line);
      if (!end) {
        rl.prompt();
        continue;
      }
      line = multiline.join("\n");
      multiline = undefined;
      rl.setPrompt(">>> ");
    } else if (line.trimStart().startsWith('"""')) {
      const rest = line.trimStart().slice(3);
      if (rest.trimEnd().endsWith('"""') && rest.trim().length > 0) line = rest.trimEnd().slice(0, -3);
      else {
        multiline = [rest];
        rl.setPrompt("... ");
        rl.prompt();
        continue;
      }
    } else if (line.trimStart().startsWith("/")) {
      if (!(await slash(line))) break;
      rl.prompt();
      continue;
    }
    if (line.trim()) {
      const { text, images, audio, paths, audioPaths } = extractImages(line);
      for (const path of paths) print(`Added image '${path}'`);
      for (const path of audioPaths) print(`Added audio '${path}'`);
      await ask(text, images, audio);
    }
    if (closed) break;
    rl.prompt();
  }
  rl.close();
  return 0;
}
