/* test_stages.c — the stage catalogue: ids, names, presence rules, shapes,
 * and the explanation of a cell (explain.h) for every stage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "engine/formats/trace_io.h"
#include "engine/run/forward.h"
#include "engine/trace/explain.h"
#include "model_fixture.h"

static char ROOT[256]; /* the model folders' directory */

static void run(const char *const *kv, attn_trace *tr)
{
    attn_config c;
    attn_error err;
    attn_config_init(&c);
    for (int i = 0; kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &err)) fail_msg("%s", err.msg);
    if (attn_trace_run(&c, NULL, tr, &err)) fail_msg("%s", err.msg);
    attn_config_free(&c);
}

static void test_rows_are_indexed_by_id(void **state)
{
    (void)state;
    int n;
    const attn_stage_info *st = attn_stages(&n);
    assert_int_equal(n, ATTN_STAGE_COUNT);
    for (int i = 0; i < n; i++) {
        assert_int_equal(st[i].id, i);
        assert_ptr_equal(attn_stage_get((attn_stage_id)i), &st[i]);
        assert_ptr_equal(attn_stage_lookup(st[i].name), &st[i]);
        assert_int_equal(attn_stage_index(st[i].name), i);
        assert_non_null(st[i].desc);
        assert_non_null(st[i].formula);
        for (int j = 0; j < i; j++) assert_string_not_equal(st[i].name, st[j].name);
        /* a stage every run records has no reason to be absent, and the others have one */
        assert_int_equal(st[i].rule == ATTN_PRESENT_ALWAYS && !st[i].not_mla, attn_stage_absent_why(&st[i])[0] == '\0');
    }
    assert_null(attn_stage_get(ATTN_STAGE_NONE));
    assert_null(attn_stage_get(ATTN_STAGE_COUNT));
    assert_null(attn_stage_lookup("layers.0.weights"));
    assert_int_equal(attn_stage_index("nope"), -1);
    assert_string_equal(attn_stage_get(ATTN_STAGE_WEIGHTS_DROPOUT)->name, "weights_dropout");
    assert_string_equal(attn_stage_absent_why(attn_stage_get(ATTN_STAGE_Q_ROPE)), "it needs rope = true");
}

