/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpoold's worker process (engine.h): a local engine (engine_local.c)
 * given tasks on stdin, answering on stdout, both pipes of its parent's
 * engine_child.c. One line each way per message:
 *
 *   in:  RUN ID TYPE ARG    run a task (ARG: the rest of the line)
 *        RELOAD             load the plugin folder again
 *        CANCEL MS          drop what is queued, stop what runs within MS, exit
 *   out: TYPES NAME...      after each load: the types it runs
 *        START ID           a worker took the task
 *        OUT ID LINE        a line the task printed
 *        DONE ID ok | DONE ID cancelled | DONE ID failed WHY
 *
 * The end of stdin is the end: what was given runs, is answered, and the
 * process exits 0. The signals that stop the service are blocked: the
 * parent decides, and a terminal's Ctrl-C or a service manager's SIGTERM
 * to the whole group reaches the parent, which drains. Plugins print to
 * what they think is stdout: fd 1 is the log (stderr), the parent's pipe
 * is a descriptor of its own, so no stray printf can break a line.
 */
#include "engine.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct wjob_t {
    apr_uint64_t id;
} wjob_t;

typedef struct worker_t {
    FILE               *to_parent;
    apr_thread_mutex_t *lock;       /* one line at a time on to_parent */
} worker_t;

/* A line to the parent, whole. A parent that is gone cannot be answered
 * or told anything: its worker has no reason to go on. */
static void say(worker_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(worker_t *w, const char *fmt, ...)
{
    va_list ap;
    int bad;

    apr_thread_mutex_lock(w->lock);
    va_start(ap, fmt);
    bad = vfprintf(w->to_parent, fmt, ap) < 0;
    va_end(ap);
    bad |= fputc('\n', w->to_parent) == EOF || fflush(w->to_parent) != 0;
    apr_thread_mutex_unlock(w->lock);
    if (bad)
        _exit(1);
}

static void on_started(void *job, void *baton)
{
    say(baton, "START %" APR_UINT64_T_FMT, ((wjob_t *)job)->id);
}

static void on_output(void *job, const char *line, void *baton)
{
    const char *nl;
    size_t len;

    /* A line with line breaks in it is that many lines; a line longer
     * than the parent reads is cut (the parent keeps less of a task's
     * output than that anyway). */
    do {
        nl = strchr(line, '\n');
        len = nl ? (size_t)(nl - line) : strlen(line);
        say(baton, "OUT %" APR_UINT64_T_FMT " %.*s", ((wjob_t *)job)->id,
            (int)(len < SVC_WORKER_MAX_OUT ? len : SVC_WORKER_MAX_OUT), line);
        line = nl + 1;
    } while (nl);
}

static void on_done(void *job, int outcome, const char *why, void *baton)
{
    apr_uint64_t id = ((wjob_t *)job)->id;

    free(job);
    if (outcome == SVC_OUTCOME_OK)
        say(baton, "DONE %" APR_UINT64_T_FMT " ok", id);
    else if (outcome == SVC_OUTCOME_CANCELLED)
        say(baton, "DONE %" APR_UINT64_T_FMT " cancelled", id);
    else
        say(baton, "DONE %" APR_UINT64_T_FMT " failed %s", id, why ? why : "");
}

static void say_types(worker_t *w, svc_engine_t *e, apr_pool_t *p)
{
    apr_pool_t *tmp;

    apr_pool_create(&tmp, p);
    say(w, "TYPES %s", e->ops->types(e, tmp));
    apr_pool_destroy(tmp);
}

/* "RUN ID TYPE ARG": the job is given, or answered at once. */
static void take_run(worker_t *w, svc_engine_t *e, char *rest, const svc_engine_config_t *cfg)
{
    char *end, *type, *arg;
    apr_uint64_t id = apr_strtoi64(rest, &end, 10);
    wjob_t *job;
    char msg[256];
    apr_status_t rv;

    if (end == rest || *end != ' ' || !(arg = strchr(type = end + 1, ' '))) {
        svc_logf(cfg->log, cfg->baton, PP_LOG_ERROR, "not a RUN line from the service: RUN %s",
                 rest);
        return;
    }
    *arg++ = '\0';
    if (!(job = malloc(sizeof(*job)))) {
        say(w, "DONE %" APR_UINT64_T_FMT " failed %s", id,
            pp_strerror(APR_ENOMEM, msg, sizeof(msg)));
        return;
    }
    job->id = id;
    rv = e->ops->run(e, job, id, type, arg);
    if (rv != APR_SUCCESS) {
        free(job);
        say(w, "DONE %" APR_UINT64_T_FMT " failed %s", id, pp_strerror(rv, msg, sizeof(msg)));
    }
}

/* fd becomes a descriptor of its own for the pipe, and what was fd a
 * harmless stand-in (to's descriptor, or /dev/null). */
static FILE *take_fd(int fd, const char *mode, int to)
{
    int mine = dup(fd);
    FILE *f;

    if (mine < 0 || !(f = fdopen(mine, mode)))
        return NULL;
    fcntl(mine, F_SETFD, FD_CLOEXEC);    /* not for what the plugins start */
    if (to < 0) {
        if ((to = open("/dev/null", O_RDWR)) < 0)
            return NULL;
        dup2(to, fd);
        close(to);
    }
    else {
        dup2(to, fd);
    }
    return f;
}

int svc_worker_main(const svc_engine_config_t *cfg, apr_pool_t *p)
{
    svc_engine_t *e;
    svc_sink_t sink;
    worker_t w;
    FILE *from_parent;
    sigset_t set;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);    /* a parent gone is a write error: say() ends */
    if (!(from_parent = take_fd(0, "r", -1)) || !(w.to_parent = take_fd(1, "w", 2))
        || apr_thread_mutex_create(&w.lock, APR_THREAD_MUTEX_DEFAULT, p) != APR_SUCCESS) {
        svc_logf(cfg->log, cfg->baton, PP_LOG_ERROR, "cannot set up its pipes");
        return 2;
    }
    sink.started = on_started;
    sink.output = on_output;
    sink.done = on_done;
    sink.baton = &w;
    /* Without a pollset: the only descriptor it waits on is its stdin. */
    if (svc_engine_local_create(&e, cfg, p) != APR_SUCCESS || e->ops->start(e, &sink, NULL)
        != APR_SUCCESS)
        return 2;    /* the engine said why */
    say_types(&w, e, p);
    while ((n = getline(&line, &cap, from_parent)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (strncmp(line, "RUN ", 4) == 0) {
            take_run(&w, e, line + 4, cfg);
        }
        else if (strcmp(line, "RELOAD") == 0) {
            e->ops->reload(e);
            say_types(&w, e, p);
        }
        else if (strncmp(line, "CANCEL ", 7) == 0) {
            e->ops->cancel(e, apr_time_from_msec(atol(line + 7)));
            /* Tasks that ignore their cancel may still run: leave without
             * waiting for them (or running exit handlers under them). */
            apr_thread_mutex_lock(w.lock);
            fflush(w.to_parent);
            _exit(0);
        }
        else {
            svc_logf(cfg->log, cfg->baton, PP_LOG_ERROR, "not a line from the service: %s",
                     line);
        }
    }
    free(line);
    e->ops->stop(e);    /* everything given runs and is answered */
    fclose(w.to_parent);
    return 0;
}
