// The image URL guard and readers, against a real HTTP server on loopback: which addresses count as
// internal, redirects re-checked at every hop, size and time limits, data URIs and base64.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { isInternalAddress } from "../../src/vision/internal-address.ts";
import { defaultImageFetchPolicy, fetchImageUrl, type ImageFetchPolicy } from "../../src/vision/image-fetch.ts";
import { imageFromBase64, imageFromUrl, ImageInputError } from "../../src/vision/image-source.ts";
import { sniffImageFormat, toEngineImage } from "../../src/vision/image-format.ts";
import { siblingProjector } from "../../src/vision/projector-file.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";

const fixture = (name: string) => join(import.meta.dir, "..", "fixtures", "images", name);
const jpeg = new Uint8Array(await Bun.file(fixture("python-16.jpg")).arrayBuffer());

describe("isInternalAddress", () => {
  test.each([
    "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "fc00::5", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
    "::ffff:7f00:1", "64:ff9b::a9fe:a9fe", "2002:c0a8:0101::1", "not an address",
  ])("%s is internal", (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  test.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "172.15.255.255", "192.169.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2a00:1450::1"])(
    "%s is public",
    (address) => {
      expect(isInternalAddress(address)).toBe(false);
    },
  );
});

describe("fetchImageUrl", () => {
  let server: ReturnType<typeof Bun.serve>;
  let base: string;
  beforeAll(() => {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        switch (url.pathname) {
          case "/image.jpg":
            return new Response(jpeg, { headers: { "content-type": "image/jpeg" } });
          case "/host":
            return new Response(request.headers.get("host"));
          case "/to-image":
            return Response.redirect("/image.jpg", 302);
          case "/to-other-loopback":
            return Response.redirect(`http://127.0.0.2:${url.port}/image.jpg`, 302);
          case "/to-file":
            return new Response(null, { status: 302, headers: { location: "file:///etc/passwd" } });
          case "/loop":
            return Response.redirect("/loop", 302);
          case "/big":
            return new Response(new Uint8Array(64 * 1024));
          case "/big-chunked":
            return new Response(new ReadableStream({
              start(controller) {
                for (let i = 0; i < 64; i++) controller.enqueue(new Uint8Array(1024));
                controller.close();
              },
            }));
          case "/slow":
            await Bun.sleep(5000);
            return new Response(jpeg);
          case "/missing":
            return new Response("no", { status: 404 });
          default:
            return new Response("not an image");
        }
      },
    });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.stop(true));

  const allowLoopback: ImageFetchPolicy = { ...defaultImageFetchPolicy, allowPrivate: true };

  test("a loopback URL is refused by default, with the reason and the flag that allows it", async () => {
    const error = await fetchImageUrl(`${base}/image.jpg`).catch((e) => e);
    expect(error).toBeInstanceOf(ImageInputError);
    expect(error.message).toContain("127.0.0.1");
    expect(error.message).toContain("--allow-private-image-urls");
    await expect(fetchImageUrl(`http://localhost:${server.port}/image.jpg`)).rejects.toThrow("loopback, private or link-local");
  });

  test("with private addresses allowed the bytes arrive, following redirects", async () => {
    expect(await fetchImageUrl(`${base}/image.jpg`, allowLoopback)).toEqual(jpeg);
    expect(await fetchImageUrl(`${base}/to-image`, allowLoopback)).toEqual(jpeg);
  });

  test("plain http connects to the checked address and keeps the name in the Host header", async () => {
    const bytes = await fetchImageUrl(`http://localhost:${server.port}/host`, allowLoopback);
    expect(new TextDecoder().decode(bytes)).toBe(`localhost:${server.port}`);
  });

  test("every redirect is checked again: one to a blocked address is refused", async () => {
    const policy: ImageFetchPolicy = { ...defaultImageFetchPolicy, isBlocked: (address) => address === "127.0.0.2" };
    expect(await fetchImageUrl(`${base}/image.jpg`, policy)).toEqual(jpeg);
    await expect(fetchImageUrl(`${base}/to-other-loopback`, policy)).rejects.toThrow("resolves to 127.0.0.2");
  });

  test("a redirect to another scheme, endless redirects, and HTTP errors are refused", async () => {
    await expect(fetchImageUrl(`${base}/to-file`, allowLoopback)).rejects.toThrow("only http and https");
    await expect(fetchImageUrl(`${base}/loop`, allowLoopback)).rejects.toThrow("redirects");
    await expect(fetchImageUrl(`${base}/missing`, allowLoopback)).rejects.toThrow("HTTP 404");
  });

  test("bodies over the size limit are refused, with or without a length header", async () => {
    const small = { ...allowLoopback, maxBytes: 32 * 1024 };
    await expect(fetchImageUrl(`${base}/big`, small)).rejects.toThrow("larger than 32768 bytes");
    await expect(fetchImageUrl(`${base}/big-chunked`, small)).rejects.toThrow("larger than 32768 bytes");
  });

  test("a server that does not answer in time is given up on", async () => {
    await expect(fetchImageUrl(`${base}/slow`, { ...allowLoopback, timeoutMs: 200 })).rejects.toThrow("within 0.2 s");
  });

  test("other schemes, credentials and non-URLs are refused", async () => {
    await expect(fetchImageUrl("file:///etc/passwd", allowLoopback)).rejects.toThrow("only http and https");
    await expect(fetchImageUrl(`http://user:pw@127.0.0.1:${server.port}/image.jpg`, allowLoopback)).rejects.toThrow("credentials");
    await expect(fetchImageUrl("not a url")).rejects.toThrow("is not a URL");
  });

  test("imageFromUrl refuses fetched bytes that are not an image", async () => {
    await expect(imageFromUrl(`${base}/text`, allowLoopback)).rejects.toThrow("not a JPEG, PNG, GIF, BMP or WebP image");
    await expect(imageFromUrl("ftp://example.com/a.png")).rejects.toThrow("data:image");
  });
});

