/* SPDX-License-Identifier: Apache-2.0 */
/* The timing histograms (src/core/histo.h): percentiles within 1/16. */
#include "config.h"
#include "testutil.h"
#include "core/histo.h"

#include <stdlib.h>

static apr_uint64_t sum[PP__HISTO_BUCKETS];

static apr_uint64_t pct(const pp__histo_t *h, unsigned p)
{
    apr_uint64_t max = 0;
    apr_uint32_t b;

    for (b = 0; b < PP__HISTO_BUCKETS; b++)
        sum[b] = 0;
    pp__histo_sum(h, sum, &max);
    return pp__histo_percentile(sum, max, p);
}

/* Read back high by at most 1/16, never low: 1 .. 100000 once each. */
static void test_percentiles(void)
{
    pp__histo_t *h = calloc(1, sizeof(*h));
    apr_uint64_t v, want;
    unsigned p;

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    T_EQ(pct(h, 50), 0);    /* nothing counted */
    for (v = 1; v <= 100000; v++)
        pp__histo_add(h, (apr_int64_t)v);
    for (p = 1; p <= 100; p++) {
        want = 1000 * p;
        CU_ASSERT(pct(h, p) >= want);
        CU_ASSERT(pct(h, p) <= want + want / 16);
    }
    T_EQ(pct(h, 100), 100000);    /* max is exact */
    free(h);
}

/* Small values are exact, negatives count as 0, huge ones in the last
 * bucket without overflow; sums of two histograms add up. */
static void test_edges(void)
{
    pp__histo_t *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    apr_uint64_t max = 0;
    apr_uint32_t i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (i = 0; i < 16; i++)
        pp__histo_add(a, i);
    T_EQ(pct(a, 50), 7);
    pp__histo_add(b, -5);
    T_EQ(pct(b, 100), 0);
    pp__histo_add(b, (apr_int64_t)1 << 50);
    T_EQ(pct(b, 100), (apr_uint64_t)1 << 50);
    for (i = 0; i < PP__HISTO_BUCKETS; i++)
        sum[i] = 0;
    pp__histo_sum(a, sum, &max);
    pp__histo_sum(b, sum, &max);
    T_EQ(max, (apr_uint64_t)1 << 50);
    T_EQ(pp__histo_percentile(sum, max, 50), 7);    /* 0 0 1 .. 15 2^50: the 9th is 7 */
    free(a);
    free(b);
}

void t_register_histo(void)
{
    CU_pSuite s = CU_add_suite("histo", NULL, NULL);

    CU_add_test(s, "percentiles within 1/16, never low", test_percentiles);
    CU_add_test(s, "small, negative and huge values; sums", test_edges);
}