static void test_roles_and_views(void **state)
{
    (void)state;
    /* the query × key pictures: scores through weights_dropout */
    int qk = 0;
    for (int i = 0; i < ATTN_STAGE_COUNT; i++) {
        const attn_stage_info *in = attn_stage_get((attn_stage_id)i);
        if (!(in->roles & ATTN_ROLE_QUERY_KEY)) continue;
        qk++;
        assert_true(i >= ATTN_STAGE_SCORES && i <= ATTN_STAGE_WEIGHTS_DROPOUT);
        assert_true(!strcmp(in->dims, "b,h,s,t") || !strcmp(in->dims, "b,1,s,t"));
    }
    assert_int_equal(qk, 7); /* scores, bias, capped_scores, mask, masked_scores, weights, weights_dropout */
    /* the mask overlays what comes after it, not the raw scores */
    assert_false(attn_stage_get(ATTN_STAGE_SCORES)->masked);
    assert_true(attn_stage_get(ATTN_STAGE_MASKED_SCORES)->masked);
    assert_true(attn_stage_get(ATTN_STAGE_WEIGHTS_DROPOUT)->masked);
    assert_false(attn_stage_get(ATTN_STAGE_CONTEXT)->masked);
    /* the compare view: weights unless the stage compares itself */
    assert_int_equal(attn_stage_compare_view(ATTN_STAGE_CONTEXT), ATTN_STAGE_CONTEXT);
    assert_int_equal(attn_stage_compare_view(ATTN_STAGE_WEIGHTS_DROPOUT), ATTN_STAGE_WEIGHTS_DROPOUT);
    assert_int_equal(attn_stage_compare_view(ATTN_STAGE_SCORES), ATTN_STAGE_WEIGHTS);
    /* a model's next-token distribution compares itself: does the toggle change the prediction? */
    assert_int_equal(attn_stage_compare_view(ATTN_STAGE_PROBS), ATTN_STAGE_PROBS);
    assert_int_equal(attn_stage_compare_view(ATTN_STAGE_LOGITS), ATTN_STAGE_LOGITS);
    assert_int_equal(attn_stage_compare_view(ATTN_STAGE_NONE), ATTN_STAGE_WEIGHTS);
    /* colour maps */
    assert_int_equal(attn_stage_get(ATTN_STAGE_WEIGHTS)->cmap, ATTN_CMAP_SEQUENTIAL);
    assert_int_equal(attn_stage_get(ATTN_STAGE_MASK)->cmap, ATTN_CMAP_MASK);
    assert_int_equal(attn_stage_get(ATTN_STAGE_SCORES)->cmap, ATTN_CMAP_DIVERGING);
    /* head blocks: the kv projections by kv head, W_O by its input rows */
    assert_int_equal(attn_stage_get(ATTN_STAGE_W_K)->blocks, ATTN_BLOCKS_KV_COLS);
    assert_int_equal(attn_stage_get(ATTN_STAGE_W_O)->blocks, ATTN_BLOCKS_HEAD_ROWS);
    assert_int_equal(attn_stage_get(ATTN_STAGE_X)->blocks, ATTN_BLOCKS_NONE);
    /* every learned matrix is (in, out): d inputs, except W_O's h·k (the merged heads); QK-norm's gains are vectors */
    for (int i = 0; i < ATTN_STAGE_COUNT; i++) {
        const attn_stage_info *in = attn_stage_get((attn_stage_id)i);
        bool gain = i == ATTN_STAGE_W_QN || i == ATTN_STAGE_W_KN;
        if (in->roles & ATTN_ROLE_WEIGHT)
            assert_string_equal(in->dims, gain ? "k" : i == ATTN_STAGE_W_O ? "h*k,d" : i == ATTN_STAGE_W_Q ? "d,h*k"
                                          : i == ATTN_STAGE_W_DKV ? "d,R" : i == ATTN_STAGE_W_KR ? "d,D"
                                          : i == ATTN_STAGE_W_UK || i == ATTN_STAGE_W_UV ? "R,h*k" : "d,g*k");
    /* MLA's query heads have dₖ + D features */
    assert_string_equal(attn_stage_dims(attn_stage_get(ATTN_STAGE_W_Q), &(attn_dims){.mode = ATTN_MODE_MLA}), "d,h*(k+D)");
    assert_string_equal(attn_stage_dims(attn_stage_get(ATTN_STAGE_W_Q), &(attn_dims){.mode = ATTN_MODE_MHA}), "d,h*k");
    }
}

/* A run records exactly the stages the presence rules say, in pipeline order,
 * each with the catalogue's shape, and the size estimate counts just those. */
static void check_presence(const char *const *kv)
{
    attn_trace tr;
    run(kv, &tr);
    attn_stage_ctx ctx = attn_config_stage_ctx(&tr.cfg, &tr.dims);
    int n, at = 0;
    const attn_stage_info *st = attn_stages(&n);
    for (int i = 0; i < n; i++) {
        const attn_tensor *t = attn_trace_stage(&tr, 0, st[i].id);
        assert_int_equal(t != NULL, attn_stage_present(&st[i], &ctx));
        if (!t) continue;
        assert_ptr_equal(t, &tr.tensors[at++]);
        assert_ptr_equal(t->info, &st[i]);
        assert_int_equal(t->layer, 0);
        int64_t shape[ATTN_MAX_NDIM];
        assert_int_equal(attn_stage_shape(&st[i], &tr.dims, shape), t->ndim);
        assert_memory_equal(shape, t->shape, (size_t)t->ndim * sizeof shape[0]);
    }
    assert_int_equal(at, tr.n_tensors);
    double bytes;
    attn_error err;
    assert_int_equal(attn_trace_estimate(&tr.cfg, &bytes, &err), ATTN_OK);
    assert_true(bytes == attn_stages_bytes(&ctx, 1));
    attn_trace_free(&tr);
}

