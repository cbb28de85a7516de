/* tokenizer_bytes.c — GPT-2's byte alphabet, which ByteLevel uses both ways:
 * the pre-tokenizer spells every byte of a piece as one character of it
 * (tokenizer_encode.c), the decoder reads those characters back as bytes
 * (tokenizer_decode.c). */
#include "engine/tokenizer/tokenizer_impl.h"

/* Bytes that are printable and not a space stand for themselves: '!'..'~',
 * '¡'..'¬', '®'..'ÿ'. The other 68 are spelled U+0100, U+0101, ... in byte order. */
static bool self_printing(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

uint32_t attn_tok_byte_char(unsigned char b)
{
    if (self_printing(b)) return b;
    uint32_t n = 0;
    for (int i = 0; i < b; i++) n += !self_printing(i);
    return 256 + n;
}

int attn_tok_char_byte(uint32_t cp)
{
    if (cp < 256) return self_printing((int)cp) ? (int)cp : -1;
    uint32_t n = 256;
    for (int b = 0; b < 256; b++)
        if (!self_printing(b) && n++ == cp) return b;
    return -1;
}
