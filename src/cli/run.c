/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool run: stream tasks into a bounded pool, print their result lines
 * whole (as they finish, or in input order with -k), a progress bar on a
 * terminal and a summary.
 *
 * Each task gets a pool of its own for its argument and its output
 * (outbuf.h: bytes as written, in memory up to a budget shared by all
 * tasks, then in a file), released when it is printed; with the bounded
 * queue (and, under -k, a bounded reorder window) memory stays flat however
 * long the input or the output. The registry outlives the pool here, so plugin code stays mapped.
 *
 * Nothing is lost without a word: a record the grammar refuses (a NUL in a
 * line, one longer than CLI_RECORD_MAX, an unknown type) is an input error
 * naming its line; a failed write to stdout stops the run and is reported
 * (a reader that went away ends it as SIGPIPE ends coreutils); Ctrl-C says
 * what each press does.
 */
#include "config.h"
#include "cli.h"
#include "cli_os.h"
#include "outbuf.h"
#include "records.h"
#include "plugin/task_root.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static _Thread_local cli_task *current;

/* ------------------------------------------------------------ stopping */

/* Ctrl-C presses, and whether the input must stop (Ctrl-C, or stdout is
 * gone); both read by the reader between records and when a read is
 * interrupted. */
static volatile apr_uint32_t interrupts, stop_input;
static volatile apr_uint32_t cancel_sent;
/* The run the interrupt thread and a crash act on: published with release
 * once the run is set up (the pool, the lock), read with acquire. */
static _Atomic(run_state *) interrupt_target;

static void print_summary(run_state *st, int json, int rc);
static int summary_json, summary_quiet;

/* Cancel what is queued and ask the running tasks to stop, once. Never
 * called with st->lock held: a cancel releases the dropped tasks, whose
 * release hook takes it. */
static void cancel_run(run_state *st)
{
    if (apr_atomic_cas32(&cancel_sent, 1, 0) == 0)
        pp_pool_shutdown(st->pool, PP_CANCEL, 0);
}

/* Runs in the OS's interrupt thread (cli_os.h), not in a signal handler. */
static void on_interrupt(void)
{
    run_state *st = atomic_load_explicit(&interrupt_target, memory_order_acquire);
    apr_uint32_t n = apr_atomic_inc32(&interrupts) + 1;
    pp_stats_t ps;

    apr_atomic_set32(&stop_input, 1);
    if (!st)
        return;
    pp_pool_stats(st->pool, &ps);
    if (n == 1) {
        cli_os_wake_reader();
        cli_error("Ctrl-C: input stopped, draining %" APR_UINT64_T_FMT " queued and %"
                  APR_UINT64_T_FMT " running tasks; Ctrl-C again to cancel them",
                  ps.queued, ps.running);
    }
    else if (n == 2) {
        cli_error("Ctrl-C: cancelling %" APR_UINT64_T_FMT " queued tasks, asking %"
                  APR_UINT64_T_FMT " running ones to stop; Ctrl-C again to quit at once",
                  ps.queued, ps.running);
        cancel_run(st);
    }
    else {
        /* A task that does not hear the cancel would hold the process for
         * ever: give the user the process back. Results held by -k and
         * not yet printed are lost; printed ones are flushed when the lock
         * can be had (a worker blocked writing may hold it). */
        int locked = apr_thread_mutex_trylock(st->lock) == APR_SUCCESS;

        cli_error("Ctrl-C: quitting now; %" APR_UINT64_T_FMT " tasks still running",
                  ps.running);
        if (locked)
            fflush(stdout);
        if (!summary_quiet)
            print_summary(st, summary_json, CLI_INTERRUPTED);
        fflush(stdout);
        fflush(stderr);
        _Exit(CLI_INTERRUPTED);
    }
}

/* ------------------------------------------------------------ crash */

/* A plugin's task that crashes takes the process with it (in-process
 * plugins share it; parkpool(1) says so). Before it goes: which tasks
 * were running, the results -k was holding (in input order, the running
 * ones' missing), and the counts so far. Only async-signal-safe calls
 * from here on: write(2) through cli_os_write, no stdio, no locks; the
 * state is read as it is, a torn read being better than no report. */
static void say(const char *s)
{
    cli_os_write(2, s, strlen(s));
}

static void say_count(apr_uint64_t n, const char *what)
{
    char digits[24], *d = digits + sizeof(digits);

    *--d = '\0';
    do
        *--d = (char)('0' + n % 10);
    while ((n /= 10) > 0);
    say(d);
    say(what);
}

static void crash_report(const char *what)
{
    run_state *st = atomic_load_explicit(&interrupt_target, memory_order_acquire);
    apr_uint64_t i, held = 0, lost = 0;
    int w;

    say("\nparkpool: the process is ending: ");
    say(what);
    say(" in a task (plugins run inside parkpool's process)\n");
    if (!st)
        return;
    for (w = 0; w < MAX_JOBS; w++) {
        cli_task *t = atomic_load_explicit(&st->slot[w], memory_order_relaxed);
        if (t) {
            say("parkpool: was running: ");
            say(t->text);
            say("\n");
        }
    }
    if (st->keep_order) {
        for (i = st->next_print; i < st->next_print + WINDOW; i++) {
            cli_task *t = st->ring[i % WINDOW];
            if (t && t->index == i) {
                held++;
                if (!cli_outbuf_salvage(&t->out, 1))
                    lost++;
            }
        }
        if (held) {
            say("parkpool: ");
            say_count(held, " finished results held for -k printed, in input order, gaps where"
                            " tasks had not finished\n");
        }
        if (lost)
            say_count(lost, " of them in part only (the rest was in a temporary file)\n");
    }
    say("parkpool: so far: ");
    say_count(st->done, " done, ");
    say_count(st->failed, " failed, ");
    say_count(st->cancelled, " cancelled\n");
}

/* ------------------------------------------------------------ output */

