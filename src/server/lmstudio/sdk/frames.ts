// The frames of LM Studio's SDK protocol (lmstudio-js `lms-communication`), as llamux reads and writes
// them. LM Studio publishes these schemas in @lmstudio/lms-shared-types and friends, but those packages
// are not in our registry, and @lmstudio/sdk 1.5.0 bundles its copy without exporting it; so the few
// shapes the server reads are written here in zod, field for field from that bundle. Outgoing frames
// are built by typed functions below, so their shapes are checked by the compiler.
import { z } from "zod";
import { toApiError } from "../../api-error.ts";
import { SOCKET_BOUNDS } from "../../websocket-endpoints.ts";

/** Bounds of one socket and of the server's sockets (docs/lm-studio.md, "Bounds"). */
export const SOCKET_LIMITS = {
  /** Largest frame accepted; a longer one closes the socket (1009). */
  maxFrameBytes: SOCKET_BOUNDS.maxFrameBytes,
  /** Calls (RPCs and channels) open at once on one socket; more are refused one by one. */
  maxOpenCalls: 64,
  /** Sockets one client identity may hold open (the SDK opens one per namespace, 8 at most). */
  maxSocketsPerClient: 16,
  /** Sockets the whole server holds open. */
  maxSockets: 512,
  /** Time a new socket has to send its authentication frame. */
  authTimeoutMs: 10_000,
  /** Seconds without traffic (pings answered count) before a socket is closed. */
  idleTimeoutSeconds: SOCKET_BOUNDS.idleTimeoutSeconds,
  /** Bytes queued to a client that does not read before its socket is closed. */
  backpressureBytes: SOCKET_BOUNDS.backpressureBytes,
  /** Length of the identity strings in the authentication frame. */
  maxIdentityLength: 256,
} as const;

/** The first frame a client sends. */
export const authFrameSchema = z.object({
  authVersion: z.literal(1),
  clientIdentifier: z.string().max(SOCKET_LIMITS.maxIdentityLength),
  clientPasskey: z.string().max(SOCKET_LIMITS.maxIdentityLength),
});

const id = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Every frame a client may send after authenticating (clientToServerMessageSchema). */
export const clientFrameSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("communicationWarning"), warning: z.string() }),
  z.object({ type: z.literal("keepAlive") }),
  z.object({ type: z.literal("channelCreate"), endpoint: z.string(), channelId: id, creationParameter: z.unknown().optional() }),
  z.object({ type: z.literal("channelSend"), channelId: id, message: z.unknown().optional(), ackId: id.optional() }),
  z.object({ type: z.literal("channelAck"), channelId: id, ackId: id }),
  z.object({ type: z.literal("rpcCall"), endpoint: z.string(), callId: id, parameter: z.unknown().optional() }),
  z.object({ type: z.literal("signalSubscribe"), creationParameter: z.unknown().optional(), endpoint: z.string(), subscribeId: id }),
  z.object({ type: z.literal("signalUnsubscribe"), subscribeId: id }),
  z.object({ type: z.literal("writableSignalSubscribe"), creationParameter: z.unknown().optional(), endpoint: z.string(), subscribeId: id }),
  z.object({ type: z.literal("writableSignalUnsubscribe"), subscribeId: id }),
  z.object({ type: z.literal("writableSignalUpdate"), subscribeId: id, patches: z.array(z.unknown()), tags: z.array(z.string()) }),
]);

export type ClientFrame = z.infer<typeof clientFrameSchema>;

/** LM Studio's serialized error (serializedLMSExtendedErrorSchema); the SDK throws `title` as the message. */
export interface SerializedError {
  title: string;
  cause?: string;
  suggestion?: string;
  errorData?: Record<string, unknown>;
}

export type ServerFrame =
  | { type: "keepAliveAck" }
  | { type: "communicationWarning"; warning: string }
  | { type: "rpcResult"; callId: number; result?: unknown }
  | { type: "rpcError"; callId: number; error: SerializedError }
  | { type: "channelSend"; channelId: number; message: unknown }
  | { type: "channelAck"; channelId: number; ackId: number }
  | { type: "channelClose"; channelId: number }
  | { type: "channelError"; channelId: number; error: SerializedError }
  | { type: "signalError" | "writableSignalError"; subscribeId: number; error: SerializedError };

/** An error for the wire: its message as the title, the HTTP-style status and code as error data. */
export function serializeError(error: unknown): SerializedError {
  const apiError = toApiError(error);
  return {
    title: apiError.message,
    errorData: { status: apiError.status, ...(apiError.code ? { code: apiError.code } : {}), ...(apiError.param ? { param: apiError.param } : {}) },
  };
}

/** The first zod issue of a frame or parameter, in one line. */
export function describeIssue(error: z.ZodError, what: string): string {
  const issue = error.issues[0]!;
  const path = issue.path.map(String).join(".");
  return `Invalid ${what}${path ? ` at "${path}"` : ""}: ${issue.message}`;
}
