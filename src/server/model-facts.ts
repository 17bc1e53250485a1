// What a model's files say about how it may be loaded and what its requests may carry: its GGUF header
// (never the weights) says whether it embeds, ranks and for how much context it was trained; its
// projector says whether it sees, hears or speaks. Headers are read once per file.
import { readGgufHeaderSync, ggufNumber, ggufString, ggufArchKey } from "../store/gguf.ts";
import { projectorModalities } from "../vision/projector-file.ts";

/** Architectures that only embed (no generation); others embed only when their file says how to pool. */
const embeddingArchitectures = new Set(["bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert", "neo-bert", "t5encoder"]);

/** llama_pooling_type's rank: the pooled output is a classifier head's score (llama.cpp's --pooling rank). */
const RANK_POOLING = 4;

/** What a model's header says about how it may be loaded. */
export interface HeaderFacts {
  /** An embedding model rather than a generative one. */
  embeds: boolean;
  /**
   * A reranker (cross-encoder): an embedding model whose file declares rank pooling, or whose classifier
   * head (`cls.output.*`) is stored without a pooling type (llama.cpp then needs --pooling rank; llamux
   * treats such files as rerankers too).
   */
  reranks: boolean;
  /** The context it was trained for, when the file says. */
  trainedContext: number | undefined;
}

/** Reads the header of the GGUF file at `path`; throws GgufReadError when it is not one. */
export function readHeaderFacts(path: string): HeaderFacts {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  const architecture = ggufString(header, "general.architecture") ?? "";
  const trained = ggufNumber(header, ggufArchKey(header, "context_length"));
  const pooling = ggufNumber(header, ggufArchKey(header, "pooling_type"));
  const embeds = embeddingArchitectures.has(architecture) || pooling !== undefined;
  return {
    embeds,
    reranks: embeds && (pooling !== undefined ? pooling === RANK_POOLING : header.tensors.some((t) => t.name === "cls.output.weight")),
    trainedContext: trained !== undefined && trained > 0 ? trained : undefined,
  };
}

/** The files a model is loaded from. */
export interface ModelFiles {
  path: string;
  projectorPath?: string;
}

/** The facts of the models a service offers, each file's header read once. */
export class ModelFacts {
  private readonly headers = new Map<string, HeaderFacts>();

  /** What the model file's header says (cached per file). */
  of(model: ModelFiles): HeaderFacts {
    let facts = this.headers.get(model.path);
    if (facts === undefined) {
      facts = readHeaderFacts(model.path);
      this.headers.set(model.path, facts);
    }
    return facts;
  }

  /** Whether the model embeds rather than generates. */
  embeds(model: ModelFiles): boolean {
    return this.of(model).embeds;
  }

  /** Whether the model is a reranker: it scores query+document pairs. */
  reranks(model: ModelFiles): boolean {
    return this.of(model).reranks;
  }

  /** Whether requests to the model may carry images: its projector has a vision encoder. */
  hasVision(model: ModelFiles): boolean {
    return model.projectorPath !== undefined && projectorModalities(model.projectorPath).vision;
  }

  /**
   * Whether requests to the model may carry audio: its projector has an audio encoder (mtmd_support_audio)
   * and is not a text-to-speech projector, whose audio encoder only reads reference voices.
   */
  hasAudio(model: ModelFiles): boolean {
    if (model.projectorPath === undefined) return false;
    const modalities = projectorModalities(model.projectorPath);
    return modalities.audio && !modalities.speech;
  }

  /** Whether the model speaks (/v1/audio/speech): its projector generates audio. */
  speaks(model: ModelFiles): boolean {
    return model.projectorPath !== undefined && projectorModalities(model.projectorPath).speech;
  }
}
