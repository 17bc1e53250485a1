// Uploads the files a Modelfile names to the server `llamux create` talks to, as `ollama create` does:
// hash the file, ask whether the server has that blob (HEAD /api/blobs/<digest>), upload it if not.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { basename } from "node:path";
import { fileChunks, type BlobImporter } from "../store/modelfile-request.ts";
import type { ServerClient } from "./server-client.ts";

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return `sha256:${hash.digest("hex")}`;
}

export function serverImporter(client: ServerClient): BlobImporter {
  return async (path, onProgress) => {
    const name = basename(path);
    onProgress({ status: `gathering model components: ${name}` });
    const digest = await fileDigest(path);
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
