/* SPDX-License-Identifier: Apache-2.0 */
/* The parkpool tool's pieces. */
#ifndef PP_CLI_H
#define PP_CLI_H

#include "parkpool/parkpool.h"
#include "parkpool/plugin.h"

#include <apr_getopt.h>
#include <apr_tables.h>

#include <stdio.h>

/* Exit statuses (documented in parkpool.1). */
#define CLI_OK          0
#define CLI_FAILED      1
#define CLI_USAGE       2
#define CLI_INTERRUPTED 130

/** Print "parkpool: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Load the plugins: each -P folder, then $PARKPOOL_PLUGIN_PATH, then the
 * build tree's plugins (when run from it) or else the installed folder.
 * Bad plugins are reported on stderr and skipped.
 */
apr_status_t cli_load_plugins(pp_registry_t **reg, apr_array_header_t *dirs,
                              const char *argv0, apr_pool_t *p);

/**
 * rel, taken from the folder of this program, when this program runs from
 * its build tree (libtool runs it as <build>/.libs/[lt-]parkpool) and rel
 * exists there; else NULL.
 */
const char *cli_build_tree_path(const char *argv0, const char *rel, apr_pool_t *p);

/** Print s as a JSON string (with quotes) on f. */
void cli_json_string(FILE *f, const char *s);

/** Print len bytes of any kind as a JSON string (with quotes) on f: valid
 *  UTF-8 as it is, other bytes as \u00XX (json.c says why). */
void cli_json_bytes(FILE *f, const char *data, apr_size_t len);

/** The inside of a JSON string written in pieces (a multi-byte character
 *  may be cut between two). */
typedef struct cli_json_text {
    FILE         *f;
    unsigned char pend[4];
    int           npend, need;
} cli_json_text;

void cli_json_text_init(cli_json_text *j, FILE *f);
void cli_json_text_put(cli_json_text *j, const char *data, apr_size_t len);
/** Write out what a sequence cut short at the end left pending. */
void cli_json_text_end(cli_json_text *j);

int cli_plugins(int argc, const char *const *argv, apr_pool_t *p);
int cli_run(int argc, const char *const *argv, apr_pool_t *p);
int cli_bench(int argc, const char *const *argv, apr_pool_t *p);
/* The producer of a Redis Streams queue and its statistics (submit.c,
 * qstats.c; submit_none.c when built without hiredis). */
int cli_submit(int argc, const char *const *argv, apr_pool_t *p);
int cli_queue_stats(int argc, const char *const *argv, apr_pool_t *p);

#endif
