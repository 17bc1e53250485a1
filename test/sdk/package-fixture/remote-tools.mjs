// Run by test/sdk/package.test.ts under Node, in a project that installed llamux's tarball: a remote
// conversation with tool calling against the llamux server at LLAMUX_URL. Prints one JSON line per event.
import { ChatMessage, Complete, FunctionCalls, LeapFunction, LeapStr, RemoteModelRunner, validateFunctionCall } from "llamux/remote";

const getWeather = new LeapFunction({
  name: "get_weather", description: "Current weather in a city",
  parameters: [{ name: "city", type: new LeapStr({ enumValues: ["Paris", "London", "Tokyo"] }), description: "A city" }],
});
const runner = new RemoteModelRunner({ baseURL: `${process.env.LLAMUX_URL}/v1`, apiKey: "secret", model: "tiny" });
const conversation = runner.createConversation("You answer weather questions with the get_weather tool.");
conversation.registerFunction(getWeather);
const print = (event) => console.log(JSON.stringify(event));

const calls = [];
for await (const response of conversation.generateResponse("Weather in Paris?", { toolChoice: "required", parallelToolCalls: false, maxTokens: 144, seed: 5 })) {
  if (response instanceof FunctionCalls) calls.push(...response.functionCalls);
  if (response instanceof Complete) print({ event: "complete", finishReason: response.finishReason, promptTokens: response.stats.promptTokens });
  if (response.type === "error") print({ event: "error", message: response.message });
}
for (const call of calls) print({ event: "call", name: call.name, arguments: call.arguments, problems: validateFunctionCall(getWeather, call) });
const results = calls.map(() => ChatMessage.text(ChatMessage.Role.TOOL, JSON.stringify({ temperature: 21 })));
const next = runner.createConversationFromHistory([...conversation.history, ...results], [getWeather]);
for await (const reply of next.generateResponse(undefined, { maxTokens: 8, seed: 2 })) {
  if (reply instanceof Complete) print({ event: "reply", finishReason: reply.finishReason, roles: next.history.map((message) => message.role) });
  if (reply.type === "error") print({ event: "error", message: reply.message });
}
print({ event: "node", version: process.versions.node });
