// The pure parts of LM Studio's SDK protocol: KV config stacks read into prediction settings, the chat
// history into chat messages, and one socket's frame handling over an in-memory connection.
import { describe, expect, test } from "bun:test";
import { collapse, predictionConfig } from "../../../src/server/lmstudio/sdk/config-stack.ts";
import { toChatMessages } from "../../../src/server/lmstudio/sdk/history.ts";
import { ClientRegistry, type Namespace, SdkSocketSession } from "../../../src/server/lmstudio/sdk/socket-session.ts";

const layer = (layerName: string, fields: Record<string, unknown>) => ({ layerName, config: { fields: Object.entries(fields).map(([key, value]) => ({ key, value })) } });

describe("predictionConfig", () => {
  test("later layers win; unchecked checkbox values are unset", () => {
    const map = collapse({ layers: [
      layer("instance", { "llm.prediction.temperature": 0.2, "llm.prediction.maxPredictedTokens": { checked: true, value: 10 } }),
      layer("apiOverride", { "llm.prediction.temperature": 0.9, "llm.prediction.topPSampling": { checked: false, value: 0.5 } }),
    ] });
    const { options } = predictionConfig(map);
    expect(options.temperature).toBe(0.9);
    expect(options.maxTokens).toBe(10);
    expect(options.topP).toBeUndefined();
  });

  test("structured settings become output constraints", () => {
    const json = predictionConfig(new Map([["llm.prediction.structured", { type: "json", jsonSchema: { type: "object" } }]]));
    expect(json.constraint).toEqual({ type: "json_schema", schema: { type: "object" } });
    const gbnf = predictionConfig(new Map([["llm.prediction.structured", { type: "gbnf", gbnfGrammar: 'root ::= "a"' }]]));
    expect(gbnf.constraint).toEqual({ type: "grammar", grammar: 'root ::= "a"' });
    expect(predictionConfig(new Map([["llm.prediction.structured", { type: "none" }]])).constraint).toBeUndefined();
  });

  test("force and llamux.toolChoice choose tools only when there are tools", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];
    expect(predictionConfig(new Map<string, unknown>([["llm.prediction.tools", { type: "toolArray", tools, force: true }]])).toolChoice).toBe("required");
    expect(predictionConfig(new Map<string, unknown>([["llm.prediction.tools", { type: "toolArray", tools }], ["llamux.toolChoice", { name: "f" }]])).toolChoice).toEqual({ name: "f" });
    expect(predictionConfig(new Map<string, unknown>([["llm.prediction.tools", { type: "none" }], ["llamux.toolChoice", "required"]])).toolChoice).toBeUndefined();
  });

  test("a known key with a wrong value is an error naming the key; unknown keys are ignored", () => {
    expect(() => predictionConfig(new Map([["llm.prediction.temperature", "hot"]]))).toThrow(/llm\.prediction\.temperature/);
    expect(predictionConfig(new Map([["llm.prediction.speculativeDecoding.draftModel", "x"]])).tools).toEqual([]);
  });
});

describe("toChatMessages", () => {
  test("text parts join; tool requests and results keep their ids", () => {
    const messages = toChatMessages({ messages: [
      { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      { role: "assistant", content: [{ type: "toolCallRequest", toolCallRequest: { id: "1", type: "function", name: "f", arguments: { x: 1 } } }] },
      { role: "tool", content: [{ type: "toolCallResult", content: "done", toolCallId: "1" }] },
    ] });
    expect(messages).toEqual([
      { role: "user", content: "a\nb" },
      { role: "assistant", content: "", tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: { x: 1 } } }] },
      { role: "tool", content: "done", tool_call_id: "1" },
    ]);
  });

  test("file parts are refused by name", () => {
    expect(() => toChatMessages({ messages: [{ role: "user", content: [{ type: "file", name: "a.pdf", identifier: "x" }] }] })).toThrow(/a\.pdf/);
  });
});

describe("SdkSocketSession", () => {
  const held: Array<(value: unknown) => void> = [];
  function session(authenticate = (_id: string, passkey: string) => (passkey === "ok" ? { owner: "" } : "bad passkey")) {
    const sent: any[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
    let closed: number | undefined;
    const namespace: Namespace = {
      name: "llm",
      rpc: {
        echo: async (value) => value,
        fail: async () => Promise.reject(new Error("boom")),
        // Answers when the test says so, to keep a call in flight.
        held: () => new Promise((resolve) => held.push(resolve)),
      },
      channels: { wait: (_v, channel) => new Promise<void>((resolve) => channel.onPacket(() => resolve())) },
    };
    const s = new SdkSocketSession(namespace, { send: (text) => sent.push(JSON.parse(text)), close: (code) => void (closed = code) }, authenticate, new ClientRegistry());
    s.opened();
    return { s, sent, closed: () => closed };
  }

  test("refuses a wrong passkey and closes", () => {
    const { s, sent, closed } = session();
    s.received(JSON.stringify({ authVersion: 1, clientIdentifier: "c", clientPasskey: "no" }));
    expect(sent).toEqual([{ success: false, error: "bad passkey" }]);
    expect(closed()).toBe(1008);
  });

  test("answers RPCs, reports failures, and ends only the call a bad frame names", async () => {
    const { s, sent } = session();
    s.received(JSON.stringify({ authVersion: 1, clientIdentifier: "c", clientPasskey: "ok" }));
    s.received(JSON.stringify({ type: "rpcCall", endpoint: "echo", callId: 1, parameter: { a: 1 } }));
    s.received(JSON.stringify({ type: "rpcCall", endpoint: "fail", callId: 2 }));
    s.received(JSON.stringify({ type: "channelCreate", endpoint: "wait", channelId: 3 }));
    s.received(JSON.stringify({ type: "channelCreate", endpoint: "wait", channelId: 3 }));
    s.received("]");
    await Bun.sleep(10);
    expect(sent[0]).toEqual({ success: true });
    expect(sent).toContainEqual({ type: "rpcResult", callId: 1, result: { a: 1 } });
    expect(sent.find((f) => f.callId === 2)).toMatchObject({ type: "rpcError", error: { title: "boom" } });
    expect(sent.find((f) => f.channelId === 3)).toMatchObject({ type: "channelError", error: { title: expect.stringContaining("already in use") } });
    expect(sent.filter((f) => f.type === "communicationWarning")).toHaveLength(1);
    s.ended();
  });

  test("an RPC reusing the id of a call in flight ends both with one rpcError, whatever it names", async () => {
    const { s, sent } = session();
    s.received(JSON.stringify({ authVersion: 1, clientIdentifier: "c", clientPasskey: "ok" }));
    for (const endpoint of ["echo", "noSuchEndpoint"]) {
      held.length = 0;
      s.received(JSON.stringify({ type: "rpcCall", endpoint: "held", callId: 9 }));
      s.received(JSON.stringify({ type: "rpcCall", endpoint, callId: 9, parameter: "second" }));
      held[0]!("first's result");
      await Bun.sleep(0);
      const answers = sent.splice(1);
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ type: "rpcError", callId: 9, error: { title: expect.stringContaining("already in use") } });
    }
    s.ended();
  });
});
