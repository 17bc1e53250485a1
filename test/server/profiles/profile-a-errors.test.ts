// Profile a's error bodies on Ollama's native routes: a full queue in Ollama's own words, which clients
// match; every other 503 names its cause (an RPC server that cannot be reached is not a busy queue).
import { expect, test } from "bun:test";
import { EngineError } from "../../../src/engine/types.ts";
import { ApiError, toApiError } from "../../../src/server/api-error.ts";
import { OLLAMA_SERVER_BUSY, profileA } from "../../../src/server/profiles/a.ts";

test("a full queue is Ollama's 'server busy'", () => {
  const busy = toApiError(new EngineError("busy", "Cannot accept request: 2 requests are already waiting (limit 2)"));
  expect(profileA.errorBody(busy, "/api/generate")).toEqual({ error: OLLAMA_SERVER_BUSY });
});

test("an unreachable RPC server and other 503s say what happened", () => {
  const rpc = 'RPC server "127.0.0.1:9" cannot be reached: connection refused (is "llamux rpc-server" running there?)';
  expect(profileA.errorBody(toApiError(new EngineError("rpc_unavailable", rpc)), "/api/chat")).toEqual({ error: rpc });
  expect(profileA.errorBody(new ApiError(503, "Model loading was cancelled"), "/api/generate")).toEqual({ error: "Model loading was cancelled" });
  expect(profileA.errorBody(toApiError(new EngineError("rpc_unavailable", rpc)), "/v1/chat/completions")).toMatchObject({ error: { message: rpc } });
});
