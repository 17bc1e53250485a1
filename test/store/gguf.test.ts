import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  GGUF_DEFAULT_ALIGNMENT,
  GgmlType,
  GgufReadError,
  GgufValueType,
  GgufWriteError,
  type GgufKv,
  fromFloat16Array,
  ggmlTensorByteSize,
  ggufKv,
  ggufNumber,
  ggufPlainValue,
  ggufString,
  parseGgufHeader,
  readGgufHeader,
  readGgufHeaderSync,
  readGgufTensorBytes,
  toFloat16Array,
  writeGguf,
} from "../../src/store/gguf.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-gguf-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const VOCAB_DIR = join(import.meta.dir, "..", "..", ".native", "llama.cpp", "models");

/** One value of every GGUF type, at the edges of its range where it has one. */
const everyType: [string, GgufKv][] = [
  ["t.uint8", ggufKv.uint8(255)],
  ["t.int8", ggufKv.int8(-128)],
  ["t.uint16", ggufKv.uint16(65535)],
  ["t.int16", ggufKv.int16(-32768)],
  ["t.uint32", ggufKv.uint32(0xffffffff)],
  ["t.int32", ggufKv.int32(-0x80000000)],
  ["t.float32", ggufKv.float32(0.5)],
  ["t.bool.true", ggufKv.bool(true)],
  ["t.bool.false", ggufKv.bool(false)],
  ["t.string", ggufKv.string("héllo <|im_start|> 😀\n\"quoted\"")],
  ["t.string.empty", ggufKv.string("")],
  ["t.uint64", ggufKv.uint64(0xffffffffffffffffn)],
  ["t.int64", ggufKv.int64(-0x8000000000000000n)],
  ["t.float64", ggufKv.float64(Math.PI)],
  ["a.uint8", ggufKv.array(GgufValueType.UINT8, [0, 1, 255])],
  ["a.int8", ggufKv.array(GgufValueType.INT8, [-128, 0, 127])],
  ["a.uint16", ggufKv.array(GgufValueType.UINT16, [0, 65535])],
  ["a.int16", ggufKv.array(GgufValueType.INT16, [-32768, 32767])],
  ["a.uint32", ggufKv.array(GgufValueType.UINT32, [0, 0xffffffff])],
  ["a.int32", ggufKv.array(GgufValueType.INT32, [0, 0, 8, 0, -1])],
  ["a.float32", ggufKv.array(GgufValueType.FLOAT32, [1.5, -2.25, 0])],
  ["a.bool", ggufKv.array(GgufValueType.BOOL, [true, false, true])],
  ["a.string", ggufKv.array(GgufValueType.STRING, ["<|im_end|>", "", "Ġ t", "日本語"])],
  ["a.uint64", ggufKv.array(GgufValueType.UINT64, [0n, 0xffffffffffffffffn])],
  ["a.int64", ggufKv.array(GgufValueType.INT64, [-1n, 0x7fffffffffffffffn])],
  ["a.float64", ggufKv.array(GgufValueType.FLOAT64, [Math.E, -0])],
  ["a.empty", ggufKv.array(GgufValueType.STRING, [])],
  [
    "a.nested",
    {
      type: GgufValueType.ARRAY,
      itemType: GgufValueType.ARRAY,
      length: 2,
      value: [ggufKv.array(GgufValueType.INT32, [1, 2]), ggufKv.array(GgufValueType.STRING, ["x"])],
    },
  ],
];

function plain(kv: GgufKv | undefined) {
  expect(kv).toBeDefined();
  return ggufPlainValue(kv!);
}

