// Uploads the files a Modelfile names to the server `llamux create` talks to, as `ollama create` does:
// hash the file, ask whether the server has that blob (HEAD /api/blobs/<digest>), upload it if not.
import { basename } from "node:path";
import { hashFile } from "../store/blob-writer.ts";
import { fileChunks, type BlobImporter } from "../store/modelfile-request.ts";
import type { ServerClient } from "./server-client.ts";

export function serverImporter(client: ServerClient): BlobImporter {
  return async (path, onProgress) => {
    const name = basename(path);
    onProgress({ status: `gathering model components: ${name}` });
    const { digest } = await hashFile(path);
    if (await client.hasBlob(digest)) return digest;
    const chunks = fileChunks(path, `uploading ${name}`, onProgress);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
    });
    await client.uploadBlob(digest, body);
    return digest;
  };
}
