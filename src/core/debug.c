/* SPDX-License-Identifier: Apache-2.0 */
/* The failure half of debug.h's assertions. */
#include "config.h"
#include "debug.h"

#ifdef PP_DEBUG
#include <stdio.h>
#include <stdlib.h>

void pp__assert_fail(const char *what, const char *file, int line)
{
    /* The library never writes to stdio, except to say why it is about to
     * abort in a debug build. */
    fprintf(stderr, "parkpool: %s:%d: assertion failed: %s\n", file, line, what);
    abort();
}
#endif
