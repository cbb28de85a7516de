/* tokenizer_bounds.c — how much a step of the pipeline may make, for the
 * encoder's steps (tokenizer_encode.c) and the decoder's (tokenizer_decode.c)
 * alike: at most TOK_GROWTH × the bytes it is given + TOK_GROWTH_PLUS, and
 * never more than TOK_MAX_STEP_BYTES; a step that would make more is refused
 * in one line naming the file and the step. */
#include "engine/base/error.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_impl.h"

size_t attn_tok_step_most(size_t in)
{
    size_t most = in <= TOK_MAX_STEP_BYTES ? TOK_GROWTH * in + TOK_GROWTH_PLUS : TOK_MAX_STEP_BYTES;
    return most < TOK_MAX_STEP_BYTES ? most : TOK_MAX_STEP_BYTES;
}

attn_status attn_tok_too_big(const attn_tokenizer *t, const char *kind, int step, const char *type, size_t in,
                             attn_error *err)
{
    return attn_fail(err, ATTN_ERR_FORMAT, "%s: %s step %d (%s) makes more than %zu bytes of %zu, the most a step "
                     "may make (%d × what it is given + %d, and at most %d)", t->name, kind, step + 1, type,
                     attn_tok_step_most(in), in, TOK_GROWTH, TOK_GROWTH_PLUS, TOK_MAX_STEP_BYTES);
}