static void test_presence_rules_match_a_run(void **state)
{
    (void)state;
    check_presence((const char *const[]){NULL});
    check_presence((const char *const[]){"past", "2", "rope", "true", NULL});
    check_presence((const char *const[]){"train", "true", "dropout", "0.2", "kv_heads", "2", NULL});
    check_presence((const char *const[]){"train", "true", "dropout", "0", NULL});
    check_presence((const char *const[]){"causal", "false", "source_tokens", "a b c", "tokens", "x y", NULL});
    check_presence((const char *const[]){"alibi", "true", "softcap", "20", "qk_norm", "true", "sink_logit", "1", "past", "2", NULL});
    check_presence((const char *const[]){"softcap", "3", "sink_logit", "-2", "causal", "false", "source_tokens", "a b", "tokens", "x y z", NULL});
    check_presence((const char *const[]){"mode", "mla", "kv_rank", "6", "rope_dim", "2", "rope", "true", "past", "2", NULL});
    check_presence((const char *const[]){"mode", "mla", "mla_absorb", "true", "train", "true", "alibi", "true",
                                         "sink_logit", "0", NULL});
}

/* ---- explanations ---- */

static char seen[32][96];
static int n_seen;

/* records each msgid asked for and returns it untranslated */
static const char *record(const char *msgid)
{
    if (n_seen < 32) snprintf(seen[n_seen++], sizeof seen[0], "%s", msgid);
    return msgid;
}

static bool asked(const char *msgid)
{
    for (int i = 0; i < n_seen; i++)
        if (!strcmp(seen[i], msgid)) return true;
    return false;
}

static const char *explain(const attn_trace *tr, attn_stage_id id, int head, int i, int j, char *buf, size_t size)
{
    attn_explain_cell c = {tr, attn_trace_stage(tr, 0, id), 0, head, i, j, "猫", record};
    n_seen = 0;
    return attn_explain(&c, buf, size);
}

static void test_every_stage_explains_more_than_its_value(void **state)
{
    (void)state;
    attn_trace tr;
    run((const char *const[]){"past", "1", "rope", "true", "train", "true", "kv_heads", "2", "alibi", "true",
                               "softcap", "5", "qk_norm", "true", "sink_logit", "0.5", NULL}, &tr);
    char buf[256];
    for (const attn_tensor *t = NULL; (t = attn_trace_next(&tr, t));) {
        explain(&tr, t->info->id, 1, 0, 1, buf, sizeof buf);
        /* "name[...] = " then more than the bare number */
        const char *eq = strstr(buf, "] = ");
        assert_non_null(eq);
        if (strspn(eq + 4, "0123456789.-+e") == strlen(eq + 4)) fail_msg("%s explains only its value: %s", t->name, buf);
    }
    attn_trace_free(&tr);
    for (int absorb = 0; absorb < 2; absorb++) { /* MLA's stages, naive and absorbed */
        run((const char *const[]){"mode", "mla", "past", "1", "rope", "true", "mla_absorb", absorb ? "true" : "false",
                                   NULL}, &tr);
        for (const attn_tensor *t = NULL; (t = attn_trace_next(&tr, t));) {
            explain(&tr, t->info->id, 1, 0, 1, buf, sizeof buf);
            const char *eq = strstr(buf, "] = ");
            assert_non_null(eq);
            if (strspn(eq + 4, "0123456789.-+e") == strlen(eq + 4)) fail_msg("%s explains only its value: %s", t->name, buf);
        }
        attn_trace_free(&tr);
    }
    /* a learned sink per head (gpt-oss's arch.sinks, no sink_logit setting): explain reads X back from
     * the row and its sink_weight; here the trace's own X = 0.5 stands in for a head's learned one */
    run((const char *const[]){"sink_logit", "0.5", NULL}, &tr);
    tr.arch.sinks = true;
    tr.cfg.sink_logit = -INFINITY;
    assert_non_null(strstr(explain(&tr, ATTN_STAGE_SINK_WEIGHT, 0, 1, 2, buf, sizeof buf), "with X = 0.5:"));
    assert_non_null(strstr(explain(&tr, ATTN_STAGE_WEIGHTS, 1, 2, 1, buf, sizeof buf), "+ exp(X − max)"));
    attn_trace_free(&tr);
    /* RoPE off: q_pe and k_pe say they are not rotated; naive MLA's context sums v_up, not v */
    run((const char *const[]){"mode", "mla", "rope", "false", NULL}, &tr);
    assert_non_null(strstr(explain(&tr, ATTN_STAGE_Q_PE, 1, 0, 1, buf, sizeof buf), "not rotated (rope off)"));
    assert_non_null(strstr(explain(&tr, ATTN_STAGE_K_PE, 0, 0, 1, buf, sizeof buf), "not rotated (rope off)"));
    assert_null(strstr(buf, "rotated to position"));
    assert_non_null(strstr(explain(&tr, ATTN_STAGE_CONTEXT, 1, 0, 1, buf, sizeof buf), "·v_up[j, c=1]"));
    attn_trace_free(&tr);
}