describe("image data", () => {
  const base64 = Buffer.from(jpeg).toString("base64");

  test("data URIs and base64 decode to the file's bytes", async () => {
    expect(await imageFromUrl(`data:image/jpeg;base64,${base64}`)).toEqual(jpeg);
    expect(await imageFromUrl(`data:;base64,${base64}`)).toEqual(jpeg);
    expect(imageFromBase64(base64)).toEqual(jpeg);
    expect(imageFromBase64(base64.replace(/(.{60})/g, "$1\n"))).toEqual(jpeg);
  });

  test("bad base64, a non-image media type and non-image bytes are refused", async () => {
    expect(() => imageFromBase64("not base64 at all!")).toThrow("not valid base64");
    expect(() => imageFromBase64("")).toThrow("empty");
    expect(() => imageFromBase64(Buffer.from("hello, world").toString("base64"))).toThrow("not a JPEG");
    await expect(imageFromUrl(`data:text/plain;base64,${base64}`)).rejects.toThrow('media type "text/plain"');
    await expect(imageFromUrl("data:image/png,rawtext")).rejects.toThrow("base64");
  });

  test("formats are told apart by their first bytes; WebP becomes RGB pixels", async () => {
    expect(sniffImageFormat(jpeg)).toBe("jpeg");
    expect(sniffImageFormat(new Uint8Array(await Bun.file(fixture("llama1-icon.png")).arrayBuffer()))).toBe("png");
    const webp = new Uint8Array(await Bun.file(fixture("python-16.webp")).arrayBuffer());
    expect(sniffImageFormat(webp)).toBe("webp");
    const image = await toEngineImage(webp);
    expect(image).toMatchObject({ kind: "rgb", width: 16, height: 16 });
    expect(image.kind === "rgb" && image.pixels.length).toBe(16 * 16 * 3);
    expect(await toEngineImage(jpeg)).toEqual({ kind: "file", bytes: jpeg });
    const brokenWebp = webp.slice(0, 40);
    await expect(toEngineImage(brokenWebp)).rejects.toThrow("Cannot decode WebP image");
  });
});

describe("siblingProjector", () => {
  test("finds mmproj-*.gguf next to the model, preferring the closest name", () => {
    const dir = mkdtempSync(join(tmpdir(), "llamux-mmproj-"));
    try {
      writeFileSync(join(dir, "Foo-Q4_K_M.gguf"), "");
      expect(siblingProjector(join(dir, "Foo-Q4_K_M.gguf"))).toBeUndefined();
      writeFileSync(join(dir, "mmproj-Bar-F16.gguf"), "");
      writeFileSync(join(dir, "mmproj-Foo-F16.gguf"), "");
      expect(siblingProjector(join(dir, "Foo-Q4_K_M.gguf"))).toBe(join(dir, "mmproj-Foo-F16.gguf"));
      expect(siblingProjector(join(dir, "mmproj-Foo-F16.gguf"))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
