// Chat messages and tool definitions as the Go values an Ollama TEMPLATE sees: api.Message,
// api.ToolCall, api.Tool with their field names (.Role, .Content, .ToolCalls, .Function.Name, …),
// their String methods (printing a tool or call arguments writes JSON) and their JSON forms.
// Object keys keep the order the client sent them in, for JSON and printing alike.
import type { ChatMessage, ToolCall, ToolDefinition } from "../types.ts";
import { goStruct, toGoJson, withMethods } from "./values.ts";

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {});
const defined = (entries: Json): Json => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0)));

/** Call arguments as a map that prints as JSON (Ollama's ToolCallFunctionArguments). */
function argumentsValue(args: ToolCall["function"]["arguments"]): unknown {
  let parsed: unknown = args;
  if (typeof args === "string") {
    try {
      parsed = JSON.parse(args);
    } catch {
      return args;
    }
  }
  const map = { ...asObject(parsed) };
  return withMethods(map, { string: () => toGoJson(map) });
}

function toolCallValue(call: ToolCall, index: number) {
  const args = argumentsValue(call.function.arguments);
  const wire = () => defined({ id: call.id, function: defined({ index: index || undefined, name: call.function.name, arguments: args }) });
  const fn = goStruct("api.ToolCallFunction", { Index: index, Name: call.function.name, Arguments: args }, { json: () => wire().function });
  return goStruct("api.ToolCall", { ID: call.id ?? "", Function: fn }, { json: wire });
}

export function messageValue(message: ChatMessage) {
  const toolCalls = (message.tool_calls ?? []).map(toolCallValue);
  const fields = {
    Role: message.role,
    Content: message.content ?? "",
    Thinking: message.reasoning_content ?? "",
    Images: [],
    ToolCalls: toolCalls,
    ToolName: message.role === "tool" ? (message.name ?? "") : "",
    ToolCallID: message.tool_call_id ?? "",
  };
  const json = () => ({
    role: fields.Role,
    content: fields.Content,
    ...defined({ thinking: fields.Thinking, tool_calls: toolCalls, tool_name: fields.ToolName, tool_call_id: fields.ToolCallID }),
  });
  return goStruct("api.Message", fields, { json });
}

/** A JSON-schema type: one name or several; prints as the name, or [a b] for several. */
function propertyType(type: unknown) {
  const names = Array.isArray(type) ? type.map(String) : typeof type === "string" ? [type] : [];
  return withMethods([...names], {
    string: () => (names.length === 1 ? names[0]! : names.length === 0 ? "" : `[${names.join(" ")}]`),
    json: () => (names.length === 1 ? names[0] : names),
  });
}

function propertyValue(schema: unknown): unknown {
  const property = asObject(schema);
  const nested = property.properties === undefined ? undefined : propertiesValue(property.properties);
  const fields = {
    AnyOf: Array.isArray(property.anyOf) ? property.anyOf.map(propertyValue) : [],
    Type: propertyType(property.type),
    Items: property.items,
    Description: typeof property.description === "string" ? property.description : "",
    Enum: Array.isArray(property.enum) ? property.enum : [],
    Properties: nested,
  };
  return goStruct("api.ToolProperty", fields, { json: () => property });
}

function propertiesValue(properties: unknown) {
  const entries = Object.entries(asObject(properties)).map(([name, schema]) => [name, propertyValue(schema)] as const);
  return Object.fromEntries(entries);
}

export function toolValue(tool: ToolDefinition) {
  const parameters = asObject(tool.function.parameters);
  const wire = () => tool;
  const fn = goStruct(
    "api.ToolFunction",
    {
      Name: tool.function.name,
      Description: tool.function.description ?? "",
      Parameters: goStruct(
        "api.ToolFunctionParameters",
        {
          Type: typeof parameters.type === "string" ? parameters.type : "object",
          Defs: parameters.$defs,
          Items: parameters.items,
          Required: Array.isArray(parameters.required) ? parameters.required : [],
          Properties: propertiesValue(parameters.properties),
        },
        { json: () => parameters },
      ),
    },
    { string: () => toGoJson(tool.function), json: () => tool.function },
  );
  return goStruct("api.Tool", { Type: tool.type, Items: undefined, Function: fn }, { string: () => toGoJson(wire()), json: wire });
}

/** The tool list: printing it (`{{ .Tools }}`) writes the JSON array, as Ollama's Tools type does. */
export function toolsValue(tools: ToolDefinition[]) {
  return withMethods(tools.map(toolValue), { string: () => toGoJson(tools), json: () => tools });
}