static void test_explanations_use_the_numbers_and_translate(void **state)
{
    (void)state;
    attn_trace tr;
    run((const char *const[]){NULL}, &tr); /* the example: causal, row 1 padded */
    char buf[256];
    assert_string_equal(explain(&tr, ATTN_STAGE_MASK, 0, 1, 3, buf, sizeof buf),
                        "mask[i=1, j=3] = −∞: key 3 is in the future of query 1 (causal)");
    assert_true(asked(": key %d is in the future of query %d (causal)"));
    explain(&tr, ATTN_STAGE_SCORES, 2, 3, 1, buf, sizeof buf);
    assert_memory_equal(buf, "scores[h=2, i=3, j=1] = q₃·k₁ / √8 = ", strlen("scores[h=2, i=3, j=1] = q₃·k₁ / √8 = "));
    assert_int_equal(n_seen, 0); /* a formula alone has no words to translate */
    explain(&tr, ATTN_STAGE_X, 0, 4, 0, buf, sizeof buf);
    assert_memory_equal(buf, "x[i=4, c=0] = embed(“猫”)[0] = ", strlen("x[i=4, c=0] = embed(“猫”)[0] = "));
    explain(&tr, ATTN_STAGE_K_EXPANDED, 3, 2, 0, buf, sizeof buf);
    assert_memory_equal(buf, "k_expanded[h=3, j=2, c=0] = ", strlen("k_expanded[h=3, j=2, c=0] = "));
    assert_true(asked("%s of kv head %d = %d / (%d/%d) (repeat_kv)"));
    /* outside the picture: nothing; a short buffer: cut, terminated */
    assert_string_equal(explain(&tr, ATTN_STAGE_WEIGHTS, 0, 6, 0, buf, sizeof buf), "");
    assert_string_equal(explain(&tr, ATTN_STAGE_WEIGHTS, 0, -1, 0, buf, sizeof buf), "");
    char small[12];
    assert_string_equal(explain(&tr, ATTN_STAGE_WEIGHTS, 0, 0, 0, small, sizeof small), "weights[h=0");
    attn_explain_cell none = {&tr, NULL, 0, 0, 0, 0, NULL, NULL};
    assert_string_equal(attn_explain(&none, buf, sizeof buf), "");
    attn_trace_free(&tr);
}

/* A mixture-of-experts layer's router cells (a model's trace, built by hand:
 * one row of 2 tokens, E = 3 experts) say whether the token chose the expert,
 * and its rank among the token's chosen by weight, in the token's and the
 * expert's names (i, e). */
