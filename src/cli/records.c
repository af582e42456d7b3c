/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records from a file descriptor (records.h). One buffer, grown by doubling
 * up to CLI_RECORD_MAX and slid down as records are consumed, so a stream
 * of short lines costs one buffer and one scan of each byte.
 */
#include "config.h"
#include "records.h"
#include "cli_os.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_SIZE ((size_t)128 << 10)

struct cli_records {
    int                     fd, sep, eof;
    const volatile unsigned *stop;
    char                   *buf;
    size_t                  cap;
    size_t                  start;    /* the next record begins here */
    size_t                  scan;     /* bytes before it hold no terminator */
    size_t                  end;      /* bytes read */
    apr_uint64_t            count;
};

static apr_status_t free_buffer(void *data)
{
    cli_records *r = data;

    free(r->buf);
    r->buf = NULL;
    return APR_SUCCESS;
}

apr_status_t cli_records_open(cli_records **out, int fd, int sep, const volatile unsigned *stop,
                              apr_pool_t *p)
{
    cli_records *r = apr_pcalloc(p, sizeof(*r));

    /* malloc, not the pool: the buffer is resized, which a pool cannot do. */
    r->buf = malloc(FIRST_SIZE);
    if (!r->buf)
        return APR_ENOMEM;
    r->cap = FIRST_SIZE;
    r->fd = fd;
    r->sep = sep;
    r->stop = stop;
    apr_pool_cleanup_register(p, r, free_buffer, apr_pool_cleanup_null);
    *out = r;
    return APR_SUCCESS;
}

void cli_records_close(cli_records *r)
{
    free_buffer(r);
}

apr_uint64_t cli_records_count(const cli_records *r)
{
    return r->count;
}

/* The record [start, at) is whole: cut it out. */
static cli_rec_result take(cli_records *r, size_t at, char **rec, size_t *len)
{
    size_t n = at - r->start;
    char *s = r->buf + r->start;

    /* A CR goes only as part of a CR LF ending, not at the end of the input. */
    if (r->sep == '\n' && at < r->end && n && s[n - 1] == '\r')
        n--;
    r->start = r->scan = at < r->end ? at + 1 : at;
    r->count++;
    s[n] = '\0';
    *rec = s;
    *len = n;
    if (r->sep != '\0' && memchr(s, '\0', n))
        return CLI_REC_NUL;
    return CLI_REC_OK;
}

/* Room for one more read: slide the partial record down, or grow. */
static int make_room(cli_records *r)
{
    size_t want;
    char *bigger;

    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scan -= r->start;
        r->start = 0;
    }
    if (r->end + 1 < r->cap)    /* one byte stays free for the NUL */
        return 1;
    want = r->cap * 2 > CLI_RECORD_MAX + 2 ? CLI_RECORD_MAX + 2 : r->cap * 2;
    if (want <= r->cap)
        return 1;
    bigger = realloc(r->buf, want);
    if (!bigger) {
        errno = ENOMEM;
        return 0;
    }
    r->buf = bigger;
    r->cap = want;
    return 1;
}

cli_rec_result cli_records_next(cli_records *r, char **rec, size_t *len)
{
    for (;;) {
        char *hit = memchr(r->buf + r->scan, r->sep, r->end - r->scan);
        long n;

        if (hit)
            return take(r, (size_t)(hit - r->buf), rec, len);
        r->scan = r->end;
        if (r->end - r->start > CLI_RECORD_MAX)
            return CLI_REC_TOO_LONG;
        if (r->eof)
            return r->start < r->end ? take(r, r->end, rec, len) : CLI_REC_END;
        if (!make_room(r))
            return CLI_REC_ERROR;
        n = cli_os_read(r->fd, r->buf + r->end, r->cap - 1 - r->end);
        if (n < 0) {
            if (errno != EINTR)
                return CLI_REC_ERROR;
            if (r->stop && *r->stop)
                return CLI_REC_END;
            continue;
        }
        if (n == 0)
            r->eof = 1;
        r->end += (size_t)n;
    }
}
