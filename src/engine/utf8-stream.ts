/**
 * Incremental UTF-8 decoding of llama.cpp token pieces.
 *
 * `llama_token_to_piece` yields raw bytes, and byte-level BPE vocabularies
 * routinely split one multi-byte character (emoji, CJK, accented letters)
 * across two to four tokens. Decoding each piece on its own would emit
 * U+FFFD for every half character, so the decoder keeps an incomplete
 * trailing sequence until the bytes that finish it arrive.
 *
 * Built on the WHATWG TextDecoder in streaming mode, whose behaviour the
 * tests pin down (test/engine/utf8-stream.test.ts):
 *  - an incomplete trailing sequence is held back, nothing else is;
 *  - an invalid byte becomes U+FFFD as soon as it is known to be invalid
 *    (a lone continuation byte immediately; a lead byte as soon as the next
 *    byte is not a valid continuation), so bad output never stalls the stream;
 *  - replacement follows the "maximal subpart" rule: one U+FFFD per broken
 *    sequence, and the byte that broke it is decoded afresh (F0 41 -> "\uFFFDA");
 *  - streamed output equals decoding all bytes at once, however they are split.
 */
export class Utf8PieceDecoder {
  // ignoreBOM: a model may legitimately generate U+FEFF as its first
  // character; the default TextDecoder would silently drop it.
  private decoder = new TextDecoder("utf-8", { ignoreBOM: true });

  /**
   * Adds the bytes of one token piece and returns all text that is complete
   * so far (possibly ""). Bytes of a character that is not finished yet are
   * kept for the next push.
   */
  push(bytes: Uint8Array): string {
    return this.decoder.decode(bytes, { stream: true });
  }

  /**
   * Ends the stream: returns what is left, with a held-back incomplete
   * sequence turned into one U+FFFD. The decoder is then empty and can be
   * reused for a new stream.
   */
  flush(): string {
    return this.decoder.decode();
  }
}