static void test_router_explains_the_choice(void **state)
{
    (void)state;
    float scores[6] = {0.2f, 0.7f, 0.5f, 0.9f, 0.1f, 0.4f}, weights[6] = {0, 1.25f, 0, 1.5f, 0.5f, 0};
    attn_tensor t[2] = {{.name = "router_scores", .info = attn_stage_get(ATTN_STAGE_ROUTER_SCORES), .data = scores},
                        {.name = "expert_weights", .info = attn_stage_get(ATTN_STAGE_EXPERT_WEIGHTS), .data = weights}};
    for (int i = 0; i < 2; i++) t[i].ndim = 3, t[i].shape[0] = 1, t[i].shape[1] = 2, t[i].shape[2] = 3, t[i].count = 6;
    attn_trace tr = {.tensors = t, .n_tensors = 2, .n_layers = 1,
                     .dims = {.b = 1, .s = 2, .L = 2, .t = 2, .n = 2, .E = 3, .h = 1, .g = 1, .k = 1, .d = 1}};
    char buf[256];
    attn_explain_cell c = {&tr, &t[1], 0, 0, 1, 0, "猫", NULL};
    assert_string_equal(attn_explain(&c, buf, sizeof buf),
                        "expert_weights[i=1, e=0] = 1.500: token 1 “猫” chose expert 0, rank 1 of its 2 by weight: its output is "
                        "weighed by this (router score 0.900)");
    c.j = 1;
    assert_string_equal(attn_explain(&c, buf, sizeof buf),
                        "expert_weights[i=1, e=1] = 0.500: token 1 “猫” chose expert 1, rank 2 of its 2 by weight: its output "
                        "is weighed by this (router score 0.100)");
    c.j = 2;
    assert_string_equal(attn_explain(&c, buf, sizeof buf),
                        "expert_weights[i=1, e=2] = 0: token 1 “猫” did not choose expert 2 (router score 0.400)");
    c.t = &t[0], c.i = 0, c.j = 1;
    assert_string_equal(attn_explain(&c, buf, sizeof buf),
                        "router_scores[i=0, e=1] = 0.700: expert 1's score for token 0 “猫” (chosen: rank 1 of its 1 by weight)");
}

static const char *explain_row(const attn_trace *tr, int b, int i, int j, char *buf, size_t size)
{
    attn_explain_cell c = {tr, attn_trace_stage(tr, 0, ATTN_STAGE_MASK), b, 0, i, j, "猫", record};
    n_seen = 0;
    return attn_explain(&c, buf, size);
}

static void test_sliding_window_explains_the_band(void **state)
{
    (void)state;
    attn_trace tr;
    char buf[256];
    run((const char *const[]){"sliding_window", "3", NULL}, &tr); /* causal: the last 3 keys */
    assert_string_equal(explain_row(&tr, 0, 4, 1, buf, sizeof buf),
                        "mask[i=4, j=1] = −∞: key 1 is outside the window of 3 (query 4 reads keys 2 to 4)");
    assert_true(asked(": key %d is outside the window of %d (query %d reads keys %d to %d)"));
    assert_string_equal(explain_row(&tr, 0, 4, 2, buf, sizeof buf), "mask[i=4, j=2] = 0.000: query 4 may look at key 2");
    assert_string_equal(explain_row(&tr, 0, 4, 5, buf, sizeof buf),
                        "mask[i=4, j=5] = −∞: key 5 is in the future of query 4 (causal)");
    attn_trace_free(&tr);
    run((const char *const[]){"sliding_window", "2", "causal", "false", NULL}, &tr); /* both sides */
    assert_string_equal(explain_row(&tr, 0, 1, 3, buf, sizeof buf),
                        "mask[i=1, j=3] = −∞: key 3 is outside the window of 2 (query 1 reads keys 0 to 2)");
    /* row 1 of the example is "我 爱 AI" and three <pad> */
    assert_string_equal(explain_row(&tr, 1, 0, 4, buf, sizeof buf),
                        "mask[i=0, j=4] = −∞: key 4 is outside the window of 2 (query 0 reads keys 0 to 1), and padding");
    attn_trace_free(&tr);
}

/* Every stage's formula and description under every setting that changes
 * them says what that setting does, and nothing it does not. */
