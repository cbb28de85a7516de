/* measure.h — numbers in a lesson's prose tied to what they measure.
 *
 * A lesson writes a measured number as {{NUMBER | WHAT key=value ...}}:
 *
 *     head 2 (0.81 on held-out poems)   is written
 *     head 2 ({{0.81 | weight at=self layer=0 head=2 on=heldout}} on held-out poems)
 *
 * The player shows only NUMBER. `attnlab lesson --check` measures WHAT on the
 * step's own trace (or the model's card for on=heldout) and reports the line
 * when the number shown is not the measurement rounded as it is printed:
 * 0.81 allows 0.805 … 0.815, 4 allows 3.5 … 4.5, 55% allows 0.545 … 0.555.
 *
 * WHAT is one of
 *   weight  a stage's cell (row= col=) or a mean over query rows of the key at
 *           an offset (at=-1, at=self) or the first key (at=first), over the
 *           rows that have a choice (more than one key the mask keeps: under
 *           the causal mask every query but the first, as the cards count); with
 *           on=heldout the model card's mean for that head (at= any key of
 *           the card's "mean": -8 … 1, first, prev_line, beyond, ...)
 *   prob    p(token=X) at row=, from the probs stage
 *   rank    the rank of token=X at row= (1: the most likely)
 *   loss    the loss of the step's text, nats per token; with row=, the loss at
 *           that row: −log p(the token that follows it)
 *   card    a number of the model card (key=heldout_loss, key=config.vocab_size)
 *   count   what=tokens|chars|letters|punct|cells|masked|visible|dropped|layers|heads|kv_heads
 *           (head=all: the cells of every head together), or what=peaks at=OFFSET:
 *           the query rows whose largest value is the key at that offset, or
 *           what=kv_bytes: the KV cache's bytes per token (every layer, float32),
 *           of the step's configuration or, with mode=mha|gqa|mqa|mla, of its
 *           heads in that mode (as the decode panel lists them), or
 *           what=skipped: with tiles, the tiles the causal mask hides whole (the
 *           tiled path skips them), or what=key_tiles: the key tiles a row passes
 *   bytes   float32 bytes the step's configuration keeps: what=scores, one head's
 *           s × t scores (the plain path's matrix); what=tile, one BQ × BK tile
 *           of them; what=kv, the keys and values of one K/V head for the t keys
 *           (what a query of that head reads); what=cache, the KV cache of the t
 *           positions, every K/V head of every layer
 *   sum     a row (row=) or a column (col=) of the stage added up
 *   max     the largest finite value of the stage's picture (head=all: of
 *   min     every head's), or the smallest: the range of the scores
 *   stream  the mean loss of the model's held-out sample read one token at a
 *           time over a KV cache that evicts (engine/run/stream.h): policy=all|
 *           window|sink, window=W, keep_first=N (sink), one_text=true (the
 *           texts joined into one, as StreamingLLM reads a book), tokens=N (the
 *           sample's first N tokens only); nats per token over the positions
 *           the policy scores; always on=heldout
 * Rows and columns are indices or tokens ("row=你": its first position).
 * layer=, head=, batch=, stage= default to the step's view; step=N measures on
 * step N's configuration instead (1 is the first ## step); toggle=causal|
 * padding|fill on that configuration with the compare view's toggle applied;
 * model=NAME reads that model's card (card, weight on=heldout), or streams that
 * model (stream), instead of the step's. on=SOURCE says where the figure was measured (source.h): a card
 * figure must name its key's source, weight on=heldout is the card's mean on
 * the held-out sample, any other measure's is the step's text (on=text). */
#ifndef LESSON_MEASURE_H
#define LESSON_MEASURE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "engine/trace/trace.h"

