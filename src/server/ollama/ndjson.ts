// NDJSON (Ollama's streaming format): one JSON object per line. The encoder is a TransformStream of
// objects to bytes; `ndjsonResponse` feeds it from a producer and ends a failed stream with an
// `{"error": "..."}` line, since the status (200) has already gone out.

const encoder = new TextEncoder();

/** Objects in, `JSON.stringify(object) + "\n"` bytes out. */
export class NdjsonEncoderStream extends TransformStream<unknown, Uint8Array> {
  constructor() {
    super({
      transform(object, controller) {
        controller.enqueue(encoder.encode(`${JSON.stringify(object)}\n`));
      },
    });
  }
}

/** Writes one object; rejects once the client has gone away, which ends the producer. */
export type SendLine = (object: unknown) => Promise<void>;

export function ndjsonResponse(produce: (send: SendLine) => Promise<void>, errorLine: (error: unknown) => unknown): Response {
  const stream = new NdjsonEncoderStream();
  const writer = stream.writable.getWriter();
  let open = true;
  const send: SendLine = async (object) => {
    if (!open) throw new Error("The client closed the stream");
    await writer.write(object);
  };
  void (async () => {
    try {
      await produce(send);
    } catch (error) {
      if (open) await writer.write(errorLine(error)).catch(() => undefined);
    } finally {
      open = false;
      await writer.close().catch(() => undefined);
    }
  })();
  // A cancelled body (the client disconnected) rejects pending and later writes.
  writer.closed.catch(() => {
    open = false;
  });
  return new Response(stream.readable, { headers: { "Content-Type": "application/x-ndjson" } });
}
