/* fuzz_trace.c — libFuzzer target: any byte string given to the safetensors
 * reader and the trace loader must end in ATTN_OK or a one-line error, with
 * no crash, leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/formats/safetensors.h"
#include "engine/formats/trace_io.h"

static volatile float sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    attn_error err;
    attn_trace tr;
    if (attn_trace_parse(data, size, &tr, &err) == ATTN_OK) {
        /* walk what was accepted: every tensor's data must be readable */
        for (const attn_tensor *t = NULL; (t = attn_trace_next(&tr, t));)
            for (size_t i = 0; i < t->count; i++) sink += t->data[i];
        attn_trace_free(&tr);
    } else if (memchr(err.msg, '\n', strlen(err.msg)) || !err.msg[0]) {
        abort(); /* an error must be one non-empty line */
    }
    return 0;
}
