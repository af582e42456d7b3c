/* SPDX-License-Identifier: Apache-2.0 */
#include "capture.h"

#include <stdlib.h>
#include <string.h>

void svc_capture_add(svc_capture_t *c, const char *line)
{
    apr_size_t n = strlen(line) + 1, i;

    if (c->truncated)
        return;
    if (c->len + n > SVC_CAPTURE_MAX) {
        c->truncated = 1;
        return;
    }
    if (c->len + n > c->cap) {
        apr_size_t cap = c->cap ? c->cap : 256;
        char *grown;
        while (cap < c->len + n)
            cap *= 2;
        if (!(grown = realloc(c->buf, cap))) {
            c->truncated = 1;
            return;
        }
        c->buf = grown;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, line, n);
    for (i = c->len; i < c->len + n; i++)
        if (c->buf[i] == '\n')
            c->buf[i] = '\0';
    c->len += n;
}