static void test_formulas_follow_the_settings(void **state)
{
    (void)state;
    int n;
    const attn_stage_info *all = attn_stages(&n);
    for (int model = 0; model < 2; model++)
        for (int scale = 0; scale < 2; scale++)
            for (int causal = 0; causal < 3; causal++)
                for (int pad = 0; pad < 2; pad++)
                    for (int cross = 0; cross < 2; cross++)
                        for (int half = 0; half < 2; half++)
                            for (int window = 0; window < 4; window += 3)
                            for (int arch = 0; arch < 3; arch++) { /* none, Qwen2's biases, Qwen3's q/k norms */
                                if (cross && (causal || window || model)) continue; /* not a configuration */
                                if (arch && !model) continue;
                                for (int past = 0; past < 4; past += 3) {
                                attn_stage_text c = {.model = model, .scale = scale, .causal = causal, .pad_mask = pad, .cross = cross,
                                                     .rope_half = half, .window = window, .bias = arch == 1,
                                                     .qk_norm = arch == 2, .past = past};
                                for (int i = 0; i < n; i++) {
                                    const char *f = attn_stage_formula_in(&all[i], &c), *d = attn_stage_desc_in(&all[i], &c);
                                    assert_non_null(f);
                                    assert_non_null(d);
                                    char both[600];
                                    snprintf(both, sizeof both, "%s | %s", f, d);
                                    if (all[i].id == ATTN_STAGE_SCORES) {
                                        if (!scale && (strstr(both, "/ √") || strstr(both, "scaled d")))
                                            fail_msg("scale off: '%s'", both);
                                        if (scale && !strstr(f, "/ √dₖ")) fail_msg("scale on: '%s'", f);
                                    }
                                    if (all[i].id == ATTN_STAGE_MASK) {
                                        if (causal != 1 && strstr(f, "future")) fail_msg("causal %d: '%s'", causal, f);
                                        if (causal == 1 && !cross && !strstr(f, "future")) fail_msg("causal: '%s'", f);
                                        if ((causal == 2) != (strstr(f, "past") != NULL)) fail_msg("reversed %d: '%s'", causal, f);
                                        if (pad != (strstr(f, "<pad>") != NULL)) fail_msg("pad_mask %d: '%s'", pad, f);
                                        if ((window > 0 && causal != 2) != (strstr(f, "W") != NULL))
                                            fail_msg("window %d: '%s'", window, f);
                                        if (cross != (strstr(f, "source") != NULL || (!pad && cross)))
                                            fail_msg("cross %d: '%s'", cross, f);
                                    }
                                    if (all[i].id == ATTN_STAGE_Q_ROPE || all[i].id == ATTN_STAGE_K_ROPE) {
                                        if ((half || model) != (strstr(f, "rotate_half") != NULL))
                                            fail_msg("rope half %d model %d: '%s'", half, model, f);
                                        if ((arch == 2) != (strstr(f, "_norm") != NULL)) fail_msg("qk norm %d: '%s'", arch, f);
                                    }
                                    if (all[i].id == ATTN_STAGE_Q || all[i].id == ATTN_STAGE_K || all[i].id == ATTN_STAGE_V)
                                        if ((arch == 1) != (strstr(f, "+ b_") != NULL)) fail_msg("bias %d: '%s'", arch, f);
                                    /* P is named only where there is a cache to leave out (lesson 1 has none) */
                                    if (all[i].id == ATTN_STAGE_X && !model && (past > 0) != (strstr(f, "P") != NULL))
                                        fail_msg("past %d: '%s'", past, f);
                                }
                                }
                            }
}

/* The settings around the scores name themselves where they act: the bias
 * and the cap in masked_scores' formula, the sink in the weights', the kept
 * first keys in the mask's, and nowhere else. */
static void test_formulas_follow_the_score_settings(void **state)
{
    (void)state;
    for (int bits = 0; bits < 32; bits++) {
        attn_stage_text c = {.scale = true, .causal = bits & 16 ? 0 : 1, .pad_mask = true, .window = 3,
                             .alibi = bits & 1, .softcap = bits & 2, .sink = bits & 4, .keep_first = bits & 8 ? 2 : 0};
        const char *ms = attn_stage_formula_in(attn_stage_get(ATTN_STAGE_MASKED_SCORES), &c);
        const char *cap = attn_stage_formula_in(attn_stage_get(ATTN_STAGE_CAPPED_SCORES), &c);
        const char *w = attn_stage_formula_in(attn_stage_get(ATTN_STAGE_WEIGHTS), &c);
        const char *wd = attn_stage_desc_in(attn_stage_get(ATTN_STAGE_WEIGHTS), &c);
        const char *mask = attn_stage_formula_in(attn_stage_get(ATTN_STAGE_MASK), &c);
        if (c.softcap != (strstr(ms, "capped") != NULL)) fail_msg("softcap %d: '%s'", c.softcap, ms);
        if ((c.alibi && !c.softcap) != (strstr(ms, "bias") != NULL)) fail_msg("alibi %d: '%s'", c.alibi, ms);
        if (c.alibi != (strstr(cap, "bias") != NULL)) fail_msg("alibi %d: '%s'", c.alibi, cap);
        if (c.sink != (strstr(w, "sink") != NULL) || c.sink != (strstr(wd, "sink") != NULL))
            fail_msg("sink %d: '%s' | '%s'", c.sink, w, wd);
        if ((c.keep_first > 0) != (strstr(mask, "kept first") != NULL)) fail_msg("keep_first %d: '%s'", c.keep_first, mask);
    }
}

