/* SPDX-License-Identifier: Apache-2.0 */
#include "qaddr.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include <stdlib.h>
#include <string.h>

apr_status_t pp__queue_addr(const char *url, const char **host, int *port,
                            const char **stream, char *why, apr_size_t whylen, apr_pool_t *p)
{
    const char *rest, *slash, *colon;
    char *end;
    long n;

    if (!url || strncmp(url, "redis://", 8) != 0) {
        apr_snprintf(why, whylen, "'%s' is not a queue address (redis://HOST[:PORT]/STREAM)",
                     url ? url : "");
        return APR_EINVAL;
    }
    rest = url + 8;
    slash = strchr(rest, '/');
    if (!slash || slash == rest || !slash[1] || strchr(slash + 1, '/')) {
        apr_snprintf(why, whylen, "'%s': a queue address is redis://HOST[:PORT]/STREAM", url);
        return APR_EINVAL;
    }
    colon = memchr(rest, ':', (apr_size_t)(slash - rest));
    *port = 6379;
    if (colon) {
        n = strtol(colon + 1, &end, 10);
        if (!apr_isdigit(colon[1]) || end != slash || n < 1 || n > 65535 || colon == rest) {
            apr_snprintf(why, whylen, "'%s': the port is a number from 1 to 65535", url);
            return APR_EINVAL;
        }
        *port = (int)n;
    }
    *host = apr_pstrndup(p, rest, (apr_size_t)((colon ? colon : slash) - rest));
    *stream = apr_pstrdup(p, slash + 1);
    return APR_SUCCESS;
}
