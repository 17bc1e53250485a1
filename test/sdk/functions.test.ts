// Function definitions without a model: JSON Schema translation of every parameter type (nested ones
// included), name checks at registration, call validation, options and messages.
import { describe, expect, test } from "bun:test";
import {
  AlternateFunctionCallParser, ChatMessage, ChatMessageContent, DefaultFunctionCallParser, GenerationOptions, InvalidFunctionError,
  LeapArr, LeapBool, LeapFunction, LeapFunctionParameter, LeapInt, LeapNull, LeapNum, LeapObj, LeapStr, MessageResponse, validateFunctionCall,
} from "llamux";

describe("parameter types to JSON Schema", () => {
  test("each scalar type, with enumValues and its own description", () => {
    expect(new LeapStr({ enumValues: ["a", "b"], description: "letter" }).toJsonSchema()).toEqual({ type: "string", enum: ["a", "b"], description: "letter" });
    expect(new LeapNum({ enumValues: [0.5, 1.5] }).toJsonSchema()).toEqual({ type: "number", enum: [0.5, 1.5] });
    expect(new LeapInt({ enumValues: [1, 2], description: "n" }).toJsonSchema()).toEqual({ type: "integer", enum: [1, 2], description: "n" });
    expect(new LeapBool({ description: "flag" }).toJsonSchema()).toEqual({ type: "boolean", description: "flag" });
    expect(new LeapNull().toJsonSchema()).toEqual({ type: "null" });
    expect(new LeapStr().toJsonSchema()).toEqual({ type: "string" });
  });

  test("arrays and objects nest, and nested types keep their descriptions", () => {
    const point = new LeapObj({
      properties: { x: new LeapNum({ description: "x coordinate" }), y: new LeapNum(), tags: new LeapArr({ itemType: new LeapStr({ enumValues: ["a"] }), description: "labels" }) },
      required: ["x", "y"],
      description: "a point",
    });
    const path = new LeapArr({ itemType: point, description: "points in order" });
    expect(new LeapArr({ itemType: new LeapArr({ itemType: new LeapInt({ description: "cell" }) }) }).toJsonSchema()).toEqual({
      type: "array", items: { type: "array", items: { type: "integer", description: "cell" } },
    });
    expect(path.toJsonSchema()).toEqual({
      type: "array",
      description: "points in order",
      items: {
        type: "object",
        description: "a point",
        properties: {
          x: { type: "number", description: "x coordinate" },
          y: { type: "number" },
          tags: { type: "array", description: "labels", items: { type: "string", enum: ["a"] } },
        },
        required: ["x", "y"],
      },
    });
  });

  test("a function becomes a tool whose parameters' descriptions replace their types' own", () => {
    const fn = new LeapFunction({
      name: "plan_route",
      description: "Plans a route",
      parameters: [
        new LeapFunctionParameter({ name: "mode", type: new LeapStr({ enumValues: ["walk", "drive"], description: "ignored here" }), description: "travel mode" }),
        { name: "stops", type: new LeapArr({ itemType: new LeapObj({ properties: { name: new LeapStr({ description: "stop name" }) }, required: ["name"] }) }), description: "stops", optional: true },
        { name: "nothing", type: new LeapNull(), description: "always null", optional: true },
      ],
    });
    expect(fn.toToolDefinition()).toEqual({
      type: "function",
      function: {
        name: "plan_route",
        description: "Plans a route",
        parameters: {
          type: "object",
          properties: {
            mode: { type: "string", enum: ["walk", "drive"], description: "travel mode" },
            stops: { type: "array", items: { type: "object", properties: { name: { type: "string", description: "stop name" } }, required: ["name"] }, description: "stops" },
            nothing: { type: "null", description: "always null" },
          },
          required: ["mode"],
        },
      },
    });
  });

  test("LeapObj refuses required names that are not properties", () => {
    expect(() => new LeapObj({ properties: { a: new LeapStr() }, required: ["b"] })).toThrow('required names unknown properties "b"');
  });
});

describe("function names", () => {
  test.each(["get_weather", "_private", "f2", "A"])("%p is accepted", (name) => {
    expect(new LeapFunction({ name, description: "", parameters: [] }).name).toBe(name);
  });

  test.each(["2fast", "get-weather", "has space", "", "ünï", "dot.name"])("%p is rejected with a clear error", (name) => {
    expect(() => new LeapFunction({ name, description: "", parameters: [] })).toThrow(InvalidFunctionError);
    expect(() => new LeapFunction({ name, description: "", parameters: [] })).toThrow("a name has only letters, digits and underscores, and does not start with a digit");
  });

  test("a parameter without a Leap type is rejected", () => {
    expect(() => new LeapFunction({ name: "f", description: "", parameters: [{ name: "a", type: "string" as never, description: "" }] })).toThrow('parameter "a" needs a type');
  });
});