/* The angle pair (a, b) of row i turned by, read off the trace's numbers:
 * atan2 of the rotated pair minus atan2 of the pair before RoPE (q_norm or
 * k_norm when the model normalises, else the heads), and the length the
 * rotation multiplied it by. False when the pair is too short to tell. */
static bool turned(const attn_trace *tr, int layer, bool q, int hh, int i, int a, int b, double *ang, double *gain)
{
    const attn_tensor *y = attn_trace_stage(tr, layer, q ? ATTN_STAGE_Q_ROPE : ATTN_STAGE_K_ROPE);
    const attn_tensor *x = attn_trace_stage(tr, layer, q ? ATTN_STAGE_Q_NORM : ATTN_STAGE_K_NORM);
    if (!x) x = attn_trace_stage(tr, layer, q ? ATTN_STAGE_Q_HEADS : ATTN_STAGE_K_HEADS);
    size_t row = ((size_t)hh * y->shape[2] + i) * y->shape[3]; /* batch row 0 */
    const float *xr = x->data + row, *yr = y->data + row;
    double xl = hypot(xr[a], xr[b]);
    if (xl < 1e-3) return false;
    *ang = atan2(yr[b], yr[a]) - atan2(xr[b], xr[a]);
    *gain = hypot(yr[a], yr[b]) / xl;
    return true;
}

/* Every cell of layer's q_rope and k_rope says the angle its pair turned by
 * (within 1e-4, modulo 2π) and, with YaRN, the factor A it grew by; each
 * sentence contains want. Returns how many cells were checked. */
static int check_rope_angles(const attn_trace *tr, int layer, const char *want)
{
    int checked = 0;
    for (int q = 0; q < 2; q++) {
        const attn_tensor *t = attn_trace_stage(tr, layer, q ? ATTN_STAGE_Q_ROPE : ATTN_STAGE_K_ROPE);
        assert_non_null(t);
        for (int hh = 0; hh < t->shape[1]; hh++)
            for (int i = 0; i < t->shape[2]; i++)
                for (int j = 0; j < t->shape[3]; j++) {
                    char buf[512];
                    attn_explain_cell c = {tr, t, 0, q ? hh : hh * tr->dims.h / tr->dims.g, i, j, NULL, NULL};
                    attn_explain(&c, buf, sizeof buf);
                    if (!strstr(buf, want)) fail_msg("'%s' lacks '%s'", buf, want);
                    int a, b;
                    const char *p = strstr(buf, "pair ("), *r = strstr(buf, " rad");
                    assert_true(p && r && sscanf(p, "pair (%d, %d)", &a, &b) == 2);
                    while (r > buf && r[-1] != ' ') r--;
                    double said = atof(r), ang, gain, A = 1;
                    const char *f = strstr(buf, "A = ");
                    if (f) A = atof(f + 4);
                    if (!turned(tr, layer, q, hh, i, a, b, &ang, &gain)) continue;
                    double off = remainder(said - ang, 6.283185307179586);
                    if (fabs(off) > 1e-4) fail_msg("'%s': the pair turned by %.6f rad (mod 2π)", buf, ang);
                    if (fabs(gain - A) > 1e-3 * A) fail_msg("'%s': the pair grew by %.6f", buf, gain);
                    checked++;
                }
    }
    return checked;
}

/* A trace of the model in dir, run and then saved and loaded (the arch comes back from model_config) */
static void run_model(const char *dir, attn_trace *tr, attn_trace *back)
{
    char path[400];
    attn_error err;
    run((const char *const[]){"model", dir, "text", "the cat sat on the mat . a dog ran", NULL}, tr);
    snprintf(path, sizeof path, "%s/trace.safetensors", dir);
    if (attn_trace_save(tr, path, &err) || attn_trace_load(path, back, &err)) fail_msg("%s", err.msg);
}