static void clear_progress(run_state *st)
{
    if (st->progress_shown) {
        fputs("\r\033[K", stderr);
        st->progress_shown = 0;
    }
}

/* text as it can be shown on a terminal: control bytes as C escapes
 * (\n, \t, \r, \xHH), a backslash doubled; other bytes as they are. */
static const char *escaped(const char *text, apr_size_t len, apr_pool_t *p)
{
    static const char hex[] = "0123456789abcdef";
    char *out = apr_palloc(p, 4 * len + 1), *o = out;
    apr_size_t i;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\\') {
            *o++ = '\\';
            *o++ = '\\';
        }
        else if (c == '\n' || c == '\t' || c == '\r') {
            *o++ = '\\';
            *o++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        }
        else if (c < 0x20 || c == 0x7f) {
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
        else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}

static int input_error(run_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reports bad input between the progress bar's redraws; CLI_USAGE. */
static int input_error(run_state *st, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (st->muted)
        return CLI_USAGE;
    va_start(ap, fmt);
    apr_vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    apr_thread_mutex_lock(st->lock);
    clear_progress(st);
    cli_error("%s", line);
    apr_thread_mutex_unlock(st->lock);
    return CLI_USAGE;
}

/* One line, cut to the terminal's width as it is now (a resize must not
 * wrap it into stale lines), the bar narrower on a narrow terminal. */
static void draw_progress(run_state *st)
{
    apr_uint64_t finished = st->done + st->failed + st->cancelled;
    double secs = (double)(apr_time_now() - st->start) / APR_USEC_PER_SEC;
    double rate = secs > 0 ? finished / secs : 0;
    int width = cli_os_terminal_width(), barlen = width - 50, i, fill = 0;
    char bar[41], line[256];

    barlen = barlen > 40 ? 40 : barlen < 10 ? 10 : barlen;
    if (st->input_done && st->submitted)
        fill = (int)((apr_uint64_t)barlen * finished / st->submitted);
    for (i = 0; i < barlen; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[barlen] = '\0';
    if (st->input_done && st->submitted) {
        double left = rate > 0 ? (st->submitted - finished) / rate : 0;
        apr_snprintf(line, sizeof(line), "[%s] %" APR_UINT64_T_FMT "/%" APR_UINT64_T_FMT
                     " %3d%% %.0f/s ETA %d:%02d", bar, finished, st->submitted,
                     (int)(100 * finished / st->submitted), rate, (int)left / 60, (int)left % 60);
    }
    else {
        apr_snprintf(line, sizeof(line), "[%s] %" APR_UINT64_T_FMT "/? %.0f/s", bar, finished,
                     rate);
    }
    if (width > 1 && (apr_size_t)width - 1 < sizeof(line))
        line[width - 1] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    st->progress_shown = 1;
}


/* Called with st->lock held: the first failed write stops the run. */
static void write_failed(run_state *st)
{
    if (st->write_errno)
        return;
    st->write_errno = errno ? errno : EIO;
    apr_atomic_set32(&stop_input, 1);
    cli_os_wake_reader();
}

/* What became of a task, in one word (--json's "status"). */
static const char *outcome(const cli_task *t)
{
    if (!t->ran || (t->status == PP_ECANCELLED && !t->timed_out))
        return "cancelled";
    if (t->timed_out)
        return "timeout";
    return t->status == APR_SUCCESS ? "ok" : "failed";
}

/* --json: the output as an array of lines (split at LF; bytes after the
 * last LF are a line too). */
typedef struct json_lines {
    cli_json_text text;
    int           open, any;
} json_lines;

static apr_status_t json_piece(const char *data, apr_size_t len, void *baton)
{
    json_lines *j = baton;
    const char *end = data + len, *nl;

    for (; data < end; data = nl + 1) {
        nl = memchr(data, '\n', (apr_size_t)(end - data));
        if (!j->open) {
            fputs(j->any ? ",\"" : "\"", stdout);
            j->open = j->any = 1;
        }
        cli_json_text_put(&j->text, data, (apr_size_t)((nl ? nl : end) - data));
        if (!nl)
            break;
        cli_json_text_end(&j->text);
        fputc('"', stdout);
        j->open = 0;
    }
    return APR_SUCCESS;
}

/* --json: one object per task, on one line. */
static apr_status_t print_json(const cli_task *t)
{
    json_lines j;
    char msg[256];
    apr_status_t rv;

    printf("{\"seq\":%" APR_UINT64_T_FMT ",\"type\":", t->index + 1);
    cli_json_string(stdout, t->type->name);
    fputs(",\"arg\":", stdout);
    cli_json_bytes(stdout, t->raw, t->rawlen);
    printf(",\"status\":\"%s\",\"error\":", outcome(t));
    if (t->status == APR_SUCCESS && t->ran)
        fputs("null", stdout);
    else
        cli_json_string(stdout, t->timed_out ? "timed out"
                        : !t->ran ? "cancelled before it ran"
                        : pp_strerror(t->status, msg, sizeof(msg)));
    fputs(",\"output\":[", stdout);
    memset(&j, 0, sizeof(j));
    cli_json_text_init(&j.text, stdout);
    rv = cli_outbuf_each((cli_outbuf *)&t->out, json_piece, &j);
    if (j.open) {
        cli_json_text_end(&j.text);
        fputc('"', stdout);
    }
    printf("],\"seconds\":%.6f,\"attempts\":%d}\n",
           t->ran ? (double)(t->ended - t->started) / APR_USEC_PER_SEC : 0.0, t->attempts + 1);
    return rv;
}

/* --joblog: GNU parallel's columns, tab-separated (Seq, Host, Starttime,
 * JobRuntime, Send, Receive, Exitval, Signal, Command). Exitval is a
 * child's exit status where there is one, else 0 or 1; Signal the signal
 * that ended a child. */
static void print_joblog(FILE *f, const cli_task *t)
{
    int code = t->status == APR_SUCCESS && t->ran ? 0 : 1, sig = 0;

    if (PP_IS_EEXIT(t->status)) {
        code = PP_EEXIT_CODE(t->status);
        if (code > 128) {
            sig = code - 128;
            code = 0;
        }
    }
    fprintf(f, "%" APR_UINT64_T_FMT "\t:\t%.3f\t%.3f\t0\t%" APR_SIZE_T_FMT "\t%d\t%d\t%s %s\n",
            t->index + 1, (double)t->started / APR_USEC_PER_SEC,
            t->ran ? (double)(t->ended - t->started) / APR_USEC_PER_SEC : 0.0,
            t->out.bytes, code, sig, t->type->name, escaped(t->raw, t->rawlen, t->p));
}

/* Called with st->lock held: stdout's buffer goes out at once to a
 * terminal, else when FLUSH_EVERY has passed since it last went (the
 * progress thread flushes too), so that a stream of small results costs a
 * write per buffer, not one per task. */
static apr_status_t flush_output(run_state *st, int now)
{
    if (!st->unflushed)
        return APR_SUCCESS;
    if (!now && !st->stdout_tty && apr_time_now() - st->flushed < FLUSH_EVERY)
        return ferror(stdout) ? APR_FROM_OS_ERROR(errno ? errno : EIO) : APR_SUCCESS;
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        return APR_FROM_OS_ERROR(errno ? errno : EIO);
    st->unflushed = 0;
    st->flushed = apr_time_now();
    return APR_SUCCESS;
}

/* Called with st->lock held: print a finished task whole, then let go.
 * Once a write has failed nothing more is written. */
static void print_task(run_state *st, cli_task *t)
{
    int redraw = st->progress_shown && st->stdout_tty;

    /* The bar shares the terminal only when stdout is one too. */
    if (st->stdout_tty)
        clear_progress(st);
    if (st->joblog)
        print_joblog(st->joblog, t);
    if (!st->write_errno && (t->out.bytes || st->o->json)) {
        apr_status_t rv = st->o->json ? print_json(t) : cli_outbuf_print(&t->out, stdout);
        st->unflushed = 1;
        if (rv == APR_SUCCESS)
            rv = flush_output(st, 0);
        if (rv != APR_SUCCESS) {
            errno = APR_TO_OS_ERROR(rv);
            write_failed(st);
        }
    }
    cli_outbuf_release(&t->out);
    apr_pool_destroy(t->p);
    if (redraw)
        draw_progress(st);    /* visible while results stream past */
}

/* ------------------------------------------------------------ tasks */

/* Only the running task's worker touches its buffer: no lock needed. */
static void on_output(const char *line, const char *name, void *baton)
{
    cli_task *t = current;

    (void)name;
    (void)baton;
    if (t) {
        cli_outbuf_add(&t->out, line, strlen(line));
        cli_outbuf_add(&t->out, "\n", 1);
    }
}

static void on_write(const char *data, apr_size_t len, const char *name, void *baton)
{
    cli_task *t = current;

    (void)name;
    (void)baton;
    if (t)
        cli_outbuf_add(&t->out, data, len);
}

static apr_status_t task_run(void *arg, pp_task_ctx_t *ctx);
static void task_release(void *arg);

/* Queue t (again, for a retry): APR_SUCCESS or the pool's refusal. */
static apr_status_t submit_task(run_state *st, cli_task *t)
{
    pp_task_t task;

    task.fn = task_run;
    task.arg = t;
    task.release = task_release;
    task.name = t->type->name;
    if (st->o->timeout > 0) {
        /* A fresh group each time: a timed-out one stays cancelled. */
        apr_status_t rv = pp_group_create(&t->own, t->p);
        if (rv != APR_SUCCESS)
            return rv;
    }
    return pp_submit_task(st->pool, &task, t->own ? t->own : st->group, 0);
}

static apr_status_t task_run(void *arg, pp_task_ctx_t *ctx)
{
    cli_task *t = arg;
    run_state *st = t->st;

    current = t;    /* cleared in task_release, after the pool's report */
    if (st->timing || st->o->verbose || apr_atomic_read32(&st->halting)) {
        apr_thread_mutex_lock(st->lock);
        if (st->halting) {
            /* --halt: what has not started does not. */
            apr_thread_mutex_unlock(st->lock);
            t->ran = 0;
            return APR_SUCCESS;
        }
        if (st->o->verbose) {
            clear_progress(st);
            cli_error("run: %s", t->text);
        }
        t->started = apr_time_now();
        if (st->o->timeout > 0) {
            t->prev = NULL;
            t->next = st->running;
            if (st->running)
                st->running->prev = t;
            st->running = t;
        }
        apr_thread_mutex_unlock(st->lock);
    }
    t->ran = 1;
    /* Relaxed: only a crash report reads it, on whatever it finds. */
    atomic_store_explicit(&st->slot[pp_task_worker(ctx) % MAX_JOBS], t, memory_order_relaxed);
    t->status = t->type->run(t->arg, ctx);
    atomic_store_explicit(&st->slot[pp_task_worker(ctx) % MAX_JOBS], NULL, memory_order_relaxed);
    if (st->timing) {
        apr_thread_mutex_lock(st->lock);
        t->ended = apr_time_now();
        if (st->o->timeout > 0) {
            if (t->prev)
                t->prev->next = t->next;
            else
                st->running = t->next;
            if (t->next)
                t->next->prev = t->prev;
            t->prev = t->next = NULL;
        }
        apr_thread_mutex_unlock(st->lock);
    }
    if (t->timed_out)
        t->status = APR_TIMEUP;
    return t->status;
}

/* The run's clock, every TICK: stdout's buffer goes out when due, the
 * progress bar is redrawn (every fourth tick), and with --timeout the group
 * of each task past its time is cancelled (cooperative: the task hears it
 * through pp_task_cancelled). The cancel is made under the lock, so a task
 * cannot end and free its group meanwhile; the group holds no queued task
 * whose release would need the lock. */
static void *APR_THREAD_FUNC ticker_main(apr_thread_t *thread, void *data)
{
    run_state *st = data;
    unsigned tick = 0;
    cli_task *t;
    apr_status_t rv;

    (void)thread;
    while (!apr_atomic_read32(&st->finished)) {
        apr_time_t now = apr_time_now();
        apr_thread_mutex_lock(st->lock);
        if (st->progress && tick++ % 4 == 0)
            draw_progress(st);
        if (!st->write_errno && (rv = flush_output(st, 0)) != APR_SUCCESS) {
            errno = APR_TO_OS_ERROR(rv);
            write_failed(st);
        }
        for (t = st->running; t; t = t->next) {
            if (!t->timed_out && now - t->started >= st->o->timeout) {
                t->timed_out = 1;
                pp_group_cancel(t->own);
            }
        }
        apr_thread_mutex_unlock(st->lock);
        apr_sleep(TICK);
    }
    return NULL;
}

/* Called with st->lock held, after a failure is counted: --halt. */
static int halt_reached(run_state *st)
{
    if (st->halting || !st->o->halt_fail || st->failed < (apr_uint64_t)st->o->halt_fail)
        return 0;
    apr_atomic_set32(&st->halting, 1);
    apr_atomic_set32(&stop_input, 1);
    cli_os_wake_reader();
    clear_progress(st);
    cli_error("halting after %" APR_UINT64_T_FMT " failed task%s: %s", st->failed,
              st->failed == 1 ? "" : "s",
              st->o->halt_now ? "cancelling the rest" : "waiting for the running ones");
    return st->o->halt_now;
}

static void task_release(void *arg)
{
    cli_task *t = arg;
    run_state *st = t->st;
    int cancel;
    char msg[256];

    current = NULL;
    if (t->ran && t->status != APR_SUCCESS && t->attempts < st->o->retries
        && !apr_atomic_read32(&cancel_sent) && !apr_atomic_read32(&st->halting)) {
        /* --retries: the output of a failed run goes; the next run's stays. */
        t->attempts++;
        t->timed_out = 0;
        cli_outbuf_release(&t->out);
        cli_outbuf_init(&t->out, &st->budget, t->p);
        if (submit_task(st, t) == APR_SUCCESS)
            return;
    }
    if (t->type->release)
        t->type->release(t->arg);
    apr_thread_mutex_lock(st->lock);
    cancel = 0;
    if (!t->ran) {
        st->cancelled++;
    }
    else if (t->status == PP_ECANCELLED && apr_atomic_read32(&cancel_sent)) {
        /* It heard the cancel and stopped: that is what was asked. */
        st->cancelled++;
        clear_progress(st);
        cli_error("%s: cancelled while running", t->text);
    }
    else if (t->status != APR_SUCCESS) {
        st->failed++;
        clear_progress(st);
        if (t->timed_out)
            cli_error("%s: timed out after %.3g s", t->text,
                      (double)st->o->timeout / APR_USEC_PER_SEC);
        else
            cli_error("%s: %s", t->text, pp_strerror(t->status, msg, sizeof(msg)));
        cancel = halt_reached(st);
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
        /* The reader waits for half the window, not one slot: one wake-up
         * per WINDOW / 2 tasks however far ahead they finish. */
        if (st->reader_waits && st->submitted - st->next_print <= WINDOW / 2) {
            st->reader_waits = 0;
            apr_thread_cond_signal(st->window);
        }
    }
    cancel = cancel || st->write_errno != 0;
    apr_thread_mutex_unlock(st->lock);
    if (cancel)
        cancel_run(st);
}

/* Make a task of TYPE ARG, not yet queued: 0, or CLI_USAGE after saying
 * why. where prefixes the messages ("line 3: "). */
static int prepare(cli_task **out, run_state *st, const pp_registry_t *reg,
                   const char *type_name, const char *arg, apr_size_t arglen, const char *where)
{
    const pp_task_type_t *type = pp_registry_find(reg, type_name);
    cli_task *t;
    apr_pool_t *p;
    apr_status_t rv;
    char msg[256];

    *out = NULL;
    rv = apr_pool_create(&p, st->task_root);
    if (rv != APR_SUCCESS)
        return input_error(st, "%scannot make room for a task: %s", where,
                           pp_strerror(rv, msg, sizeof(msg)));
    if (!type) {
        const pp_task_type_t *guess = pp_registry_suggest(reg, type_name);
        const char *name = escaped(type_name, strlen(type_name), p);
        if (guess)
            input_error(st, "%sunknown task type '%s' (did you mean '%s'?)", where, name,
                        guess->name);
        else
            input_error(st, "%sunknown task type '%s' (parkpool plugins lists them)", where,
                        name);
        apr_pool_destroy(p);
        return CLI_USAGE;
    }
    t = apr_pcalloc(p, sizeof(*t));
    t->st = st;
    t->type = type;
    t->p = p;
    t->text = apr_pstrcat(p, type->name, " ", escaped(arg, arglen, p), NULL);
    t->raw = apr_pstrmemdup(p, arg, arglen);
    t->rawlen = arglen;
    cli_outbuf_init(&t->out, &st->budget, p);
    rv = type->parse ? type->parse(&t->arg, arg, p) : APR_SUCCESS;
    if (!type->parse)
        t->arg = apr_pstrmemdup(p, arg, arglen);
    if (rv != APR_SUCCESS) {
        input_error(st, "%sbad argument for %s: '%s' (%s)", where, type->name,
                    escaped(arg, arglen, p), pp_strerror(rv, msg, sizeof(msg)));
        apr_pool_destroy(p);
        return CLI_USAGE;
    }
    *out = t;
    return 0;
}

/* --dry-run: say what would run, run nothing. */
static void show_task(run_state *st, cli_task *t)
{
    apr_thread_mutex_lock(st->lock);
    st->submitted++;
    if (!st->write_errno) {
        errno = 0;
        if (printf("%s ", t->type->name) < 0 || fwrite(t->raw, 1, t->rawlen, stdout) != t->rawlen
            || putchar('\n') == EOF)
            write_failed(st);
    }
    apr_thread_mutex_unlock(st->lock);
    apr_pool_destroy(t->p);
}

/* Queue a prepared task; a refused one (after a cancel) counts as cancelled. */
static void queue(run_state *st, cli_task *t)
{
    if (st->o->dry_run) {
        show_task(st, t);
        return;
    }
    apr_thread_mutex_lock(st->lock);
    t->index = st->submitted;
    while (st->keep_order && t->index - st->next_print >= WINDOW) {
        st->reader_waits = 1;
        apr_thread_cond_wait(st->window, st->lock);
    }
    st->submitted++;
    apr_thread_mutex_unlock(st->lock);

    if (submit_task(st, t) != APR_SUCCESS)
        task_release(t);
}


/* ------------------------------------------------------------ input */

/* One input record: TYPE ARG, or ARG alone with --type. */
static int prepare_record(cli_task **t, run_state *st, const pp_registry_t *reg,
                          const run_opts *o, char *rec, apr_size_t len, const char *where)
{
    char *type, *arg;
    apr_status_t rv;

    *t = NULL;
    if (o->type)
        return prepare(t, st, reg, o->type, rec, len, where);
    rv = pp_job_record_split(rec, &type, &arg);
    if (rv == APR_EOF)
        return 0;
    if (rv != APR_SUCCESS) {
        apr_pool_t *tmp;
        if (apr_pool_create(&tmp, st->task_root) != APR_SUCCESS)
            return input_error(st, "%sexpected 'TYPE ARG'", where);
        input_error(st, "%sexpected 'TYPE ARG', got '%s'", where, escaped(rec, len, tmp));
        apr_pool_destroy(tmp);
        return CLI_USAGE;
    }
    return prepare(t, st, reg, type, arg, len - (apr_size_t)(arg - rec), where);
}

/* Read the records of fd: each queued as it is read, or with --check all
 * made first and queued only when every one is good. 0, or CLI_USAGE. */
static int read_records(run_state *st, const pp_registry_t *reg, int fd, const char *file,
                        const run_opts *o, apr_pool_t *p)
{
    apr_array_header_t *held = apr_array_make(p, o->check ? 1024 : 1, sizeof(cli_task *));
    cli_records *r;
    cli_rec_result got;
    cli_task *t = NULL;
    char *rec, where[64];
    size_t len;
    apr_uint64_t bad = 0;
    apr_status_t rv;
    int i, rc = 0;

    rv = cli_records_open(&r, fd, o->sep, &stop_input, p);
    if (rv != APR_SUCCESS)
        return input_error(st, "run: cannot read %s: %s", file, pp_strerror(rv, where, sizeof(where)));
    while (!apr_atomic_read32(&stop_input)) {
        got = cli_records_next(r, &rec, &len);
        if (got == CLI_REC_END)
            break;
        apr_snprintf(where, sizeof(where), "%s %" APR_UINT64_T_FMT ": ",
                     o->sep ? "line" : "record", cli_records_count(r) + (got == CLI_REC_TOO_LONG));
        if (got == CLI_REC_ERROR) {
            rc = input_error(st, "run: cannot read job file %s after %s %" APR_UINT64_T_FMT ": %s", file,
                             o->sep ? "line" : "record", cli_records_count(r), strerror(errno));
            break;
        }
        if (got == CLI_REC_TOO_LONG) {
            rc = input_error(st, "%slonger than the maximum of %u MiB", where,
                             (unsigned)(CLI_RECORD_MAX >> 20));
            break;
        }
        t = NULL;
        if (got == CLI_REC_NUL)
            rc = input_error(st, "%sa NUL byte in the line (records ending in NUL need -0)",
                             where);
        else
            rc = prepare_record(&t, st, reg, o, rec, len, where);
        if (rc != 0 && !o->check)
            break;
        if (rc != 0) {
            if (++bad == MAX_REPORTED) {
                input_error(st, "run: more bad lines follow; only the first %d are named",
                            MAX_REPORTED);
                st->muted = 1;
            }
            continue;
        }
        if (t && o->check)
            APR_ARRAY_PUSH(held, cli_task *) = t;
        else if (t)
            queue(st, t);
    }
    cli_records_close(r);
    st->muted = 0;
    if (o->check && bad) {
        input_error(st, "run: %" APR_UINT64_T_FMT " bad %s%s; --check runs nothing", bad,
                    o->sep ? "line" : "record", bad == 1 ? "" : "s");
        rc = CLI_USAGE;
    }
    for (i = 0; i < held->nelts; i++) {
        t = APR_ARRAY_IDX(held, i, cli_task *);
        if (rc == 0 && !apr_atomic_read32(&stop_input))
            queue(st, t);
        else
            apr_pool_destroy(t->p);
    }
    return rc;
}

/* The words of the command line: TYPE ARG..., or ARG... with --type. */
static int read_words(run_state *st, const pp_registry_t *reg, const run_opts *o,
                      apr_pool_t *p)
{
    apr_array_header_t *held = apr_array_make(p, o->nwords, sizeof(cli_task *));
    const char *type = o->type ? o->type : o->words[0];
    cli_task *t;
    int i, rc = 0;

    /* Bad words are found before anything runs, as --check does for files. */
    for (i = o->type ? 0 : 1; i < o->nwords && rc == 0; i++) {
        rc = prepare(&t, st, reg, type, o->words[i], strlen(o->words[i]), "");
        if (rc == 0)
            APR_ARRAY_PUSH(held, cli_task *) = t;
    }
    for (i = 0; i < held->nelts; i++) {
        t = APR_ARRAY_IDX(held, i, cli_task *);
        if (rc == 0 && !apr_atomic_read32(&stop_input))
            queue(st, t);
        else
            apr_pool_destroy(t->p);
    }
    return rc;
}

/* ------------------------------------------------------------ command */

static void print_summary(run_state *st, int json, int rc)
{
    double secs = (double)(apr_time_now() - st->start) / APR_USEC_PER_SEC;
    apr_uint64_t all = st->done + st->failed + st->cancelled;
    double rate = secs > 0 ? all / secs : 0;

    clear_progress(st);
    if (st->o->dry_run && !json)
        fprintf(stderr, "parkpool: dry run: %" APR_UINT64_T_FMT " tasks, none run\n",
                st->submitted);
    else if (json)
        /* JSON Lines: the summary is stdout's last object. */
        printf("{\"summary\":{\"submitted\":%" APR_UINT64_T_FMT ",\"done\":%" APR_UINT64_T_FMT
                ",\"failed\":%" APR_UINT64_T_FMT ",\"cancelled\":%" APR_UINT64_T_FMT
                ",\"wall_s\":%.3f,\"tasks_per_s\":%.1f,\"interrupted\":%s,\"exit\":%d}}\n",
                st->submitted, st->done, st->failed, st->cancelled, secs, rate,
                apr_atomic_read32(&interrupts) ? "true" : "false", rc);
    else
        fprintf(stderr, "parkpool: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT
                " failed, %" APR_UINT64_T_FMT " cancelled in %.2f s (%.0f tasks/s)\n",
                st->done, st->failed, st->cancelled, secs, rate);
}

enum {
    OPT_PROGRESS = 256, OPT_NO_PROGRESS, OPT_JSON, OPT_CHECK, OPT_JOBLOG, OPT_TIMEOUT,
    OPT_RETRIES, OPT_HALT, OPT_DRY_RUN, OPT_BAR, OPT_ETA
};

/* The options, with their help: "ARG\tline" when the option takes ARG. */
static const apr_getopt_option_t run_options[] = {
    { "type", 'T', 1, "TYPE\tevery record or word is one argument of TYPE" },
    { "file", 'f', 1, "FILE\tread records from FILE ('-': standard input)" },
    { "null", '0', 0, "\trecords end in NUL, not newline (find -print0)" },
    { "check", OPT_CHECK, 0, "\tread and check all input first; run nothing if a record is bad" },
    { "jobs", 'j', 1, "N\tN worker threads (default: one per CPU)" },
    { "keep-order", 'k', 0, "\tprint results in input order" },
    { "plugin-dir", 'P', 1, "DIR\tload plugins from DIR first (repeatable)" },
    { "timeout", OPT_TIMEOUT, 1, "SECONDS\tcancel a task running longer (it fails, timed out)" },
    { "retries", OPT_RETRIES, 1, "N\trun a failed task up to N more times" },
    { "halt", OPT_HALT, 1, "WHEN,fail=N\tafter N failures stop: now (cancel) or soon (finish running)" },
    { "joblog", OPT_JOBLOG, 1, "FILE\twrite GNU parallel's job log to FILE" },
    { "json", OPT_JSON, 0, "\tJSON Lines on stdout: an object per task, the summary last" },
    { "dry-run", OPT_DRY_RUN, 0, "\tprint the tasks that would run, run none" },
    { "verbose", 'v', 0, "\tprint each task on stderr as it starts" },
    { "progress", OPT_PROGRESS, 0, "\tshow the progress bar (default: when stderr is a terminal)" },
    { "bar", OPT_BAR, 0, "\tthe same as --progress" },
    { "eta", OPT_ETA, 0, "\tthe same as --progress (the bar shows the ETA)" },
    { "no-progress", OPT_NO_PROGRESS, 0, "\tnever show it" },
    { "quiet", 'q', 0, "\tno summary" },
    { "help", 'h', 0, "\tthis help" },
    { NULL, 0, 0, NULL }
};

static void run_help(void)
{
    const apr_getopt_option_t *o;

    printf("usage: parkpool run [OPTION]... TYPE ARG...\n"
           "       parkpool run [OPTION]... --type TYPE [ARG...]\n"
           "       parkpool run [OPTION]... [--type TYPE] -f FILE|-\n"
           "\n"
           "Run tasks on a pool: TYPE once per ARG, or one 'TYPE ARG' record per line of\n"
           "FILE (with --type, each line is one ARG). --type without ARG or -f reads\n"
           "standard input.\n\n");
    for (o = run_options; o->name; o++) {
        const char *tab = strchr(o->description, '\t');
        char head[64];
        int arglen = (int)(tab - o->description);

        if (o->optch < 256)
            apr_snprintf(head, sizeof(head), "-%c, --%s%s%.*s", o->optch, o->name,
                         arglen ? " " : "", arglen, o->description);
        else
            apr_snprintf(head, sizeof(head), "    --%s%s%.*s", o->name, arglen ? " " : "",
                         arglen, o->description);
        printf("  %-24s %s\n", head, tab + 1);
    }
    printf("\nExit status: 0 all tasks succeeded, 1 some failed or a write failed, 2 bad\n"
           "usage or input, 130 interrupted. See parkpool(1).\n");
}

/* apr_getopt takes a lone "-" (standard input, by convention a word) for
 * a bad option: it gets a stand-in, recognised by its address. */
static const char dash[] = "-";

static const char *const *hide_dashes(int argc, const char *const *argv, apr_pool_t *p)
{
    const char **copy = apr_pmemdup(p, argv, (apr_size_t)(argc + 1) * sizeof(*argv));
    static const char stand_in[] = "\x1f";
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-") == 0)
            copy[i] = stand_in;
    return copy;
}

static const char *shown(const char *word)
{
    return word[0] == '\x1f' && word[1] == '\0' ? dash : word;
}

/* --halt WHEN,fail=N, GNU parallel's form; "never" turns it off. */
static int parse_halt(run_opts *o, const char *v)
{
    char *end;

    if (strcmp(v, "never") == 0) {
        o->halt_fail = 0;
        return 0;
    }
    if (strncmp(v, "now,fail=", 9) == 0)
        o->halt_now = 1;
    else if (strncmp(v, "soon,fail=", 10) == 0)
        o->halt_now = 0;
    else
        return -1;
    v = strchr(v, '=') + 1;
    o->halt_fail = strtol(v, &end, 10);
    return end == v || *end || o->halt_fail < 1 ? -1 : 0;
}

/* Parse the command line into o: -1 to go on, else the exit status. */
static int parse_options(run_opts *o, int argc, const char *const *argv, apr_pool_t *p)
{
    const char *optval, **words;
    apr_getopt_t *os;
    apr_status_t rv;
    char *end;
    int opt, i;

    memset(o, 0, sizeof(*o));
    o->dirs = apr_array_make(p, 4, sizeof(const char *));
    o->progress = cli_os_stderr_is_terminal();
    o->sep = '\n';
    argv = hide_dashes(argc, argv, p);
    rv = apr_getopt_init(&os, p, argc, argv);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot read the options");
        return CLI_USAGE;
    }
    os->errfn = NULL;
    os->interleave = 1;    /* options may follow the tasks; "--" ends them */
    while ((rv = apr_getopt_long(os, run_options, &opt, &optval)) == APR_SUCCESS) {
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
        case 'f': o->file = shown(optval); break;
        case 'T': o->type = optval; break;
        case '0': o->sep = '\0'; break;
        case 'q': o->quiet = 1; break;
        case OPT_CHECK: o->check = 1; break;
        case OPT_PROGRESS: case OPT_BAR: case OPT_ETA: o->progress = 1; break;
        case OPT_JOBLOG: o->joblog = shown(optval); break;
        case OPT_DRY_RUN: o->dry_run = 1; break;
        case 'v': o->verbose = 1; break;
        case OPT_TIMEOUT: {
            double secs = strtod(optval, &end);
            if (end == optval || *end || !(secs > 0) || secs > 1e6) {
                cli_error("run: --timeout takes seconds above 0, not '%s'", optval);
                return CLI_USAGE;
            }
            o->timeout = (apr_interval_time_t)(secs * APR_USEC_PER_SEC);
            break;
        }
        case OPT_RETRIES:
            o->retries = (int)strtol(optval, &end, 10);
            if (end == optval || *end || o->retries < 0 || o->retries > 1000) {
                cli_error("run: --retries takes a number from 0 to 1000, not '%s'", optval);
                return CLI_USAGE;
            }
            break;
        case OPT_HALT:
            if (parse_halt(o, optval) != 0) {
                cli_error("run: --halt takes now,fail=N or soon,fail=N (N from 1), not '%s'",
                          optval);
                return CLI_USAGE;
            }
            break;
        case OPT_NO_PROGRESS: o->progress = 0; break;
        case OPT_JSON: o->json = 1; break;
        default:
            run_help();
            return CLI_OK;
        }
    }
    if (rv != APR_EOF) {
        /* apr_getopt leaves the offending word at ind - 1 (or at ind when
         * a missing value ran off the end). */
        const char *word = os->ind > 0 && os->ind <= argc ? argv[os->ind - 1] : "?";
        cli_error(rv == APR_BADARG ? "run: option '%s' needs a value (see parkpool run --help)"
                                   : "run: unknown option '%s' (see parkpool run --help)",
                  word);
        return CLI_USAGE;
    }
    o->nwords = argc - os->ind;
    words = apr_palloc(p, (apr_size_t)(o->nwords + 1) * sizeof(*words));
    for (i = 0; i < o->nwords; i++)    /* apr_getopt permuted its own copy */
        words[i] = shown(os->argv[os->ind + i]);
    o->words = words;
    if (o->file && o->nwords > 0) {
        cli_error("run: give tasks with -f or on the command line, not both");
        return CLI_USAGE;
    }
    if (!o->file && !o->type && o->nwords < 2) {
        cli_error("run: no tasks: give TYPE ARG..., --type TYPE or -f FILE");
        return CLI_USAGE;
    }
    if (!o->file && o->type && o->nwords == 0)
        o->file = "-";    /* as xargs: arguments from standard input */
    if (!o->file && (o->check || o->sep == '\0'))
        cli_error("run: warning: --check and -0 apply to -f input only");
    return -1;
}