describe("validateFunctionCall", () => {
  const fn = {
    name: "book",
    description: "Books a table",
    parameters: [
      { name: "people", type: new LeapInt(), description: "how many" },
      { name: "time", type: new LeapStr({ enumValues: ["18:00", "20:00"] }), description: "when" },
      { name: "vegan", type: new LeapBool(), description: "diet", optional: true },
      { name: "guests", type: new LeapArr({ itemType: new LeapObj({ properties: { name: new LeapStr(), age: new LeapNum() }, required: ["name"] }) }), description: "names", optional: true },
    ],
  };

  test("a valid call has no problems (optional arguments may be left out or null)", () => {
    expect(validateFunctionCall(fn, { name: "book", arguments: { people: 2, time: "20:00" } })).toEqual([]);
    expect(validateFunctionCall(fn, { name: "book", arguments: { people: 2, time: "18:00", vegan: null, guests: [{ name: "Ann", age: 3.5 }] } })).toEqual([]);
  });

  test("reports missing, mistyped, out-of-enum, unknown and nested problems", () => {
    const problems = validateFunctionCall(fn, { name: "book", arguments: { people: 2.5, time: "19:00", extra: 1, guests: [{ age: "x" }, 3] } });
    expect(problems).toEqual([
      'argument "people" must be an integer, got number 2.5',
      'argument "time" must be one of "18:00", "20:00", got "19:00"',
      'argument "guests"[0].name is required but missing',
      'argument "guests"[0].age must be a number, got string "x"',
      'argument "guests"[1] must be an object, got number 3',
      'argument "extra" is not a parameter of "book"',
    ]);
    expect(validateFunctionCall(fn, { name: "book", arguments: {} })).toEqual(['argument "people" is required but missing', 'argument "time" is required but missing']);
    expect(validateFunctionCall(fn, { name: "other", arguments: { people: 1, time: "18:00" } })).toEqual(['the call names "other", not "book"']);
  });
});

describe("GenerationOptions", () => {
  test("build takes an object or a builder function; the default parser is pythonic", () => {
    expect(GenerationOptions.build({ temperature: 0.2 }).temperature).toBe(0.2);
    const built = GenerationOptions.build((o) => {
      o.functionCallParser = new AlternateFunctionCallParser();
      o.toolChoice = { name: "f" };
    });
    expect(built.functionCallParser).toBeInstanceOf(AlternateFunctionCallParser);
    expect(built.toolChoice).toEqual({ name: "f" });
    expect(new GenerationOptions().functionCallParser).toBeInstanceOf(DefaultFunctionCallParser);
    expect(GenerationOptions.build({ functionCallParser: null }).functionCallParser).toBeNull();
  });

  test("bad values are refused", () => {
    expect(() => GenerationOptions.build({ topP: 2 })).toThrow("Cannot use topP 2");
    expect(() => GenerationOptions.build({ toolChoice: "always" as never })).toThrow("Cannot use toolChoice");
    expect(() => GenerationOptions.build((o) => (o.maxTokens = 0))).toThrow("Cannot use maxTokens 0");
  });
});

describe("ChatMessage", () => {
  test("roles, text shortcut and content parts", () => {
    const message = ChatMessage.text(ChatMessage.Role.TOOL, "22 degrees");
    expect(message.role).toBe("tool");
    expect(message.content[0]).toBeInstanceOf(ChatMessageContent.Text);
    expect(message.text).toBe("22 degrees");
    const image = ChatMessageContent.image(new Uint8Array([1, 2, 3]), "image/png");
    const mixed = new ChatMessage({ role: "user", content: [new ChatMessageContent.Text("look"), image] });
    expect(mixed.content.map((part) => part.type)).toEqual(["text", "image"]);
    expect(ChatMessage.from({ role: "user", content: [{ type: "text", text: "hi" }] }).text).toBe("hi");
    expect(() => new ChatMessage({ role: "robot", content: "x" })).toThrow("role must be one of system, user, assistant, tool");
  });

  test("MessageResponse variants carry type tags", () => {
    expect(new MessageResponse.Chunk("a").type).toBe("chunk");
    expect(new MessageResponse.ReasoningChunk("a").type).toBe("reasoningChunk");
    expect(new MessageResponse.AudioSample(new Float32Array(1), 16000).type).toBe("audioSample");
    expect(new MessageResponse.FunctionCalls([]).type).toBe("functionCalls");
    expect(new MessageResponse.Error("bad").type).toBe("error");
  });
});
