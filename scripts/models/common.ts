// What a model definition produces, and the general.* keys every generated model carries.
import { type GgufKv, type GgufTensorInput, ggufKv } from "../../src/store/gguf.ts";

export interface ModelContent {
  metadata: [string, GgufKv][];
  tensors: GgufTensorInput[];
}

/** llama_ftype values for general.file_type */
export const FILE_TYPE_ALL_F32 = 0;
export const FILE_TYPE_MOSTLY_F16 = 1;

/** The general.* keys of a projector (mmproj) file. */
export function projectorMetadata(name: string, description: string): [string, GgufKv][] {
  return [
    ["general.architecture", ggufKv.string("clip")],
    ["general.type", ggufKv.string("mmproj")],
    ["general.name", ggufKv.string(name)],
    ["general.description", ggufKv.string(description)],
    ["general.file_type", ggufKv.uint32(FILE_TYPE_MOSTLY_F16)],
  ];
}

export function generalMetadata(architecture: string, name: string, description: string): [string, GgufKv][] {
  return [
    ["general.architecture", ggufKv.string(architecture)],
    ["general.type", ggufKv.string("model")],
    ["general.name", ggufKv.string(name)],
    ["general.description", ggufKv.string(description)],
    ["general.organization", ggufKv.string("llamux")],
    ["general.license", ggufKv.string("mit")],
    ["general.file_type", ggufKv.uint32(FILE_TYPE_MOSTLY_F16)],
  ];
}
