/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool run: stream tasks into a bounded pool, print their result lines
 * whole (as they finish, or in input order with -k), a progress bar on a
 * terminal and a summary.
 *
 * Each task gets a pool of its own for its argument and its buffered
 * output lines, released when the task ends; with the bounded queue (and,
 * under -k, a bounded reorder window) memory stays flat however long the
 * input. The registry outlives the pool here, so plugin code stays mapped.
 *
 * Ctrl-C: the first stops the input (interrupting a blocked read) and
 * drains what is queued; the second cancels what is queued.
 */
#include "config.h"
#include "cli.h"
#include "cli_os.h"
#include "plugin/task_root.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 4096    /* -k: tasks that may finish ahead of the oldest */

typedef struct run_state run_state;

typedef struct cli_task {
    run_state            *st;
    const pp_task_type_t *type;
    void                 *arg;
    apr_pool_t           *p;       /* argument, text, lines; gone when printed */
    apr_uint64_t          index;
    const char           *text;    /* "TYPE ARG", for messages */
    apr_array_header_t   *lines;
    apr_status_t          status;
    int                   ran;
} cli_task;

struct run_state {
    pp_pool_t          *pool;
    pp_group_t         *group;
    apr_pool_t         *task_root;

    apr_thread_mutex_t *lock;        /* stdout, stderr and everything below */
    apr_thread_cond_t  *window;      /* -k: the reader waits for room */
    int                 keep_order;
    cli_task           *ring[WINDOW];
    apr_uint64_t        next_print;
    apr_uint64_t        submitted, done, failed, cancelled;
    int                 progress, progress_shown, input_done;
    apr_time_t          start;
    volatile apr_uint32_t finished;  /* stops the progress thread */
};

static _Thread_local cli_task *current;

/* ------------------------------------------------------------ Ctrl-C */

static volatile apr_uint32_t interrupts;
static pp_pool_t *volatile cancel_target;

/* Runs in the OS's interrupt thread (cli_os.h), not in a signal handler. */
static void on_interrupt(void)
{
    if (apr_atomic_inc32(&interrupts) == 0)
        cli_os_wake_reader();
    else if (cancel_target)
        pp_pool_shutdown(cancel_target, PP_CANCEL, 0);
}

/* ------------------------------------------------------------ output */

static void clear_progress(run_state *st)
{
    if (st->progress_shown) {
        fputs("\r\033[K", stderr);
        st->progress_shown = 0;
    }
}