/* q_rope and k_rope of a model with rope_scaling: the sentence gives ω_m as
 * the engine scaled it, and YaRN's attention factor A */
static void test_rope_explains_the_scaled_angle(void **state)
{
    (void)state;
    static const char *const SCALING[] = {
        "{\"rope_type\":\"yarn\",\"factor\":4.0,\"original_max_position_embeddings\":4}",
        "{\"rope_type\":\"llama3\",\"factor\":4.0,\"low_freq_factor\":1.0,\"high_freq_factor\":2.0,"
        "\"original_max_position_embeddings\":8}",
    };
    static const char *const WANT[] = {"scaled by rope_scaling yarn", "scaled by rope_scaling llama3"};
    for (int s = 0; s < 2; s++) {
        char dir[300], cfg[1024];
        snprintf(dir, sizeof dir, "%s/scaled%d", ROOT, s);
        make_model(dir, 1, 2, 1, true, NULL, NULL); /* head dim 4: pairs 0 and 1 */
        snprintf(cfg, sizeof cfg,
                 "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":%d,\"num_hidden_layers\":1,"
                 "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"intermediate_size\":%d,"
                 "\"rms_norm_eps\":1e-5,\"rope_theta\":100.0,\"vocab_size\":%d,\"max_position_embeddings\":64,"
                 "\"tie_word_embeddings\":true,\"bos_token_id\":1,\"eos_token_id\":2,\"rope_scaling\":%s}",
                 D, F, V, SCALING[s]);
        write_text(dir, "config.json", cfg);
        attn_trace tr, back;
        run_model(dir, &tr, &back);
        assert_true(check_rope_angles(&tr, 0, WANT[s]) > 20);
        assert_true(check_rope_angles(&back, 0, WANT[s]) > 20);
        if (s == 0) assert_true(check_rope_angles(&tr, 0, "attention factor A = 1.139"));
        attn_trace_free(&tr);
        attn_trace_free(&back);
    }
}

/* Gemma 3: a local layer turns with its own base (rope_local_base_freq 10),
 * the global one with rope_theta (100), unscaled */
static void test_rope_explains_the_local_base(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/gemma3", ROOT);
    make_gemma(dir, true, 3, 2, 1, 3, 32); /* layers 0, 1 local, 2 global */
    attn_trace tr, back;
    run_model(dir, &tr, &back);
    for (int k = 0; k < 2; k++) {
        const attn_trace *t = k ? &back : &tr;
        assert_true(check_rope_angles(t, 0, "θ = 10: this local layer's own base") > 20);
        assert_true(check_rope_angles(t, 1, "θ = 10: this local layer's own base") > 20);
        char buf[512];
        attn_explain_cell c = {t, attn_trace_stage(t, 2, ATTN_STAGE_Q_ROPE), 0, 0, 3, 1, NULL, NULL};
        assert_non_null(strstr(attn_explain(&c, buf, sizeof buf), "pair (1, 3) of q_heads rotated by 3·θ^(−2/4)"));
        assert_null(strstr(buf, "local"));
    }
    attn_trace_free(&tr);
    attn_trace_free(&back);
}

int main(void)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(ROOT, sizeof ROOT, "%s/attnlab-stages-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(ROOT)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_are_indexed_by_id),
        cmocka_unit_test(test_roles_and_views),
        cmocka_unit_test(test_presence_rules_match_a_run),
        cmocka_unit_test(test_every_stage_explains_more_than_its_value),
        cmocka_unit_test(test_explanations_use_the_numbers_and_translate),
        cmocka_unit_test(test_sliding_window_explains_the_band),
        cmocka_unit_test(test_router_explains_the_choice),
        cmocka_unit_test(test_formulas_follow_the_settings),
        cmocka_unit_test(test_formulas_follow_the_score_settings),
        cmocka_unit_test(test_rope_explains_the_scaled_angle),
        cmocka_unit_test(test_rope_explains_the_local_base),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
