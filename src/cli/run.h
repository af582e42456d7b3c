/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool run's pieces (private to src/cli): what the command line asked
 * for (run_options.c), a task and the run's state (run.c), and how they
 * are reported (run_report.c).
 */
#ifndef PP_CLI_RUN_H
#define PP_CLI_RUN_H

#include "cli.h"
#include "outbuf.h"

#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <stdatomic.h>
#include <stdio.h>

#define WINDOW 4096    /* -k: tasks that may finish ahead of the oldest */
#define MAX_JOBS 4096  /* -j */
#define TICK ((apr_interval_time_t)50000)    /* us: the ticker's period */
#define FLUSH_EVERY TICK    /* stdout not a terminal: its buffer goes out this often */
#define MAX_REPORTED 20    /* --check: bad lines named before "and N more" */
#define OUTPUT_BUDGET ((apr_size_t)4 << 20)    /* output held in memory, all tasks */

/* What the command line asked for. */
typedef struct run_opts {
    apr_array_header_t *dirs;        /* -P, in order */
    const char         *file;        /* -f FILE, "-" for stdin, or NULL */
    const char         *type;        /* --type: records are arguments only */
    const char         *joblog;      /* --joblog FILE */
    long                jobs;        /* -j, 0: one per CPU */
    int                 keep_order, progress, json, quiet, check, sep, dry_run, verbose;
    int                 retries;     /* --retries: runs after a failed one */
    int                 halt_now;    /* --halt now,... (else soon) */
    long                halt_fail;   /* --halt ...,fail=N; 0: never */
    apr_interval_time_t timeout;     /* --timeout, per task; 0: none */
    const char *const  *words;       /* [TYPE] ARG... when no -f */
    int                 nwords;
} run_opts;

typedef struct run_state run_state;

typedef struct cli_task cli_task;

struct cli_task {
    run_state            *st;
    const pp_task_type_t *type;
    void                 *arg;
    apr_pool_t           *p;       /* argument, text, output; gone when printed */
    apr_uint64_t          index;
    const char           *text;    /* "TYPE ARG", escaped, for messages */
    const char           *raw;     /* ARG as given, rawlen bytes */
    apr_size_t            rawlen;
    cli_outbuf            out;
    apr_status_t          status;
    int                   ran, attempts, timed_out;
    apr_time_t            started, ended;    /* when timing is on */
    pp_group_t           *own;     /* --timeout: a group of its own, to cancel it */
    cli_task             *prev, *next;    /* --timeout: the running list */
};

struct run_state {
    pp_pool_t          *pool;
    pp_group_t         *group;
    apr_pool_t         *task_root;

    apr_thread_mutex_t *lock;        /* stdout, stderr and everything below */
    apr_thread_cond_t  *window;      /* -k: the reader waits for room */
    int                 keep_order, reader_waits;
    cli_task           *ring[WINDOW];
    apr_uint64_t        next_print;
    apr_uint64_t        submitted, done, failed, cancelled;
    int                 progress, progress_shown, input_done;
    int                 write_errno;    /* the first failed write to stdout */
    cli_outbudget       budget;         /* of the tasks' output buffers */
    apr_time_t          start;
    volatile apr_uint32_t finished;  /* stops the progress and timeout threads */

    const run_opts     *o;
    int                 timing;         /* --json, --joblog, --timeout: read the clock */
    FILE               *joblog;
    cli_task           *running;        /* --timeout: tasks running, oldest last */
    volatile apr_uint32_t halting;      /* --halt reached: start nothing more */
    int                 stdout_tty, unflushed;
    int                 muted;          /* --check: bad lines past MAX_REPORTED */
    apr_time_t          flushed;        /* when stdout's buffer last went out */
    apr_thread_t       *ticker;         /* flush, progress bar, --timeout */
    /* What each worker runs, for the crash report (set and read without
     * the lock: a crashing process cannot wait for one). */
    _Atomic(cli_task *) slot[MAX_JOBS];
};

/** Parse run's command line into o: -1 to go on, else the exit status
 *  (after printing the help, or saying what is wrong). */
int run_parse_options(run_opts *o, int argc, const char *const *argv, apr_pool_t *p);

/** text as a terminal can show it: control bytes as C escapes. */
const char *run_escaped(const char *text, apr_size_t len, apr_pool_t *p);

/** The progress bar, drawn or cleared; with st->lock held. */
void run_draw_progress(run_state *st);
void run_clear_progress(run_state *st);

/** A finished task as --json's object, or as --joblog's line. */
apr_status_t run_print_json(const cli_task *t);
void run_print_joblog(FILE *f, const cli_task *t);

/** The summary: a line on stderr, or --json's last object on stdout. */
void run_print_summary(run_state *st, int json, int rc, int interrupted);

/** In a crash (async-signal-safe): the running tasks, -k's held results,
 *  the counts; st may be NULL. */
void run_crash_report(run_state *st, const char *what);

#endif
