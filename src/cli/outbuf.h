/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A task's output, held until parkpool run prints it whole: bytes exactly
 * as the task wrote them, in memory while all tasks together hold less
 * than a budget, then in a temporary file of the task's own. So a task
 * that writes without end (exec.sh yes) costs disk, not memory, and
 * output is never dropped or reordered.
 */
#ifndef PP_CLI_OUTBUF_H
#define PP_CLI_OUTBUF_H

#include <apr_file_io.h>
#include <apr_pools.h>

#include <stdatomic.h>
#include <stdio.h>

/** The memory all the buffers of a run may hold together. */
typedef struct cli_outbudget {
    atomic_size_t held;
    apr_size_t    limit;
} cli_outbudget;

typedef struct cli_outchunk cli_outchunk;

typedef struct cli_outbuf {
    cli_outbudget *budget;
    apr_pool_t    *p;          /* the task's pool: chunks and the file */
    cli_outchunk  *head, *tail;
    apr_size_t     held;       /* of budget->held, this buffer's share */
    apr_size_t     bytes;      /* all of it, memory and file */
    apr_file_t    *spill;      /* NULL until the budget is spent */
    cli_outchunk  *before;     /* the last chunk before the file's bytes */
    int            spill_full; /* a write to the file failed: memory again */
} cli_outbuf;

/** An empty buffer whose memory comes from p and counts against budget. */
void cli_outbuf_init(cli_outbuf *b, cli_outbudget *budget, apr_pool_t *p);

/** Append len bytes. Over the budget they go to a temporary file; when
 *  none can be made they stay in memory (nothing is dropped). */
void cli_outbuf_add(cli_outbuf *b, const char *data, apr_size_t len);

/** A reader of the buffer's pieces: APR_SUCCESS to go on. */
typedef apr_status_t (*cli_outbuf_fn)(const char *data, apr_size_t len, void *baton);

/** Hand every byte to fn, in order, in pieces of any size: APR_SUCCESS,
 *  fn's first failure, or the status of reading the file back. */
apr_status_t cli_outbuf_each(cli_outbuf *b, cli_outbuf_fn fn, void *baton);

/** Write everything to f, in order: APR_SUCCESS, or the status of the
 *  failed write (errno is set) or of reading the file back. */
apr_status_t cli_outbuf_print(cli_outbuf *b, FILE *f);

/** In a crash (async-signal-safe): write the bytes held in memory to fd
 *  with write(2); 1 when that was all of them, 0 when some are in the file. */
int cli_outbuf_salvage(const cli_outbuf *b, int fd);

/** Give the memory back to the budget (the pool frees it). */
void cli_outbuf_release(cli_outbuf *b);

#endif
