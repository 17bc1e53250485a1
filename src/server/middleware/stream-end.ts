// Streamed answers (SSE, NDJSON) outlive the route handler that returned them: what must happen when
// the answer is over (logging it, letting go of the engine it used) waits for the stream's end.
export type StreamOutcome = "completed" | "cancelled" | "failed";

/** Content types of answers streamed while they are generated (speech audio as it is encoded). */
export const STREAM_TYPES = ["text/event-stream", "application/x-ndjson", "audio/"];

/** Whether the response is a streamed answer with a body still to be sent. */
export function isStreamedAnswer(response: Response): response is Response & { body: ReadableStream<Uint8Array> } {
  const contentType = response.headers.get("content-type") ?? "";
  return response.body !== null && STREAM_TYPES.some((type) => contentType.startsWith(type));
}

/** The same bytes, plus a call to `ended` once the stream finishes, fails or the client goes away. */
export function observeEnd(body: ReadableStream<Uint8Array>, ended: (outcome: StreamOutcome) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let reported = false;
  const report = (outcome: StreamOutcome) => {
    if (!reported) ended(outcome);
    reported = true;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          report("completed");
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        controller.error(error);
        report("failed");
      }
    },
    // Passing the cancel on is what lets the route see the disconnect and stop generating.
    async cancel(reason) {
      report("cancelled");
      await reader.cancel(reason);
    },
  });
}