typedef enum {
    LESSON_MEASURE_WEIGHT,
    LESSON_MEASURE_PROB,
    LESSON_MEASURE_RANK,
    LESSON_MEASURE_LOSS,
    LESSON_MEASURE_CARD,
    LESSON_MEASURE_COUNT,
    LESSON_MEASURE_SUM,
    LESSON_MEASURE_BYTES,
    LESSON_MEASURE_STREAM,
    LESSON_MEASURE_MAX,
    LESSON_MEASURE_MIN
} lesson_measure_kind;

#define LESSON_MEASURE_ALL_HEADS (-2) /* head=all, for count */

typedef struct {
    lesson_measure_kind kind;
    int line;
    char *spec;          /* as written after '|', for messages */
    double shown;        /* the number the prose shows (a percentage as a fraction) */
    double half_unit;    /* half a unit of its last printed digit */
    size_t text_at;      /* where its number stands in the text that quotes it (the parser's) */
    int layer, head, batch, step; /* −1: the step's own; head LESSON_MEASURE_ALL_HEADS: all */
    int toggle;          /* a compare toggle applied to the step's configuration; −1: none */
    char model[64];      /* card, weight on=heldout: this model's card; "": the step's */
    char stage[32];      /* "": the step's */
    char row[64], col[64];/* an index or a token; "": none */
    char at[32];         /* weight, count what=peaks: "-1", "self", "first" or a card key */
    char token[64];      /* prob, rank */
    char key[64];        /* card: a number of card.json, "config.vocab_size" inside an object */
    char what[16];       /* count, bytes */
    char policy[8];      /* stream: all, window or sink */
    int window, keep_first, tokens; /* stream: W, N, the sample's first tokens read (0: all of it) */
    bool one_text;       /* stream: the sample's texts joined into one (attn_stream_join) */
    char mode[8];        /* count what=kv_bytes: mha, gqa, mqa or mla; "": the step's own */
    char on[16];         /* where it was measured (lessons/sources.tsv): heldout, training, random, model,
                          * text; "": not said (a measure of the step's own text). weight on=heldout reads
                          * the model card's means */
} lesson_measure;

/* Parses "{{NUMBER | WHAT k=v ...}}"'s inside, s[0..n); fills m (its spec is
 * owned) or returns -1 with a message in why. */
int lesson_measure_parse(const char *s, size_t n, int line, lesson_measure *m, char *why, size_t size);
void lesson_measure_free(lesson_measure *m);

/* The files measures read, kept so that a check reads each once however many
 * measures read it (1,000 prob measures each loading GPT-2's tokenizer took a
 * minute): a model's tokenizer.json (prob, rank) and card.json (card, weight
 * on=heldout), by path, a file that cannot be read with its message. The last
 * LESSON_MEASURE_FILES files are kept. Zero-initialise; the caller owns it and
 * frees it with lesson_measure_files_free. */
#define LESSON_MEASURE_FILES 4
typedef struct {
    struct lesson_measure_file *items; /* n of LESSON_MEASURE_FILES, the oldest replaced first */
    int n, next;
    long tokenizer_loads, card_loads;  /* files read (test_lesson counts them) */
} lesson_measure_files;

void lesson_measure_files_free(lesson_measure_files *f);

/* Measures m on tr, a trace of the step that shows (layer, head, batch,
 * stage) by default. model_dir is the step's model folder (NULL without a
 * model). The batch row, head and layer the measure reads must be tr's (its
 * row, column and token are found in tr too). files keeps what it reads for
 * the next measure (NULL: read and dropped). Returns 0 with *value, or -1
 * with the reason in why. */
int lesson_measure_eval(const lesson_measure *m, const attn_trace *tr, int layer, int head, int batch,
                        const char *stage, const char *model_dir, lesson_measure_files *files, double *value,
                        char *why, size_t size);

/* Where m was measured (lessons/sources.tsv): a card figure its key's source
 * (NULL for a key in no row), weight on=heldout "heldout", any other "text". */
const char *lesson_measure_source(const lesson_measure *m);

/* Does value round to what m shows? */
bool lesson_measure_agrees(const lesson_measure *m, double value);

#endif
