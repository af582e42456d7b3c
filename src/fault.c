#include "fault.h"

#include <apr_atomic.h>

static volatile apr_uint32_t countdown[PP__FAULT_POINTS];

void pp__fault_arm(int point, apr_uint32_t nth)
{
    apr_atomic_set32(&countdown[point], nth);
}

int pp__fault_hit(int point)
{
    apr_uint32_t n;

    do {
        n = apr_atomic_read32(&countdown[point]);
        if (n == 0)
            return 0;
    } while (apr_atomic_cas32(&countdown[point], n - 1, n) != n);
    return n == 1;
}
