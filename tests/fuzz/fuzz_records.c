/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the record reader of parkpool run (src/cli/records.c),
 * which splits standard input or a job file into lines or NUL-terminated
 * records. The input's first byte sets the size of each read (a pipe
 * gives what has arrived, so a record may arrive in pieces), its second
 * the mode; the rest is the stream. Each record must be the next bytes of
 * the stream, followed by its terminator (in line mode "\n" or "\r\n",
 * the CR dropped), and together they must account for every byte.
 */
#include "config.h"
#include "records.h"
#include "cli_os.h"

#include <apr_general.h>

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *stream;
static size_t stream_len, stream_at, piece;

/* The reader's only source: pieces of at most `piece` bytes. */
long cli_os_read(int fd, void *buf, size_t n)
{
    size_t give = stream_len - stream_at;

    (void)fd;
    if (give > n)
        give = n;
    if (give > piece)
        give = piece;
    memcpy(buf, stream + stream_at, give);
    stream_at += give;
    return (long)give;
}

static apr_pool_t *root;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (apr_initialize() != APR_SUCCESS || apr_pool_create(&root, NULL) != APR_SUCCESS)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    cli_records *r;
    char *rec;
    size_t len, at = 0;
    int sep;
    cli_rec_result got;

    if (size < 2)
        return 0;
    piece = (size_t)data[0] % 16 + 1;
    sep = data[1] & 1 ? '\n' : '\0';
    stream = data + 2;
    stream_len = size - 2;
    stream_at = 0;
    apr_pool_create(&p, root);
    if (cli_records_open(&r, 0, sep, NULL, p) != APR_SUCCESS)
        abort();
    while ((got = cli_records_next(r, &rec, &len)) == CLI_REC_OK || got == CLI_REC_NUL) {
        assert(rec[len] == '\0');
        assert(at + len <= stream_len && memcmp(stream + at, rec, len) == 0);
        assert(!memchr(rec, sep, len));
        assert((got == CLI_REC_NUL) == (sep == '\n' && memchr(rec, '\0', len) != NULL));
        at += len;
        if (sep == '\n' && at + 1 < stream_len && stream[at] == '\r' && stream[at + 1] == '\n')
            at++;    /* the CR of a CR LF */
        assert(at == stream_len || stream[at] == sep);
        if (at < stream_len)
            at++;
    }
    assert(got == CLI_REC_END);    /* no read fails, no record is too long here */
    assert(at == stream_len);
    cli_records_close(r);
    apr_pool_destroy(p);
    return 0;
}
