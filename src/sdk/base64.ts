// Base64 for the SDK's media parts with the web platform's atob and btoa, which Node, Bun and browsers
// all have (Buffer is Node's and Bun's only, and the remote SDK runs in browser bundles too).

/** Bytes from base64 text. Throws TypeError for text that is not base64. */
export function base64ToBytes(text: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new TypeError(`Cannot read media data: it is not base64 (starts "${text.slice(0, 20)}")`);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Base64 text of bytes, converted a slice at a time (String.fromCharCode takes a bounded argument list). */
export function bytesToBase64(bytes: Uint8Array): string {
  const slice = 0x8000;
  let binary = "";
  for (let i = 0; i < bytes.length; i += slice) binary += String.fromCharCode(...bytes.subarray(i, i + slice));
  return btoa(binary);
}
