/* stage_note.c — a formula's numbers for the head shown (stage_note.h). */
#include "stage_note.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "i18n.h"
#include "view.h"

/* The slope m_h of head h read off the bias itself: −bias / |i − j| at the
 * first cell off the diagonal of the head's first query row (its position P). */
static bool alibi_slope(const app_state *app, const attn_tensor *t, int head, double *m)
{
    app_view_slice v;
    if (app_view_make_of(&app->trace, t, app->view.batch, head, &v) || v.slice.rows < 1) return false;
    int P = app->trace.dims.P;
    for (int j = 0; j < v.slice.cols; j++) {
        int dist = abs(P - j);
        if (dist > 0) {
            *m = -app_slice_at(&v.slice, 0, j) / dist;
            return isfinite(*m);
        }
    }
    return false;
}

bool draw_stage_note(const app_state *app, const attn_tensor *t, char *buf, size_t size)
{
    const attn_config *c = &app->trace.cfg;
    int h = app->view.head, n = app->trace.dims.h;
    double m;
    buf[0] = '\0';
    switch (attn_tensor_stage(t)) {
    case ATTN_STAGE_BIAS:
        if (!alibi_slope(app, t, h, &m)) return false;
        if (fabs(m - pow(2.0, -8.0 * (h + 1) / n)) <= 1e-5 * m) /* n a power of two: m_h = 2^(−8(h+1)/n) */
            /* TRANSLATORS: ALiBi's slope of the head shown, its exponent, and the head's bias with it */
            snprintf(buf, size, _("head %d of %d: m = 2^(−8·%d/%d) = %.4g, so bias = −%.4g·|i − j|; colours: this head's own"),
                     h, n, h + 1, n, m, m);
        else /* BLOOM's interleaved slopes for the heads past the largest power of two */
            /* TRANSLATORS: ALiBi's slope of the head shown and the head's bias with it */
            snprintf(buf, size, _("head %d of %d: m = %.4g, so bias = −%.4g·|i − j|; colours: this head's own"), h, n, m, m);
        return true;
    case ATTN_STAGE_CAPPED_SCORES:
        if (!(c->softcap > 0)) return false;
        /* TRANSLATORS: soft-capping with the cap C of the trace shown */
        snprintf(buf, size, _("C = %g: capped = %g·tanh(s/%g), always between −%g and %g; small scores stay nearly as they were"),
                 c->softcap, c->softcap, c->softcap, c->softcap, c->softcap);
        return true;
    case ATTN_STAGE_SINK_WEIGHT:
        if (app->trace.arch.sinks) { /* gpt-oss: each head's X_h is a weight of the model, not a setting */
            /* TRANSLATORS: a gpt-oss model's learned sinks; "sink" is the label of the weights' extra column */
            snprintf(buf, size, "%s", _("each head learned its own sink logit X (self_attn.sinks): its row is the "
                                        "column “sink” of that head's weights"));
            return true;
        }
        if (isinf(c->sink_logit)) return false;
        /* TRANSLATORS: the sink logit X of the trace shown; "sink" is the label of the weights' extra column */
        snprintf(buf, size, _("sink logit X = %g: each head's row is the column “sink” of its weights"),
                 (double)c->sink_logit);
        return true;
    case ATTN_STAGE_WEIGHTS:
    case ATTN_STAGE_WEIGHTS_DROPOUT:
        if (app->trace.arch.sinks) {
            /* TRANSLATORS: a gpt-oss model's learned sinks; "sink" is the sink column's label */
            snprintf(buf, size, "%s", _("each head learned its own sink logit X (self_attn.sinks): the column “sink” "
                                        "is not a key; with it each row sums to 1"));
            return true;
        }
        if (isinf(c->sink_logit) && c->keep_first > 0 && c->sliding_window > 0) {
            /* TRANSLATORS: StreamingLLM: N first keys kept beside a sliding window of W */
            snprintf(buf, size, _("kept first keys: %d, beside a window of %d: every query still sees them "
                                  "(the unhatched columns left of its window)"),
                     c->keep_first, c->sliding_window);
            return true;
        }
        if (isinf(c->sink_logit)) return false;
        /* TRANSLATORS: the sink logit X of the trace shown; "sink" is the sink column's label */
        snprintf(buf, size, _("sink logit X = %g: the column “sink” is not a key; with it each row sums to 1"),
                 (double)c->sink_logit);
        return true;
    default: return false;
    }
}
