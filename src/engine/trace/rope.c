/* rope.c — each RoPE pair's frequency, from the base θ and a model's
 * rope_scaling (arch.h): what the rotation (attention/ops.c, attn_op_rope)
 * turns by, and what the hover text of q_rope and k_rope says (explain.c). */
#include "rope.h"

#include <math.h>
#include <stddef.h>

/* YaRN ("Yet another RoPE extensioN", Peng et al. 2023), as transformers'
 * _compute_yarn_parameters computes it. Over the original context L, pair m
 * turns L·ω_m / 2π times. Pairs that turn many times (fast, ω large) carry
 * local order the model saw in every position it was trained on: they keep
 * ω (extrapolation). Pairs that turn less than once over L (slow) only ever
 * saw part of a turn: beyond L they would reach angles never seen, so they
 * are slowed by the factor, ω / factor (interpolation: positions squeezed
 * back into the trained range). Inverting turns = L·θ^(−2m/k) / 2π for m
 * gives the pair that turns exactly r times:
 *     m(r) = k · ln(L / (2π r)) / (2 ln θ)
 * lo = m(beta_fast), hi = m(beta_slow) (floored and ceiled unless truncate is
 * false), held to 0 ≤ lo and hi ≤ k − 1; with the ramp
 *     ramp_m = clamp((m − lo) / (hi − lo), 0, 1)
 *     ω'_m   = ω_m / factor · ramp_m + ω_m · (1 − ramp_m)
 * Interpolated, attention over a long context grows flatter (its entropy
 * rises); YaRN sharpens it back with a softmax temperature: cos and sin are
 * multiplied by the attention factor A, so a rotated q·k by A², with
 * A = 0.1·ln(factor) + 1 (the paper's √(1/t)), or mscale / mscale_all_dim's
 * ratio of two such (DeepSeek), or the config's attention_factor. */
static void yarn_freqs(const attn_rope_scaling *sc, double theta, int k, double *omega)
{
    const double two_pi = 6.283185307179586, L = sc->original_max_pos;
    double lo = k * log(L / (sc->beta_fast * two_pi)) / (2 * log(theta));
    double hi = k * log(L / (sc->beta_slow * two_pi)) / (2 * log(theta));
    if (sc->truncate) lo = floor(lo), hi = ceil(hi);
    lo = fmax(lo, 0.0);
    hi = fmin(hi, (double)(k - 1));
    if (lo == hi) hi += 0.001; /* a ramp of no width would divide by 0 */
    for (int m = 0; m < k / 2; m++) {
        double w = pow(theta, -2.0 * m / k), ramp = fmin(fmax((m - lo) / (hi - lo), 0.0), 1.0);
        omega[m] = w / sc->factor * ramp + w * (1.0 - ramp);
    }
}

double attn_rope_freqs(double theta, const attn_rope_scaling *scaling, int k, double *omega)
{
    const attn_rope_scaling *sc = scaling && scaling->factor > 0 ? scaling : NULL;
    if (sc && sc->yarn) {
        yarn_freqs(sc, theta, k, omega);
        return sc->attention > 0 ? sc->attention : 1.0;
    }
    for (int m = 0; m < k / 2; m++) {
        double w = pow(theta, -2.0 * m / k);
        if (sc) { /* Llama 3: keep the fast pairs, slow the slow ones, blend between */
            double L = sc->original_max_pos, lambda = 6.283185307179586 / w; /* 2π / ω */
            if (lambda > L / sc->low_freq_factor) {
                w /= sc->factor;
            } else if (lambda >= L / sc->high_freq_factor) {
                double a = (L / lambda - sc->low_freq_factor) / (sc->high_freq_factor - sc->low_freq_factor);
                w = (1.0 - a) * w / sc->factor + a * w;
            }
        }
        if (scaling && scaling->linear > 0) w /= scaling->linear; /* linear: positions / factor */
        omega[m] = w;
    }
    return 1.0;
}
