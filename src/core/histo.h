/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Latency histograms for cfg.timing: one per worker and measure, written
 * by that worker alone, summed when the stats are read. Log-linear, as
 * HdrHistogram's: 16 equal steps per power of two, so a percentile read
 * back is high by at most 1/16 of the value, over 0 .. 2^36 us (19
 * hours; longer counts as that). Not installed.
 */
#ifndef PP_HISTO_H
#define PP_HISTO_H

#include <apr.h>
#include <stdatomic.h>

#define PP__HISTO_SUB_BITS 4u                     /* 16 steps per power of 2 */
#define PP__HISTO_MAX_BITS 36u
#define PP__HISTO_BUCKETS  ((PP__HISTO_MAX_BITS - PP__HISTO_SUB_BITS + 1) << PP__HISTO_SUB_BITS)

typedef struct pp__histo_t {
    /* One writer (the worker); relaxed, as a reader only needs a recent
     * view of each count, not one consistent with the others. */
    _Atomic apr_uint64_t count[PP__HISTO_BUCKETS];
    _Atomic apr_uint64_t max;
} pp__histo_t;

/** Count one value (microseconds; negative counts as 0). Writer only. */
void pp__histo_add(pp__histo_t *h, apr_int64_t us);

/** Add h's counts into sum[PP__HISTO_BUCKETS] and its max into *max. */
void pp__histo_sum(const pp__histo_t *h, apr_uint64_t *sum, apr_uint64_t *max);

/** The p-th percentile (0 < p <= 100) of summed counts: the upper end of
 *  the bucket that holds it, never above max; 0 when nothing was counted. */
apr_uint64_t pp__histo_percentile(const apr_uint64_t *sum, apr_uint64_t max, unsigned p);

#endif
