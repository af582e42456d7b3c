/* SPDX-License-Identifier: Apache-2.0 */
#include "connect.h"

#include <apr_strings.h>

redisContext *pp__redis_connect(const char *host, int port, char *why, apr_size_t whylen)
{
    struct timeval tv = { 2, 0 };
    redisContext *c = redisConnectWithTimeout(host, port, tv);

    if (!c || c->err) {
        apr_snprintf(why, whylen, "%s", c ? c->errstr : "out of memory");
        if (c)
            redisFree(c);
        return NULL;
    }
    tv.tv_sec = 10;
    redisSetTimeout(c, tv);
    return c;
}