/* The input's file descriptor, or -1 when the tasks are on the command
 * line: 0, or the exit status after saying why. */
static int open_input(int *fd, const run_opts *o)
{
    *fd = -1;
    if (!o->file)
        return 0;
    *fd = strcmp(o->file, "-") ? cli_os_open_read(o->file) : 0;
    if (*fd < 0) {
        cli_error("run: cannot read job file %s: %s", o->file, strerror(errno));
        return CLI_USAGE;
    }
    return 0;
}

/* Everything a run needs before the first task: the output lock, the -k
 * window, the task pools' root, the pool and its group, the job log, the
 * progress bar and the --timeout watch. */
static apr_status_t start_run(run_state *st, const run_opts *o, apr_pool_t *p)
{
    pp_config_t cfg;
    apr_status_t rv;

    st->o = o;
    st->keep_order = o->keep_order;
    st->progress = o->progress;
    st->timing = o->json || o->joblog || o->timeout > 0;
    st->budget.limit = OUTPUT_BUDGET;
    rv = apr_thread_mutex_create(&st->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&st->window, p);
    if (rv == APR_SUCCESS)
        rv = pp__task_root_create(&st->task_root, p);
    if (rv != APR_SUCCESS)
        return rv;
    if (o->joblog) {
        /* Binary: LF line ends on Windows too, as GNU parallel writes them. */
        st->joblog = strcmp(o->joblog, "-") ? fopen(o->joblog, "wb") : stdout;
        if (!st->joblog)
            return APR_FROM_OS_ERROR(errno);
        fputs("Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n",
              st->joblog);
    }
    pp_config_init(&cfg);
    cfg.threads = (apr_uint32_t)o->jobs;
    cfg.name_prefix = "parkpool";
    cfg.queue_capacity = 256;    /* streams: memory follows what is in flight */
    cfg.on_output = on_output;
    cfg.on_write = on_write;
    cfg.baton = st;
    rv = pp_pool_create(&st->pool, &cfg, p);
    if (rv == APR_SUCCESS)
        rv = pp_group_create(&st->group, p);
    if (rv == APR_SUCCESS && o->timeout > 0)
        rv = apr_thread_create(&st->ticker, NULL, ticker_main, st, p);
    if (rv != APR_SUCCESS)
        return rv;
    summary_json = o->json;
    summary_quiet = o->quiet;
    atomic_store_explicit(&interrupt_target, st, memory_order_release);
    st->start = apr_time_now();
    /* Without --timeout a run goes on without its ticker: results are
     * then flushed at once, and there is no progress bar. */
    st->stdout_tty = cli_os_stdout_is_terminal();
    if (!st->ticker && apr_thread_create(&st->ticker, NULL, ticker_main, st, p) != APR_SUCCESS) {
        st->ticker = NULL;
        st->stdout_tty = 1;
        st->progress = 0;
    }
    return APR_SUCCESS;
}