static int input_error(run_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reports bad input between the progress bar's redraws; CLI_USAGE. */
static int input_error(run_state *st, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    apr_vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    apr_thread_mutex_lock(st->lock);
    clear_progress(st);
    cli_error("%s", line);
    apr_thread_mutex_unlock(st->lock);
    return CLI_USAGE;
}

static void draw_progress(run_state *st)
{
    apr_uint64_t finished = st->done + st->failed + st->cancelled;
    double secs = (double)(apr_time_now() - st->start) / APR_USEC_PER_SEC;
    double rate = secs > 0 ? finished / secs : 0;
    char bar[31];
    int i, fill = 0;

    if (st->input_done && st->submitted)
        fill = (int)(30 * finished / st->submitted);
    for (i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    if (st->input_done && st->submitted) {
        double left = rate > 0 ? (st->submitted - finished) / rate : 0;
        fprintf(stderr, "\r\033[K[%s] %" APR_UINT64_T_FMT "/%" APR_UINT64_T_FMT
                " %3d%% %.0f/s ETA %d:%02d", bar, finished, st->submitted,
                (int)(100 * finished / st->submitted), rate,
                (int)left / 60, (int)left % 60);
    }
    else {
        fprintf(stderr, "\r\033[K[%s] %" APR_UINT64_T_FMT "/? %.0f/s", bar, finished, rate);
    }
    fflush(stderr);
    st->progress_shown = 1;
}

static void *APR_THREAD_FUNC progress_main(apr_thread_t *thread, void *data)
{
    run_state *st = data;

    (void)thread;
    while (!apr_atomic_read32(&st->finished)) {
        apr_thread_mutex_lock(st->lock);
        draw_progress(st);
        apr_thread_mutex_unlock(st->lock);
        apr_sleep(apr_time_from_msec(200));
    }
    return NULL;
}

/* Called with st->lock held: print a finished task whole, then let go. */
static void print_task(run_state *st, cli_task *t)
{
    int i;

    clear_progress(st);
    for (i = 0; i < t->lines->nelts; i++) {
        fputs(APR_ARRAY_IDX(t->lines, i, const char *), stdout);
        fputc('\n', stdout);
    }
    if (t->lines->nelts)
        fflush(stdout);
    apr_pool_destroy(t->p);
}

/* ------------------------------------------------------------ tasks */

static void on_output(const char *line, const char *name, void *baton)
{
    cli_task *t = current;

    (void)name;
    (void)baton;
    /* Only the running task's worker touches its pool: no lock needed. */
    if (t)
        APR_ARRAY_PUSH(t->lines, const char *) = apr_pstrdup(t->p, line);
}

static apr_status_t task_run(void *arg, pp_task_ctx_t *ctx)
{
    cli_task *t = arg;

    current = t;    /* cleared in task_release, after the pool's report */
    t->ran = 1;
    t->status = t->type->run(t->arg, ctx);
    return t->status;
}

static void task_release(void *arg)
{
    cli_task *t = arg;
    run_state *st = t->st;
    char msg[256];

    current = NULL;
    if (t->type->release)
        t->type->release(t->arg);
    apr_thread_mutex_lock(st->lock);
    if (!t->ran) {
        st->cancelled++;
    }
    else if (t->status != APR_SUCCESS) {
        st->failed++;
        clear_progress(st);
        cli_error("%s: %s", t->text, pp_strerror(t->status, msg, sizeof(msg)));
    }
    else {
        st->done++;
    }
    if (!st->keep_order) {
        print_task(st, t);
    }
    else {
        st->ring[t->index % WINDOW] = t;
        while (st->ring[st->next_print % WINDOW]
               && st->ring[st->next_print % WINDOW]->index == st->next_print) {
            cli_task *next = st->ring[st->next_print % WINDOW];
            st->ring[st->next_print % WINDOW] = NULL;
            st->next_print++;
            print_task(st, next);
        }
        apr_thread_cond_signal(st->window);
    }
    apr_thread_mutex_unlock(st->lock);
}

/* Parse and queue one task. 0, or CLI_USAGE after saying why. */
static int submit(run_state *st, const pp_registry_t *reg, const char *type_name,
                  const char *arg, const char *where)
{
    const pp_task_type_t *type = pp_registry_find(reg, type_name);
    pp_task_t task;
    cli_task *t;
    apr_pool_t *p;
    apr_status_t rv;
    char msg[256];

    if (!type) {
        const pp_task_type_t *guess = pp_registry_suggest(reg, type_name);
        if (guess)
            return input_error(st, "%sunknown task type '%s' (did you mean '%s'?)", where,
                               type_name, guess->name);
        return input_error(st, "%sunknown task type '%s' (parkpool plugins lists them)", where,
                           type_name);
    }
    rv = apr_pool_create(&p, st->task_root);
    if (rv != APR_SUCCESS)
        return input_error(st, "%scannot queue %s: %s", where, type_name,
                           pp_strerror(rv, msg, sizeof(msg)));
    t = apr_pcalloc(p, sizeof(*t));
    t->st = st;
    t->type = type;
    t->p = p;
    t->text = apr_pstrcat(p, type_name, " ", arg, NULL);
    t->lines = apr_array_make(p, 1, sizeof(const char *));
    rv = type->parse ? type->parse(&t->arg, arg, p) : APR_SUCCESS;
    if (!type->parse)
        t->arg = apr_pstrdup(p, arg);
    if (rv != APR_SUCCESS) {
        input_error(st, "%sbad argument for %s: '%s' (%s)", where, type_name, arg,
                    pp_strerror(rv, msg, sizeof(msg)));
        apr_pool_destroy(p);
        return CLI_USAGE;
    }
    apr_thread_mutex_lock(st->lock);
    t->index = st->submitted;
    while (st->keep_order && t->index - st->next_print >= WINDOW)
        apr_thread_cond_wait(st->window, st->lock);
    st->submitted++;
    apr_thread_mutex_unlock(st->lock);

    task.fn = task_run;
    task.arg = t;
    task.release = task_release;
    task.name = type->name;
    rv = pp_submit_task(st->pool, &task, st->group, 0);
    if (rv != APR_SUCCESS)
        task_release(t);    /* refused after a cancel: counted as cancelled */
    return 0;
}

/* Reads one line of any length into *buf: 1, or 0 at the end of the input
 * or when interrupted, or -1 with errno when it cannot be read (a folder
 * opens on Linux and fails with EISDIR here; EIO; ENOMEM). */
static int read_line(FILE *f, char **buf, size_t *cap)
{
    size_t len = 0;

    for (;;) {
        if (len + 2 > *cap) {
            size_t want = *cap ? *cap * 2 : 4096;
            char *bigger = realloc(*buf, want);
            if (!bigger) {
                errno = ENOMEM;
                return -1;
            }
            *buf = bigger;
            *cap = want;
        }
        if (!fgets(*buf + len, (int)(*cap - len), f)) {
            if (apr_atomic_read32(&interrupts))
                return 0;
            if (ferror(f)) {
                if (errno == EINTR) {
                    clearerr(f);
                    continue;
                }
                return -1;
            }
            return len > 0;
        }
        len += strlen(*buf + len);
        if (len && (*buf)[len - 1] == '\n')
            return 1;
    }
}

static int read_job_file(run_state *st, const pp_registry_t *reg, FILE *f, const char *file)
{
    char *buf = NULL, *type, *arg, where[64];
    size_t cap = 0;
    apr_uint64_t lineno = 0;
    apr_status_t rv;
    int rc = 0, got = 0;

    while (rc == 0 && !apr_atomic_read32(&interrupts) && (got = read_line(f, &buf, &cap)) > 0) {
        lineno++;
        rv = pp_job_line_split(buf, &type, &arg);
        if (rv == APR_EOF)
            continue;
        apr_snprintf(where, sizeof(where), "line %" APR_UINT64_T_FMT ": ", lineno);
        if (rv != APR_SUCCESS) {
            rc = input_error(st, "%sexpected 'TYPE ARG', got '%s'", where, type);
            break;
        }
        rc = submit(st, reg, type, arg, where);
    }
    /* Not the end of the jobs: what was read still runs, but the exit
     * status says the input was cut short. */
    if (got < 0 && rc == 0)
        rc = input_error(st, "run: cannot read job file %s after line %" APR_UINT64_T_FMT
                         ": %s", file, lineno, strerror(errno));
    free(buf);
    return rc;
}

/* ------------------------------------------------------------ command */

static void print_summary(run_state *st, int json, int rc)
{
    double secs = (double)(apr_time_now() - st->start) / APR_USEC_PER_SEC;
    apr_uint64_t all = st->done + st->failed + st->cancelled;
    double rate = secs > 0 ? all / secs : 0;

    clear_progress(st);
    if (json)
        fprintf(stderr, "{\"submitted\":%" APR_UINT64_T_FMT ",\"done\":%" APR_UINT64_T_FMT
                ",\"failed\":%" APR_UINT64_T_FMT ",\"cancelled\":%" APR_UINT64_T_FMT
                ",\"wall_s\":%.3f,\"tasks_per_s\":%.1f,\"interrupted\":%s,\"exit\":%d}\n",
                st->submitted, st->done, st->failed, st->cancelled, secs, rate,
                apr_atomic_read32(&interrupts) ? "true" : "false", rc);
    else
        fprintf(stderr, "parkpool: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT
                " failed, %" APR_UINT64_T_FMT " cancelled in %.2f s (%.0f tasks/s)\n",
                st->done, st->failed, st->cancelled, secs, rate);
}

/* What the command line asked for. */
typedef struct run_opts {
    apr_array_header_t *dirs;        /* -P, in order */
    const char         *file;        /* -f FILE, "-" for stdin, or NULL */
    long                jobs;        /* -j, 0: one per CPU */
    int                 keep_order, progress, json;
    const char *const  *tasks;       /* TYPE ARG... when no -f */
    int                 ntasks;
} run_opts;

/* Parse the command line into o: -1 to go on, else the exit status. */
static int parse_options(run_opts *o, int argc, const char *const *argv, apr_pool_t *p)
{
    enum { OPT_PROGRESS = 256, OPT_NO_PROGRESS, OPT_JSON };
    static const apr_getopt_option_t opts[] = {
        { "plugin-dir", 'P', 1, "" }, { "jobs", 'j', 1, "" }, { "keep-order", 'k', 0, "" },
        { "file", 'f', 1, "" }, { "progress", OPT_PROGRESS, 0, "" },
        { "no-progress", OPT_NO_PROGRESS, 0, "" }, { "json", OPT_JSON, 0, "" },
        { "help", 'h', 0, "" }, { NULL, 0, 0, NULL }
    };
    const char *optval;
    apr_getopt_t *os;
    apr_status_t rv;
    char *end;
    int opt;

    memset(o, 0, sizeof(*o));
    o->dirs = apr_array_make(p, 4, sizeof(const char *));
    o->progress = cli_os_stderr_is_terminal();
    rv = apr_getopt_init(&os, p, argc, argv);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot read the options");
        return CLI_USAGE;
    }
    os->errfn = NULL;
    os->interleave = 1;    /* options may follow the tasks; "--" ends them */
    while ((rv = apr_getopt_long(os, opts, &opt, &optval)) == APR_SUCCESS) {
        switch (opt) {
        case 'P': APR_ARRAY_PUSH(o->dirs, const char *) = optval; break;
        case 'j':
            o->jobs = strtol(optval, &end, 10);
            if (end == optval || *end || o->jobs < 1 || o->jobs > 4096) {
                cli_error("run: -j takes a number of workers from 1 to 4096, not '%s'", optval);
                return CLI_USAGE;
            }
            break;
        case 'k': o->keep_order = 1; break;
        case 'f': o->file = optval; break;
        case OPT_PROGRESS: o->progress = 1; break;
        case OPT_NO_PROGRESS: o->progress = 0; break;
        case OPT_JSON: o->json = 1; break;
        default:
            printf("usage: parkpool run [-P DIR]... [-j N] [-k] [-f FILE|-] "
                   "[--progress|--no-progress] [--json] [TYPE ARG...]\n");
            return CLI_OK;
        }
    }
    if (rv != APR_EOF) {
        cli_error("run: bad option (see parkpool run --help)");
        return CLI_USAGE;
    }
    if (o->file ? os->ind < argc : os->ind + 1 >= argc) {
        cli_error(o->file ? "run: give tasks with -f or on the command line, not both"
                          : "run: no tasks: give TYPE ARG... or -f FILE");
        return CLI_USAGE;
    }
    /* os->argv: apr_getopt permuted its own copy of argv. */
    o->tasks = os->argv + os->ind;
    o->ntasks = argc - os->ind;
    return -1;
}

/* The job file, or NULL when the tasks are on the command line: 0, or the
 * exit status after saying why. */
static int open_input(FILE **in, const run_opts *o)
{
    *in = NULL;
    if (!o->file)
        return 0;
    *in = strcmp(o->file, "-") ? fopen(o->file, "r") : stdin;
    if (!*in) {
        cli_error("run: cannot read job file %s: %s", o->file, strerror(errno));
        return CLI_USAGE;
    }
    return 0;
}

/* Everything a run needs before the first task: the output lock, the -k
 * window, the task pools' root, the pool and its group, the progress bar. */
static apr_status_t start_run(run_state *st, apr_thread_t **progress_thread, const run_opts *o,
                              apr_pool_t *p)
{
    pp_config_t cfg;
    apr_status_t rv;

    *progress_thread = NULL;
    st->keep_order = o->keep_order;
    st->progress = o->progress;
    rv = apr_thread_mutex_create(&st->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&st->window, p);
    if (rv == APR_SUCCESS)
        rv = pp__task_root_create(&st->task_root, p);
    if (rv != APR_SUCCESS)
        return rv;
    pp_config_init(&cfg);
    cfg.threads = (apr_uint32_t)o->jobs;
    cfg.name_prefix = "parkpool";
    cfg.queue_capacity = 256;    /* streams: memory follows what is in flight */
    cfg.on_output = on_output;
    cfg.baton = st;
    rv = pp_pool_create(&st->pool, &cfg, p);
    if (rv == APR_SUCCESS)
        rv = pp_group_create(&st->group, p);
    if (rv != APR_SUCCESS)
        return rv;
    cancel_target = st->pool;
    st->start = apr_time_now();
    /* A run without its progress bar is still a run: go on without it. */
    if (o->progress
        && apr_thread_create(progress_thread, NULL, progress_main, st, p) != APR_SUCCESS) {
        *progress_thread = NULL;
        st->progress = 0;
    }
    return APR_SUCCESS;
}

/* Queue every task, from the job file or the command line; 0, or
 * CLI_USAGE when the input was bad. */
static int feed(run_state *st, const pp_registry_t *reg, FILE *in, const run_opts *o)
{
    int rc = 0, i;

    if (in) {
        rc = read_job_file(st, reg, in, in == stdin ? "(standard input)" : o->file);
        if (in != stdin)
            fclose(in);
    }
    else {
        for (i = 1; i < o->ntasks && rc == 0 && !apr_atomic_read32(&interrupts); i++)
            rc = submit(st, reg, o->tasks[0], o->tasks[i], "");
    }
    apr_thread_mutex_lock(st->lock);
    st->input_done = 1;
    apr_thread_mutex_unlock(st->lock);
    return rc;
}

/* Drain (a second Ctrl-C makes the watcher cancel instead), stop the
 * progress bar, print the summary; the exit status. */
static int finish_run(run_state *st, apr_thread_t *progress_thread, const run_opts *o, int rc)
{
    pp_group_wait(st->group, -1);
    pp_pool_shutdown(st->pool, apr_atomic_read32(&interrupts) > 1 ? PP_CANCEL : PP_DRAIN, -1);
    cancel_target = NULL;
    apr_atomic_set32(&st->finished, 1);
    if (progress_thread) {
        apr_status_t ignored;
        apr_thread_join(&ignored, progress_thread);
    }
    apr_thread_mutex_lock(st->lock);
    if (apr_atomic_read32(&interrupts))
        rc = CLI_INTERRUPTED;
    else if (rc == 0 && st->failed)
        rc = CLI_FAILED;
    print_summary(st, o->json, rc);
    apr_thread_mutex_unlock(st->lock);
    fflush(stdout);
    pp_pool_destroy(st->pool);
    return rc;
}

int cli_run(int argc, const char *const *argv, apr_pool_t *p)
{
    run_state *st = apr_pcalloc(p, sizeof(*st));
    apr_thread_t *progress_thread;
    pp_registry_t *reg;
    run_opts o;
    FILE *in;
    apr_status_t rv;
    char msg[256];
    int rc;

    if ((rc = parse_options(&o, argc, argv, p)) >= 0 || (rc = open_input(&in, &o)) != 0)
        return rc;
    rv = cli_load_plugins(&reg, o.dirs, argv[0], p);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot make the task registry: %s", pp_strerror(rv, msg, sizeof(msg)));
        return CLI_FAILED;
    }
    rv = cli_os_watch_interrupts(on_interrupt);
    if (rv != APR_SUCCESS)
        cli_error("run: Ctrl-C will stop the run at once (%s)", pp_strerror(rv, msg, sizeof(msg)));
    rv = start_run(st, &progress_thread, &o, p);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot start the pool: %s", pp_strerror(rv, msg, sizeof(msg)));
        return CLI_FAILED;
    }
    rc = feed(st, reg, in, &o);
    return finish_run(st, progress_thread, &o, rc);
}
