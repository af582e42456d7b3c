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
#include "run.h"
#include "cli_os.h"
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
            run_print_summary(st, summary_json, CLI_INTERRUPTED, 1);
        fflush(stdout);
        fflush(stderr);
        _Exit(CLI_INTERRUPTED);
    }
}

/* ------------------------------------------------------------ crash */

/* In a signal handler (cli_os_on_crash): the report is async-signal-safe. */
static void crash_report(const char *what)
{
    run_crash_report(atomic_load_explicit(&interrupt_target, memory_order_acquire), what);
}

/* ------------------------------------------------------------ output */

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
    run_clear_progress(st);
    cli_error("%s", line);
    apr_thread_mutex_unlock(st->lock);
    return CLI_USAGE;
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
        run_clear_progress(st);
    if (st->joblog)
        run_print_joblog(st->joblog, t);
    if (!st->write_errno && (t->out.bytes || st->o->json)) {
        apr_status_t rv = st->o->json ? run_print_json(t) : cli_outbuf_print(&t->out, stdout);
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
        run_draw_progress(st);    /* visible while results stream past */
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

    memset(&task, 0, sizeof(task));
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
            run_clear_progress(st);
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
            run_draw_progress(st);
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
    run_clear_progress(st);
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
        run_clear_progress(st);
        cli_error("%s: cancelled while running", t->text);
    }
    else if (t->status != APR_SUCCESS) {
        st->failed++;
        run_clear_progress(st);
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
        const char *name = run_escaped(type_name, strlen(type_name), p);
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
    t->text = apr_pstrcat(p, type->name, " ", run_escaped(arg, arglen, p), NULL);
    t->raw = apr_pstrmemdup(p, arg, arglen);
    t->rawlen = arglen;
    cli_outbuf_init(&t->out, &st->budget, p);
    rv = type->parse ? type->parse(&t->arg, arg, p) : APR_SUCCESS;
    if (!type->parse)
        t->arg = apr_pstrmemdup(p, arg, arglen);
    if (rv != APR_SUCCESS) {
        input_error(st, "%sbad argument for %s: '%s' (%s)", where, type->name,
                    run_escaped(arg, arglen, p), pp_strerror(rv, msg, sizeof(msg)));
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

/* Tasks made before any ran (--check, or the command line's words): all
 * queued when the input was good and nothing stopped it, else all freed. */
static void queue_held(run_state *st, apr_array_header_t *held, int good)
{
    int i;

    for (i = 0; i < held->nelts; i++) {
        cli_task *t = APR_ARRAY_IDX(held, i, cli_task *);
        if (good && !apr_atomic_read32(&stop_input))
            queue(st, t);
        else
            apr_pool_destroy(t->p);
    }
}

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
        input_error(st, "%sexpected 'TYPE ARG', got '%s'", where, run_escaped(rec, len, tmp));
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
    int rc = 0;

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
    queue_held(st, held, rc == 0);
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
    queue_held(st, held, rc == 0);
    return rc;
}

/* ------------------------------------------------------------ command */



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
    cfg.max_blocking = PP_BLOCKING_NONE;    /* -j N: N jobs at once, however they wait */
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
        run_print_summary(st, 1, rc, apr_atomic_read32(&interrupts) != 0);
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
        run_clear_progress(st);
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
        run_print_summary(st, 0, rc, apr_atomic_read32(&interrupts) != 0);
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

    if ((rc = run_parse_options(&o, argc, argv, p)) >= 0 || (rc = open_input(&fd, &o)) != 0)
        return rc;
    rv = cli_load_plugins(&reg, o.dirs, argv[0], p);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot make the task registry: %s", pp_strerror(rv, msg, sizeof(msg)));
        return CLI_FAILED;
    }
    if (o.type && !pp_registry_find(reg, o.type)) {
        const pp_task_type_t *guess = pp_registry_suggest(reg, o.type);
        cli_error("run: unknown task type '%s'%s%s%s", run_escaped(o.type, strlen(o.type), p),
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
