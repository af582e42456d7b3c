/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The input of parkpool run, split into records: lines (LF, or CR LF) or,
 * with -0, NUL-terminated records. Each record is read whole, whatever its
 * length up to CLI_RECORD_MAX, with reads that return what has arrived (a
 * slow producer's first line runs before its second is written).
 */
#ifndef PP_CLI_RECORDS_H
#define PP_CLI_RECORDS_H

#include <apr_pools.h>

#include <stddef.h>

/** Longest record accepted (parkpool(1) says so); longer is an input error. */
#define CLI_RECORD_MAX ((size_t)64 << 20)

/** What cli_records_next() found. */
typedef enum {
    CLI_REC_OK,        /**< a record */
    CLI_REC_END,       /**< the end of the input, or read() was interrupted */
    CLI_REC_ERROR,     /**< a read failed: errno says why */
    CLI_REC_TOO_LONG,  /**< a record passed CLI_RECORD_MAX bytes (the input stops) */
    CLI_REC_NUL        /**< a line held a NUL byte (line mode; the line is skipped) */
} cli_rec_result;

typedef struct cli_records cli_records;

/**
 * A reader of fd's records, ended by sep ('\n' or '\0'). It reads with
 * read(2), stops at CLI_REC_END when a read fails with EINTR and *stop is
 * non-zero (Ctrl-C), and retries it otherwise. fd stays the caller's.
 */
apr_status_t cli_records_open(cli_records **r, int fd, int sep, const volatile unsigned *stop,
                              apr_pool_t *p);

/**
 * The next record, its terminator removed (and a CR before a LF, in line
 * mode), with a NUL after it: rec[len] == '\0'. It stays valid until the
 * next call. A last record without a terminator counts.
 */
cli_rec_result cli_records_next(cli_records *r, char **rec, size_t *len);

/** Records returned so far (the number of the one just returned). */
apr_uint64_t cli_records_count(const cli_records *r);

/** Release the buffer (also done by the pool's cleanup). */
void cli_records_close(cli_records *r);

#endif
