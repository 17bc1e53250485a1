// The Modelfile parser: an explicit character state machine, as Ollama's parser/parser.go is, with
// its rules (case-insensitive instructions, bare / "quoted" / """triple-quoted""" values where a quote
// closes only at the end of a line, `#` comments at line start) and an error naming the line.
import { ModelfileSyntaxError } from "./errors.ts";
import { DEPRECATED_PARAMETERS, isParameterName, parseParameterValue } from "./parameters.ts";
import type { MessageRole, Modelfile, ModelfileCommand, TextInstruction } from "./types.ts";

const enum State {
  LineStart,
  Comment,
  Instruction,
  ParameterName,
  MessageRole,
  ValueStart,
  BareValue,
  QuotedValue,
  TripleQuotedValue,
}

const TEXT_INSTRUCTIONS: ReadonlySet<string> = new Set<TextInstruction>([
  "from", "template", "system", "license", "adapter", "requires", "draft", "renderer", "parser",
]);
const INSTRUCTION_LIST = "FROM, PARAMETER, TEMPLATE, SYSTEM, MESSAGE, ADAPTER, LICENSE, REQUIRES, DRAFT, RENDERER or PARSER";
const MESSAGE_ROLES: ReadonlySet<string> = new Set<MessageRole>(["system", "user", "assistant"]);
const SEMVER = /^v?\d+(\.\d+(\.\d+)?)?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

const isSpace = (ch: string) => ch === " " || ch === "\t";
const isLetter = (ch: string) => (ch >= "a" && ch <= "z") || (ch >= "A" && ch <= "Z");
const isNameChar = (ch: string) => isLetter(ch) || (ch >= "0" && ch <= "9") || ch === "_";

