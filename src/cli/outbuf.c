/* SPDX-License-Identifier: Apache-2.0 */
/* A task's output until it is printed (outbuf.h). */
#include "config.h"
#include "outbuf.h"
#include "cli_os.h"

#include <errno.h>
#include <apr_strings.h>

#include <string.h>

#define FIRST_CHUNK 256
#define BIG_CHUNK   ((apr_size_t)64 << 10)

struct cli_outchunk {
    cli_outchunk *next;
    apr_size_t    len, cap;
    char          data[];
};

void cli_outbuf_init(cli_outbuf *b, cli_outbudget *budget, apr_pool_t *p)
{
    memset(b, 0, sizeof(*b));
    b->budget = budget;
    b->p = p;
}

/* The temporary file, made on first need: 0 when it cannot be. */
static int open_spill(cli_outbuf *b)
{
    const char *dir;
    char *path;

    if (b->spill)
        return 1;
    b->before = b->tail;
    if (apr_temp_dir_get(&dir, b->p) != APR_SUCCESS)
        return 0;
    path = apr_pstrcat(b->p, dir, "/parkpool-out-XXXXXX", NULL);
    /* Deleted on close (at once on POSIX: unlinked while open). */
    return apr_file_mktemp(&b->spill, path,
                           APR_FOPEN_CREATE | APR_FOPEN_READ | APR_FOPEN_WRITE | APR_FOPEN_EXCL
                           | APR_FOPEN_BINARY | APR_FOPEN_BUFFERED | APR_FOPEN_DELONCLOSE,
                           b->p) == APR_SUCCESS;
}

void cli_outbuf_add(cli_outbuf *b, const char *data, apr_size_t len)
{
    cli_outchunk *c = b->tail;
    apr_size_t room, cap;

    if (len == 0)
        return;
    b->bytes += len;
    /* Relaxed: the budget is a bound on memory, not a lock; a few bytes
     * over when tasks add at once is fine. */
    if (!b->spill_full
        && (b->spill || (atomic_load_explicit(&b->budget->held, memory_order_relaxed) + len
                         > b->budget->limit && open_spill(b)))) {
        apr_size_t n = len;
        if (apr_file_write_full(b->spill, data, len, &n) == APR_SUCCESS)
            return;
        /* A full disk: the rest stays in memory, printed after the file. */
        b->spill_full = 1;
        data += n;
        len -= n;
        if (len == 0)
            return;
    }
    room = c ? c->cap - c->len : 0;
    if (room >= len) {
        memcpy(c->data + c->len, data, len);
        c->len += len;
        return;
    }
    if (room) {
        memcpy(c->data + c->len, data, room);
        c->len += room;
        data += room;
        len -= room;
    }
    /* Chunks double up to BIG_CHUNK: one short line costs FIRST_CHUNK. */
    cap = c ? (c->cap * 2 > BIG_CHUNK ? BIG_CHUNK : c->cap * 2) : FIRST_CHUNK;
    if (cap < len)
        cap = len;
    c = apr_palloc(b->p, sizeof(*c) + cap);
    c->next = NULL;
    c->len = len;
    c->cap = cap;
    memcpy(c->data, data, len);
    if (b->tail)
        b->tail->next = c;
    else
        b->head = c;
    b->tail = c;
    b->held += sizeof(*c) + cap;
    atomic_fetch_add_explicit(&b->budget->held, sizeof(*c) + cap, memory_order_relaxed);
}

static apr_status_t each_chunk(cli_outchunk *c, const cli_outchunk *stop,
                               cli_outbuf_fn fn, void *baton)
{
    apr_status_t rv = APR_SUCCESS;

    for (; c != stop && rv == APR_SUCCESS; c = c->next)
        rv = fn(c->data, c->len, baton);
    return rv;
}

apr_status_t cli_outbuf_each(cli_outbuf *b, cli_outbuf_fn fn, void *baton)
{
    cli_outchunk *after = b->before ? b->before->next : b->head;
    apr_off_t start = 0;
    apr_status_t rv;
    char piece[16384];

    if (!b->spill)
        return each_chunk(b->head, NULL, fn, baton);
    /* Memory before the file, the file, memory after it (a full disk). */
    rv = each_chunk(b->head, after, fn, baton);
    if (rv == APR_SUCCESS)
        rv = apr_file_seek(b->spill, APR_SET, &start);
    while (rv == APR_SUCCESS) {
        apr_size_t n = sizeof(piece);
        rv = apr_file_read(b->spill, piece, &n);
        if (n && (rv == APR_SUCCESS || rv == APR_EOF)) {
            apr_status_t wrv = fn(piece, n, baton);
            if (wrv != APR_SUCCESS)
                return wrv;
        }
    }
    if (rv != APR_EOF)
        return rv;
    return each_chunk(after, NULL, fn, baton);
}

static apr_status_t write_piece(const char *data, apr_size_t len, void *baton)
{
    errno = 0;
    if (fwrite(data, 1, len, baton) != len)
        return APR_FROM_OS_ERROR(errno ? errno : EIO);
    return APR_SUCCESS;
}

apr_status_t cli_outbuf_print(cli_outbuf *b, FILE *f)
{
    return cli_outbuf_each(b, write_piece, f);
}

int cli_outbuf_salvage(const cli_outbuf *b, int fd)
{
    const cli_outchunk *c;

    for (c = b->head; c; c = c->next)
        cli_os_write(fd, c->data, c->len);
    return b->spill == NULL;
}

void cli_outbuf_release(cli_outbuf *b)
{
    atomic_fetch_sub_explicit(&b->budget->held, b->held, memory_order_relaxed);
    b->held = 0;
    if (b->spill) {
        apr_file_close(b->spill);
        b->spill = NULL;
    }
}
