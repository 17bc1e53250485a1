// POST /api/v1/models/download starts a background download job and answers at once with its id;
// GET /api/v1/models/download/status/{job_id} reports its progress (shapes in routes.ts) to the key that
// started it (another key gets the 404 of an unknown id).
import type { Context } from "hono";
import { z } from "zod";
import { badRequest, notFound } from "../api-error.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { readJsonBody, validate } from "../validation.ts";
import { HUB_HOST, tryParseModelName } from "../../store/model-name.ts";
import { type DownloadJob, type DownloadJobs, bytesPerSecond, downloadedBytes, totalBytes } from "./download-jobs.ts";
import type { LmStudioModelService } from "./model-service.ts";

const downloadSchema = z.object({
  model: z.string().min(1).describe("`org/repo` on the Hugging Face hub, its https URL, or a store name"),
  quantization: z.string().min(1).optional().describe("e.g. Q4_K_M; default: Q4_K_M or the closest"),
});

/** How long the request waits for the download's size before answering without it. */
const SIZE_WAIT_MS = 5000;

/**
 * The store name to pull: `org/repo` and hub URLs (with a file path or not) become `hf.co/org/repo`
 * with the quantization (or file) as tag; other names (`llama3.2`, `hf.co/...:Q8_0`) are pulled as given.
 */
export function pullNameOf(model: string, quantization: string | undefined): string {
  const url = /^https?:\/\/(?:www\.)?(?:huggingface\.co|hf\.co)\/([^/]+)\/([^/?#]+)(?:\/(?:blob|resolve)\/[^/]+\/([^?#]+))?/i.exec(model);
  if (model.startsWith("http://")) throw badRequest("Only https URLs of the Hugging Face hub can be downloaded", "model");
  if (url) {
    const file = url[3]?.split("/").at(-1);
    return `${HUB_HOST}/${url[1]}/${url[2]}${quantization ? `:${quantization}` : file ? `:${file}` : ""}`;
  }
  if (/^https?:/i.test(model)) throw badRequest(`Cannot download "${model}": only Hugging Face hub URLs are supported`, "model");
  const parts = model.split("/");
  const name = parts.length === 2 ? `${HUB_HOST}/${model}` : model;
  const tagged = quantization ? `${name.replace(/:[^/]*$/, "")}:${quantization}` : name;
  if (!tryParseModelName(tagged)) throw badRequest(`Cannot download "${model}": not a model name`, "model");
  return tagged;
}

function statusBody(job: DownloadJob) {
  const total = totalBytes(job);
  const done = downloadedBytes(job);
  const speed = bytesPerSecond(job);
  const downloading = job.status === "downloading";
  return {
    job_id: job.id,
    status: job.status,
    total_size_bytes: total,
    downloaded_bytes: done,
    started_at: job.startedAt.toISOString(),
    ...(downloading ? { bytes_per_second: speed } : {}),
    ...(downloading && speed > 0 && total > done ? { estimated_completion: new Date(Date.now() + ((total - done) / speed) * 1000).toISOString() } : {}),
    ...(job.completedAt && job.status !== "failed" ? { completed_at: job.completedAt.toISOString() } : {}),
    ...(job.storedName ? { model: job.storedName } : {}),
    ...(job.error ? { error: job.error } : {}),
  };
}

export function v1Download(models: LmStudioModelService, jobs: DownloadJobs) {
  return async function v1DownloadHandler(c: Context) {
    const body = validate(downloadSchema, await readJsonBody(c));
    const name = pullNameOf(body.model, body.quantization);
    // A model already in the store is answered without a job, as LM Studio does.
    const stored = models.store.find(name);
    if (stored) return c.json({ status: "already_downloaded", model: stored.name });
    const job = jobs.start(name, keyOwner(c));
    await Promise.race([job.sized, Bun.sleep(SIZE_WAIT_MS)]);
    return c.json(statusBody(job));
  };
}

export function v1DownloadStatus(jobs: DownloadJobs) {
  return function v1DownloadStatusHandler(c: Context) {
    const id = c.req.param("job_id")!;
    const job = jobs.get(id, keyOwner(c));
    if (!job) throw notFound(`No download job "${id}"`, "job_id");
    return c.json(statusBody(job));
  };
}