describe("GGUF write then read", () => {
  const path = join(dir, "every-type.gguf");
  const f32 = Float32Array.from({ length: 64 * 3 }, (_, i) => i / 7 - 5);
  const f16Source = Float32Array.from({ length: 32 * 2 }, (_, i) => (i - 32) / 8);
  const q8Bytes = Uint8Array.from({ length: ggmlTensorByteSize(GgmlType.Q8_0, [64, 2]) }, (_, i) => i % 251);

  test("keeps every metadata value and its type", async () => {
    await writeGguf(path, {
      metadata: [["general.architecture", ggufKv.string("test")], ...everyType],
      tensors: [
        { name: "f32", shape: [64, 3], type: GgmlType.F32, data: f32 },
        { name: "f16", shape: [32, 2], type: GgmlType.F16, data: toFloat16Array(f16Source) },
        { name: "q8_0", shape: [64, 2], type: GgmlType.Q8_0, data: q8Bytes },
      ],
    });
    const header = await readGgufHeader(path);
    expect(header.version).toBe(3);
    expect(header.metadata.size).toBe(everyType.length + 1);
    expect([...header.metadata.keys()]).toEqual(["general.architecture", ...everyType.map(([key]) => key)]);
    for (const [key, kv] of everyType) {
      const read = header.metadata.get(key)!;
      expect(read.type).toBe(kv.type);
      if (kv.type === GgufValueType.ARRAY && read.type === GgufValueType.ARRAY) {
        expect(read.itemType).toBe(kv.itemType);
        expect(read.length).toBe(kv.length);
      }
      expect(plain(read)).toEqual(ggufPlainValue(kv));
    }
    // typed arrays come back with their width
    expect(header.metadata.get("a.int32")!.value).toBeInstanceOf(Int32Array);
    expect(header.metadata.get("a.uint64")!.value).toBeInstanceOf(BigUint64Array);
    expect(plain(header.metadata.get("t.uint64"))).toBe(0xffffffffffffffffn);
    expect(ggufString(header, "t.string")).toBe("héllo <|im_start|> 😀\n\"quoted\"");
    expect(ggufNumber(header, "t.uint32")).toBe(0xffffffff);
  });

  test("keeps tensor infos, offsets and data", () => {
    const header = readGgufHeaderSync(path);
    expect(header.alignment).toBe(GGUF_DEFAULT_ALIGNMENT);
    expect(header.dataOffset % 32).toBe(0);
    expect(header.tensors.map((t) => [t.name, t.shape, t.type])).toEqual([
      ["f32", [64, 3], GgmlType.F32],
      ["f16", [32, 2], GgmlType.F16],
      ["q8_0", [64, 2], GgmlType.Q8_0],
    ]);
    for (const t of header.tensors) {
      expect(t.offset % 32).toBe(0);
      expect(t.fileOffset).toBe(header.dataOffset + t.offset);
    }
    const [f32Info, f16Info, q8Info] = header.tensors;
    expect(new Float32Array(readGgufTensorBytes(path, f32Info!).buffer)).toEqual(f32);
    expect(fromFloat16Array(new Uint16Array(readGgufTensorBytes(path, f16Info!).buffer))).toEqual(f16Source);
    expect(q8Info!.byteSize).toBe(2 * 2 * 34);
    expect(readGgufTensorBytes(path, q8Info!)).toEqual(q8Bytes);
  });

  test("streams tensors and honours general.alignment", async () => {
    const streamed = join(dir, "streamed.gguf");
    const rows = 1000;
    await writeGguf(streamed, {
      metadata: [["general.alignment", ggufKv.uint32(64)]],
      tensors: [
        { name: "norm", shape: [3], type: GgmlType.F32, data: new Float32Array([1, 1, 1]) },
        {
          name: "big",
          shape: [256, rows],
          type: GgmlType.F32,
          write(sink) {
            const row = new Float32Array(256);
            for (let r = 0; r < rows; r++) sink.write(row.fill(r)); // the sink copies, so reusing the buffer is fine
          },
        },
      ],
    });
    const header = readGgufHeaderSync(streamed);
    expect(header.alignment).toBe(64);
    expect(header.dataOffset % 64).toBe(0);
    const big = header.tensors[1]!;
    expect(big.offset).toBe(64);
    const values = new Float32Array(readGgufTensorBytes(streamed, big).buffer);
    expect(values[0]).toBe(0);
    expect(values[256 * 500]).toBe(500);
    expect(values[values.length - 1]).toBe(rows - 1);
  });

  test("skips long arrays on request but keeps their length", () => {
    const header = readGgufHeaderSync(path, { maxArrayLength: 2 });
    const skipped = header.metadata.get("a.string")!;
    expect(skipped.type).toBe(GgufValueType.ARRAY);
    expect(skipped.value).toBeNull();
    expect(skipped.type === GgufValueType.ARRAY && skipped.length).toBe(4);
    expect(plain(header.metadata.get("a.uint16"))).toEqual([0, 65535]);
    expect(ggufNumber(header, "t.float64")).toBe(Math.PI); // keys after a skipped array still parse
    expect(header.tensors).toHaveLength(3);
  });
});

describe("GGUF header of a real llama.cpp vocab file", () => {
  test("ggml-vocab-qwen2.gguf", async () => {
    const header = await readGgufHeader(join(VOCAB_DIR, "ggml-vocab-qwen2.gguf"));
    expect(header.version).toBe(3);
    expect(header.tensors).toHaveLength(0);
    expect(ggufString(header, "general.architecture")).toBe("qwen2");
    expect(ggufString(header, "tokenizer.ggml.model")).toBe("gpt2");
    expect(ggufString(header, "tokenizer.ggml.pre")).toBe("qwen2");
    const tokens = header.metadata.get("tokenizer.ggml.tokens")!;
    expect(tokens.type === GgufValueType.ARRAY && tokens.itemType).toBe(GgufValueType.STRING);
    const list = tokens.value as string[];
    expect(list).toHaveLength(151936);
    expect(list[151644]).toBe("<|im_start|>");
    expect(list[151645]).toBe("<|im_end|>");
    expect((header.metadata.get("tokenizer.ggml.token_type")!.value as Int32Array)[151645]).toBe(3); // control
    expect((header.metadata.get("tokenizer.ggml.merges")!.value as string[])[0]).toBe("Ġ Ġ");
    expect(ggufNumber(header, "tokenizer.ggml.eos_token_id")).toBe(151643);
    expect(ggufString(header, "tokenizer.chat_template")).toContain("<|im_start|>");
  });

  test("ggml-vocab-bert-bge.gguf", () => {
    const header = readGgufHeaderSync(join(VOCAB_DIR, "ggml-vocab-bert-bge.gguf"));
    expect(ggufString(header, "tokenizer.ggml.model")).toBe("bert");
    expect(header.metadata.get("bert.attention.causal")).toEqual({ type: GgufValueType.BOOL, value: false });
    expect(header.metadata.get("bert.attention.layer_norm_epsilon")!.type).toBe(GgufValueType.FLOAT32);
  });
});

