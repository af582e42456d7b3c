/* SPDX-License-Identifier: Apache-2.0 */
/* parkpool built without hiredis: submit and queue-stats say how to get it. */
#include "cli.h"

static int without(const char *what)
{
    cli_error("%s: this parkpool was built without hiredis (Debian: apt-get install "
              "libhiredis-dev, then configure again)", what);
    return CLI_USAGE;
}

int cli_submit(int argc, const char *const *argv, apr_pool_t *p)
{
    (void)argc;
    (void)argv;
    (void)p;
    return without("submit");
}

int cli_queue_stats(int argc, const char *const *argv, apr_pool_t *p)
{
    (void)argc;
    (void)argv;
    (void)p;
    return without("queue-stats");
}
