// Function calling with the in-process SDK: the spec's four steps, with the call forced by toolChoice.
//   bun examples/tool-calling.ts path/to/model.gguf      (or set LLAMUX_MODEL)
import { ChatMessage, FunctionCalls, GenerationOptions, LeapFunction, LeapStr, ModelRunner, validateFunctionCall, type LeapFunctionCall } from "llamux";

const model = process.argv[2] ?? process.env.LLAMUX_MODEL;
if (!model) {
  console.error("usage: bun examples/tool-calling.ts MODEL   (a GGUF path, a store name or <org>/<model>; or set LLAMUX_MODEL)");
  process.exit(2);
}

const getWeather = new LeapFunction({
  name: "get_weather",
  description: "Current weather in a city",
  parameters: [
    { name: "city", type: new LeapStr({ enumValues: ["Paris", "London", "Tokyo"] }), description: "A city we have data for" },
    { name: "unit", type: new LeapStr({ enumValues: ["celsius", "fahrenheit"] }), description: "Temperature unit" },
  ],
});

await using runner = await ModelRunner.load(model, { contextSize: 1024 });

// 1. Register the function and ask; naming it in toolChoice makes the model call it (once). The grammar
//    admits a call of at most 109 characters (Hermes syntax; LFM2's 85): 128 tokens end it however it is spelled.
const conversation = runner.createConversation("You answer weather questions with the get_weather tool.");
conversation.registerFunction(getWeather);
const calls: LeapFunctionCall[] = [];
for await (const response of conversation.generateResponse("What is the weather in Paris?", GenerationOptions.build({ toolChoice: { name: "get_weather" }, maxTokens: 128 }))) {
  if (response instanceof FunctionCalls) calls.push(...response.functionCalls);
  if (response.type === "error") throw new Error(response.message);
}

// 2. Check each call's arguments, then run the tool.  3. Its result becomes a tool message.
const results = calls.map((call) => {
  const problems = validateFunctionCall(getWeather, call);
  console.log(`call ${call.name}(${JSON.stringify(call.arguments)})${problems.length ? ` invalid: ${problems.join("; ")}` : ""}`);
  const result = problems.length ? { error: problems.join("; ") } : { city: call.arguments.city, temperature: 21, unit: call.arguments.unit };
  return ChatMessage.text(ChatMessage.Role.TOOL, JSON.stringify(result));
});

// 4. Continue from the history plus the tool results.
const next = runner.createConversationFromHistory([...conversation.history, ...results], [getWeather]);
let reply = "";
for await (const response of next.generateResponse(undefined, { maxTokens: 32 })) {
  if (response.type === "chunk") reply += response.text;
  if (response.type === "error") throw new Error(response.message);
}
console.log(`reply: ${JSON.stringify(reply)}`);