describe("GGUF errors", () => {
  test("bad magic", () => {
    const path = join(dir, "not-gguf.bin");
    writeFileSync(path, "this is not a model file at all");
    expect(() => readGgufHeaderSync(path)).toThrow(`Cannot read GGUF "${path}": bad magic`);
    expect(() => readGgufHeaderSync(path)).toThrow(GgufReadError);
  });

  test("empty file", () => {
    const path = join(dir, "empty.gguf");
    writeFileSync(path, "");
    expect(() => readGgufHeaderSync(path)).toThrow(`Cannot read GGUF "${path}": bad magic`);
  });

  test("missing file", async () => {
    const path = join(dir, "missing.gguf");
    await expect(readGgufHeader(path)).rejects.toThrow(`Cannot read GGUF "${path}": no such file`);
  });

  test("unsupported version", () => {
    const bytes = new Uint8Array(24);
    bytes.set([0x47, 0x47, 0x55, 0x46, 1, 0, 0, 0]);
    expect(() => parseGgufHeader(bytes, "v1.gguf")).toThrow(`Cannot read GGUF "v1.gguf": unsupported version 1`);
  });

  test("truncated header and truncated tensor data", async () => {
    const path = join(dir, "whole.gguf");
    await writeGguf(path, {
      metadata: [["a.string", ggufKv.array(GgufValueType.STRING, ["one", "two", "three"])]],
      tensors: [{ name: "w", shape: [32, 32], type: GgmlType.F32, data: new Float32Array(32 * 32) }],
    });
    const whole = new Uint8Array(await Bun.file(path).arrayBuffer());
    const cutHeader = join(dir, "cut-header.gguf");
    writeFileSync(cutHeader, whole.subarray(0, 60));
    expect(() => readGgufHeaderSync(cutHeader)).toThrow(`Cannot read GGUF "${cutHeader}": file ends inside the header`);

    const cutData = join(dir, "cut-data.gguf");
    writeFileSync(cutData, whole.subarray(0, whole.byteLength - 100));
    expect(() => readGgufHeaderSync(cutData)).toThrow(`Cannot read GGUF "${cutData}": data of tensor "w" extends past the end of the file`);
    expect(readGgufHeaderSync(cutData, { allowTruncatedData: true }).tensors[0]!.name).toBe("w");
  });

  test("a corrupt array length fails without allocating it", () => {
    const bytes = new Uint8Array(64);
    const view = new DataView(bytes.buffer);
    view.setUint32(0, 0x46554747, true);
    view.setUint32(4, 3, true);
    view.setBigUint64(8, 0n, true); // tensors
    view.setBigUint64(16, 1n, true); // kvs
    view.setBigUint64(24, 1n, true); // key length
    bytes[32] = 0x6b; // "k"
    view.setUint32(33, GgufValueType.ARRAY, true);
    view.setUint32(37, GgufValueType.STRING, true);
    view.setBigUint64(41, 1n << 50n, true);
    expect(() => parseGgufHeader(bytes, "corrupt.gguf")).toThrow(`Cannot read GGUF "corrupt.gguf": file ends inside the header`);
  });

  test("writer rejects wrong tensor sizes and out-of-range values", async () => {
    const path = join(dir, "bad-write.gguf");
    await expect(
      writeGguf(path, { metadata: [], tensors: [{ name: "w", shape: [4, 4], type: GgmlType.F32, data: new Float32Array(15) }] }),
    ).rejects.toThrow(`Cannot write GGUF "${path}": tensor "w" got 60 bytes, expected 64`);
    expect(existsSync(path)).toBe(false);
    await expect(
      writeGguf(path, { metadata: [], tensors: [{ name: "q", shape: [30], type: GgmlType.Q4_0, data: new Uint8Array(18) }] }),
    ).rejects.toThrow(GgufWriteError);
    await expect(writeGguf(path, { metadata: [["n", ggufKv.uint8(256)]], tensors: [] })).rejects.toThrow(
      `Cannot write GGUF "${path}": value 256 of "n" does not fit uint8`,
    );
    await expect(writeGguf(path, { metadata: [["general.alignment", ggufKv.uint32(48)]], tensors: [] })).rejects.toThrow(
      `Cannot write GGUF "${path}": alignment 48 is not a power of two`,
    );
  });
});
