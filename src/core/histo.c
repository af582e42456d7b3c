/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "histo.h"

#define SUB (1u << PP__HISTO_SUB_BITS)

/* Values below SUB have a bucket each; above, a value with its top bit at
 * position e falls in power-of-two row e - SUB_BITS + 1, column given by
 * the SUB_BITS bits below the top one. */
static apr_uint32_t bucket_of(apr_uint64_t v)
{
    unsigned e;

    if (v < SUB)
        return (apr_uint32_t)v;
    if (v >> PP__HISTO_MAX_BITS)
        return PP__HISTO_BUCKETS - 1;
    e = 63u - (unsigned)__builtin_clzll(v);
    return ((e - PP__HISTO_SUB_BITS + 1) << PP__HISTO_SUB_BITS)
           + (apr_uint32_t)((v >> (e - PP__HISTO_SUB_BITS)) & (SUB - 1));
}

/* The largest value that falls in bucket b. */
static apr_uint64_t bucket_top(apr_uint32_t b)
{
    apr_uint32_t row = b >> PP__HISTO_SUB_BITS, col = b & (SUB - 1);
    unsigned shift;

    if (row == 0)
        return b;
    shift = row - 1;
    return (((apr_uint64_t)(SUB + col + 1)) << shift) - 1;
}

void pp__histo_add(pp__histo_t *h, apr_int64_t us)
{
    apr_uint64_t v = us > 0 ? (apr_uint64_t)us : 0;
    _Atomic apr_uint64_t *c = &h->count[bucket_of(v)];

    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (v > atomic_load_explicit(&h->max, memory_order_relaxed))
        atomic_store_explicit(&h->max, v, memory_order_relaxed);
}

void pp__histo_sum(const pp__histo_t *h, apr_uint64_t *sum, apr_uint64_t *max)
{
    apr_uint64_t m = atomic_load_explicit(&h->max, memory_order_relaxed);
    apr_uint32_t b;

    for (b = 0; b < PP__HISTO_BUCKETS; b++)
        sum[b] += atomic_load_explicit(&h->count[b], memory_order_relaxed);
    if (m > *max)
        *max = m;
}

apr_uint64_t pp__histo_percentile(const apr_uint64_t *sum, apr_uint64_t max, unsigned p)
{
    apr_uint64_t total = 0, rank, seen = 0;
    apr_uint32_t b;

    for (b = 0; b < PP__HISTO_BUCKETS; b++)
        total += sum[b];
    if (total == 0)
        return 0;
    /* The smallest value with at least p% of the counts at or below it. */
    rank = (total * p + 99) / 100;
    if (rank == 0)
        rank = 1;
    for (b = 0; b < PP__HISTO_BUCKETS; b++) {
        seen += sum[b];
        /* The last bucket has no top: it holds everything longer. */
        if (seen >= rank)
            return b + 1 < PP__HISTO_BUCKETS && bucket_top(b) < max ? bucket_top(b) : max;
    }
    return max;
}
