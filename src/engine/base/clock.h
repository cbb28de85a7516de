/* clock.h — timing for the benchmarks: a monotonic clock and medians. */
#ifndef ATTN_CLOCK_H
#define ATTN_CLOCK_H

/* Milliseconds on a monotonic clock (differences only). */
double attn_clock_ms(void);

/* Median of v[0..n), n > 0. Sorts v in place, so v[0] and v[n-1] are then
 * the minimum and maximum. */
double attn_median(double *v, int n);

#endif