/* Queue every task, from the input or the command line; 0, or CLI_USAGE
 * when the input was bad. */
static int feed(run_state *st, const pp_registry_t *reg, int fd, const run_opts *o,
                apr_pool_t *p)
{
    int rc;

    if (fd >= 0) {
        rc = read_records(st, reg, fd, fd == 0 ? "standard input" : o->file, o, p);
        if (fd != 0)
            cli_os_close(fd);
    }
    else {
        rc = read_words(st, reg, o, p);
    }
    apr_thread_mutex_lock(st->lock);
    st->input_done = 1;
    apr_thread_mutex_unlock(st->lock);
    return rc;
}

/* Wait for the tasks (Ctrl-C or a failed write may cancel them meanwhile),
 * stop the helper threads, report; the exit status. */
static int finish_run(run_state *st, int rc)
{
    apr_status_t ignored;
    int write_errno;

    pp_group_wait(st->group, -1);
    pp_pool_shutdown(st->pool, PP_DRAIN, -1);
    atomic_store_explicit(&interrupt_target, NULL, memory_order_release);
    apr_atomic_set32(&st->finished, 1);
    if (st->ticker)
        apr_thread_join(&ignored, st->ticker);
    apr_thread_mutex_lock(st->lock);
    if (apr_atomic_read32(&interrupts))
        rc = CLI_INTERRUPTED;
    else if (rc == 0 && st->failed)
        rc = CLI_FAILED;
    /* JSON's summary is stdout's last line, so it comes before the check
     * of stdout; a write error found there makes the text summary's exit
     * status 1. */
    if (!st->o->quiet && st->o->json && !st->write_errno)
        print_summary(st, 1, rc);
    if (!st->write_errno) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
            st->write_errno = errno ? errno : EIO;
    }
    write_errno = st->write_errno;
    if (write_errno == EPIPE) {
        /* The reader is gone: end as coreutils do in a pipeline, quietly. */
        apr_thread_mutex_unlock(st->lock);
        cli_os_exit_broken_pipe();
    }
    if (write_errno) {
        clear_progress(st);
        cli_error("write error: %s", strerror(write_errno));
        if (rc != CLI_INTERRUPTED)
            rc = CLI_FAILED;
    }
    if (st->joblog && st->joblog != stdout
        && (fflush(st->joblog) != 0 || ferror(st->joblog) || fclose(st->joblog) != 0)) {
        cli_error("run: cannot write the job log %s: %s", st->o->joblog, strerror(errno));
        if (rc == CLI_OK)
            rc = CLI_FAILED;
    }
    if (!st->o->quiet && !st->o->json)
        print_summary(st, 0, rc);
    apr_thread_mutex_unlock(st->lock);
    pp_pool_destroy(st->pool);
    return rc;
}