/** Parses Modelfile text. Throws ModelfileSyntaxError (a SyntaxError) with the line of the first problem. */
export function parseModelfile(text: string): Modelfile {
  const source = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = source.split("\n");
  const commands: ModelfileCommand[] = [];
  const warnings: string[] = [];

  let state = State.LineStart;
  let buffer = "";
  // A quoted value: its finished lines (with their newlines) and the line being read.
  let valueLines: string[] = [];
  let currentLine = "";
  let instruction = "";
  let parameter = "";
  let role = "";
  let line = 1;
  let commandLine = 1;
  const fail = (reason: string, at = line): never => {
    throw new ModelfileSyntaxError(reason, at, lines[at - 1] ?? "");
  };

  const emit = (value: string) => {
    if (instruction === "parameter") {
      if (DEPRECATED_PARAMETERS.has(parameter)) warnings.push(`parameter "${parameter}" is deprecated and ignored (line ${commandLine})`);
      else commands.push({ kind: "parameter", name: parameter, value: typedParameter(parameter, value, commandLine, fail), line: commandLine });
    } else if (instruction === "message") {
      commands.push({ kind: "message", role: role as MessageRole, content: value, line: commandLine });
    } else {
      if (instruction === "requires" && !SEMVER.test(value)) fail(`REQUIRES needs a version such as 0.14.0, not "${value}"`, commandLine);
      const stored = instruction === "requires" ? value.replace(/^v/, "") : value;
      commands.push({ kind: instruction as TextInstruction, value: stored, line: commandLine });
    }
    buffer = "";
    state = State.LineStart;
  };
  const missingValue = () => fail(instruction === "parameter" ? `missing value for parameter "${parameter}"` : `missing value for ${instruction.toUpperCase()}`);

  // One step past the end: "" stands for the end of the input and closes whatever is open.
  for (let i = 0; i <= source.length; i++) {
    const ch = i < source.length ? source[i]! : "";
    const endOfLine = ch === "\n" || ch === "";
    switch (state) {
      case State.LineStart:
        if (ch === "#") state = State.Comment;
        else if (isLetter(ch)) {
          buffer = ch;
          commandLine = line;
          state = State.Instruction;
        } else if (!isSpace(ch) && !endOfLine) fail(`unexpected "${ch}": a line must start with an instruction (${INSTRUCTION_LIST})`);
        break;
      case State.Comment:
        if (ch === "\n") state = State.LineStart;
        break;
      case State.Instruction:
        if (isLetter(ch)) buffer += ch;
        else {
          instruction = buffer.toLowerCase();
          const known = TEXT_INSTRUCTIONS.has(instruction) || instruction === "parameter" || instruction === "message";
          if (!known || !(isSpace(ch) || endOfLine)) fail(`unknown instruction "${buffer}${endOfLine || isSpace(ch) ? "" : ch}": expected ${INSTRUCTION_LIST}`);
          if (endOfLine) missingValue();
          buffer = "";
          state = instruction === "parameter" ? State.ParameterName : instruction === "message" ? State.MessageRole : State.ValueStart;
        }
        break;
      case State.ParameterName:
        if (isNameChar(ch)) buffer += ch;
        else if (isSpace(ch) && buffer === "") break;
        else if (isSpace(ch)) {
          parameter = buffer.toLowerCase();
          if (!isParameterName(parameter) && !DEPRECATED_PARAMETERS.has(parameter)) fail(`unknown parameter "${buffer}"`);
          buffer = "";
          state = State.ValueStart;
        } else if (endOfLine) fail(buffer ? `missing value for parameter "${buffer}"` : "missing parameter name after PARAMETER");
        else fail(`unexpected "${ch}" in parameter name "${buffer}"`);
        break;
      case State.MessageRole:
        if (isLetter(ch)) buffer += ch;
        else if (isSpace(ch) && buffer === "") break;
        else if (isSpace(ch) && MESSAGE_ROLES.has(buffer)) {
          role = buffer;
          buffer = "";
          state = State.ValueStart;
        } else if (endOfLine && buffer === "") fail("missing role after MESSAGE");
        else if (endOfLine && MESSAGE_ROLES.has(buffer)) fail(`missing content for MESSAGE ${buffer}`);
        else fail(`message role must be "system", "user" or "assistant", not "${buffer}${isSpace(ch) || endOfLine ? "" : ch}"`);
        break;
      case State.ValueStart:
        if (isSpace(ch)) break;
        if (endOfLine) missingValue();
        valueLines = [];
        currentLine = "";
        if (source.startsWith('"""', i)) {
          state = State.TripleQuotedValue;
          i += 2;
        } else if (ch === '"') state = State.QuotedValue;
        else {
          buffer = ch;
          state = State.BareValue;
        }
        break;
      case State.BareValue:
        if (endOfLine) emit(buffer.trimEnd());
        else buffer += ch;
        break;
      case State.QuotedValue:
      case State.TripleQuotedValue: {
        // A quote closes only where a line ends with it, so quotes inside the value need no escaping.
        // Each line is taken whole and only it is looked at, so a long value costs linear time.
        const quote = state === State.QuotedValue ? '"' : '"""';
        if (!endOfLine) {
          const end = source.indexOf("\n", i);
          currentLine = source.slice(i, end < 0 ? source.length : end);
          i = (end < 0 ? source.length : end) - 1;
          break;
        }
        const trimmed = currentLine.trimEnd();
        if (trimmed.endsWith(quote)) {
          valueLines.push(trimmed.slice(0, -quote.length));
          emit(valueLines.join(""));
        } else if (ch === "") fail(`unterminated ${quote} value: no line ends with the closing ${quote}`, commandLine);
        else valueLines.push(currentLine, "\n");
        currentLine = "";
        break;
      }
    }
    if (ch === "\n") line++;
  }

  if (!commands.some((command) => command.kind === "from")) throw new ModelfileSyntaxError("no FROM instruction: a Modelfile must name its base model", 0);
  return { commands, warnings };
}

function typedParameter(name: string, text: string, line: number, fail: (reason: string, at: number) => never) {
  try {
    return parseParameterValue(name, text);
  } catch (error) {
    return fail((error as Error).message, line);
  }
}