int cli_run(int argc, const char *const *argv, apr_pool_t *p)
{
    run_state *st = apr_pcalloc(p, sizeof(*st));
    pp_registry_t *reg;
    run_opts o;
    apr_status_t rv;
    char msg[256];
    int rc, fd;

    if ((rc = parse_options(&o, argc, argv, p)) >= 0 || (rc = open_input(&fd, &o)) != 0)
        return rc;
    rv = cli_load_plugins(&reg, o.dirs, argv[0], p);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot make the task registry: %s", pp_strerror(rv, msg, sizeof(msg)));
        return CLI_FAILED;
    }
    if (o.type && !pp_registry_find(reg, o.type)) {
        const pp_task_type_t *guess = pp_registry_suggest(reg, o.type);
        cli_error("run: unknown task type '%s'%s%s%s", escaped(o.type, strlen(o.type), p),
                  guess ? " (did you mean '" : " (parkpool plugins lists them)",
                  guess ? guess->name : "", guess ? "'?)" : "");
        return CLI_USAGE;
    }
    cli_os_on_crash(crash_report);
    rv = cli_os_watch_interrupts(on_interrupt);
    if (rv != APR_SUCCESS)
        cli_error("run: Ctrl-C will stop the run at once (%s)", pp_strerror(rv, msg, sizeof(msg)));
    rv = start_run(st, &o, p);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot start: %s", pp_strerror(rv, msg, sizeof(msg)));
        return CLI_FAILED;
    }
    rc = feed(st, reg, fd, &o, p);
    return finish_run(st, rc);
}
