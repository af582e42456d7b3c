/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service task loop (svc.h): one thread polls the listening socket and
 * the clients with an APR pollset, makes a job of each line (job.c),
 * answers it, and passes each job's outcome back to its client when the
 * engine hands it back (conn.c). The loop never waits for anything but
 * the poll: the engine (engine.h) takes every job at once, each client's
 * tasks in flight are bounded instead, and sockets are non-blocking.
 * svc_stop(), svc_reload() and a job's end wake it through
 * apr_pollset_wakeup(). Everything here is APR, so both hosts share it as
 * it is.
 */
#include "svc_private.h"
#include "listen.h"

#include <apr_atomic.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include <apr_strings.h>

#include <stdarg.h>
#include <string.h>

#define DEFAULT_MAX_CLIENTS   64
#define DEFAULT_MAX_INFLIGHT  256
#define DEFAULT_IDLE_TIMEOUT  apr_time_from_sec(60)
/* What the tasks still running when a drain times out get to stop. */
#define CANCEL_GRACE apr_time_from_sec(2)
/* The poll's longest sleep: idle clients are looked for this often. */
#define TICK apr_time_from_msec(500)

static void vlogf(svc_log_fn log, void *baton, int level, const char *fmt, va_list ap)
{
    char msg[1024];

    if (!log)
        return;
    apr_vsnprintf(msg, sizeof(msg), fmt, ap);
    log(level, msg, baton);
}

void svc_logf(svc_log_fn log, void *baton, int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlogf(log, baton, level, fmt, ap);
    va_end(ap);
}

void svc__log(const svc_t *svc, int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlogf(svc->cfg.log, svc->cfg.baton, level, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ the service */

apr_status_t svc_create(svc_t **out, const svc_config_t *cfg, apr_pool_t *parent)
{
    svc_t *svc;
    svc_listen_opts_t lo;
    svc_allow_t *allow;
    apr_status_t rv;
    int started = 1;
    char msg[256], why[768];

    if (!out || !cfg || !cfg->listen || !cfg->plugin_dir || !parent)
        return APR_EINVAL;
    svc = apr_pcalloc(parent, sizeof(*svc));
    svc->p = parent;
    svc->cfg = *cfg;
    if (!svc->cfg.max_clients)
        svc->cfg.max_clients = DEFAULT_MAX_CLIENTS;
    if (!svc->cfg.max_inflight)
        svc->cfg.max_inflight = DEFAULT_MAX_INFLIGHT;
    if (svc->cfg.idle_timeout <= 0)
        svc->cfg.idle_timeout = DEFAULT_IDLE_TIMEOUT;
    if (cfg->allow)
        svc->allow = cfg->allow;
    else if ((rv = svc_allow_create(&allow, parent)) == APR_SUCCESS)
        svc->allow = allow;
    else
        return rv;
    if (cfg->engine) {
        svc->engine = cfg->engine;
    }
    else {
        svc_engine_config_t ecfg;
        memset(&ecfg, 0, sizeof(ecfg));
        ecfg.plugin_dir = cfg->plugin_dir;
        ecfg.threads = cfg->threads;
        ecfg.log = cfg->log;
        ecfg.baton = cfg->baton;
        if ((rv = svc_engine_local_create(&svc->engine, &ecfg, parent)) != APR_SUCCESS)
            return rv;
    }
    rv = apr_thread_mutex_create(&svc->out_lock, APR_THREAD_MUTEX_DEFAULT, parent);
    if (rv == APR_SUCCESS)
        rv = apr_thread_mutex_create(&svc->wake_lock, APR_THREAD_MUTEX_DEFAULT, parent);
    if (rv == APR_SUCCESS)
        rv = apr_thread_mutex_create(&svc->done_lock, APR_THREAD_MUTEX_DEFAULT, parent);
    if (rv != APR_SUCCESS) {
        svc__log(svc, PP_LOG_ERROR, "cannot start: %s", pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    if (cfg->output) {
        rv = apr_file_open(&svc->out, cfg->output, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                           | APR_FOPEN_APPEND | APR_FOPEN_BINARY, APR_FPROT_OS_DEFAULT, parent);
        if (rv != APR_SUCCESS) {
            svc__log(svc, PP_LOG_ERROR, "cannot open %s: %s", cfg->output,
                     pp_strerror(rv, msg, sizeof(msg)));
            return rv;
        }
    }

    /* The listener before the engine: a service that cannot listen has
     * nothing to start workers for. */
    if (cfg->listener) {
        svc->listener = cfg->listener;    /* the service manager's: it removes the file */
    }
    else {
        lo.address = cfg->listen;
        lo.mode = cfg->socket_mode ? cfg->socket_mode : -1;
        lo.group = cfg->socket_group;
        lo.public_ok = svc_allow_explicit(svc->allow);
        rv = svc_listen_open(&svc->listener, &svc->unix_path, &lo, (int)svc->cfg.max_clients,
                             why, sizeof(why), parent);
        if (rv != APR_SUCCESS) {
            svc__log(svc, PP_LOG_ERROR, "%s", why);
            return rv;
        }
    }
    apr_socket_timeout_set(svc->listener, 0);    /* accept never waits */
    rv = apr_pollset_create(&svc->ps, svc->cfg.max_clients + 4, parent, APR_POLLSET_WAKEABLE);
    if (rv == APR_SUCCESS) {
        memset(&svc->lpfd, 0, sizeof(svc->lpfd));
        svc->lpfd.p = parent;
        svc->lpfd.desc_type = APR_POLL_SOCKET;
        svc->lpfd.reqevents = APR_POLLIN;
        svc->lpfd.desc.s = svc->listener;
        rv = apr_pollset_add(svc->ps, &svc->lpfd);
    }
    if (rv == APR_SUCCESS) {
        svc_sink_t sink;
        svc__job_sink(svc, &sink);
        /* The engine says itself why it could not start. */
        if ((rv = svc->engine->ops->start(svc->engine, &sink, svc->ps)) != APR_SUCCESS)
            started = 0;
    }
    if (rv != APR_SUCCESS) {
        if (started)
            svc__log(svc, PP_LOG_ERROR, "cannot start serving %s: %s", cfg->listen,
                     pp_strerror(rv, msg, sizeof(msg)));
        apr_socket_close(svc->listener);
        if (svc->unix_path)
            apr_file_remove(svc->unix_path, parent);
        return rv;
    }
    svc__log(svc, PP_LOG_INFO, "listening on %s; task types allowed: %s; at most %u clients, "
             "%u tasks in flight each, idle ones closed after %" APR_TIME_T_FMT " s", cfg->listen,
             svc_allow_describe(svc->allow, parent), svc->cfg.max_clients,
             svc->cfg.max_inflight, apr_time_sec(svc->cfg.idle_timeout));
    *out = svc;
    return APR_SUCCESS;
}

/* One turn of the loop: wait (at most timeout) for the sockets or a wake,
 * handle what came. */
static apr_status_t turn(svc_t *svc, apr_interval_time_t timeout, int accepting)
{
    const apr_pollfd_t *fds;
    apr_int32_t n = 0, i;
    apr_status_t rv;
    char msg[256];

    if (svc->engine_wait >= 0 && svc->engine_wait < timeout)
        timeout = svc->engine_wait;
    rv = apr_pollset_poll(svc->ps, timeout, &n, &fds);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EINTR(rv) && !APR_STATUS_IS_TIMEUP(rv)) {
        svc__log(svc, PP_LOG_ERROR, "poll: %s", pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    for (i = 0; i < n; i++) {
        if (fds[i].client_data == svc->engine)
            svc->engine->ops->event(svc->engine, &fds[i]);
        else if (fds[i].client_data)
            svc__conn_event(fds[i].client_data, fds[i].rtnevents);
        else if (accepting)
            svc__accept(svc);
    }
    svc->engine_wait = svc->engine->ops->tend(svc->engine);
    svc__jobs_collect(svc);
    svc__conns_tend(svc, accepting);
    return APR_SUCCESS;
}

apr_status_t svc_serve(svc_t *svc)
{
    apr_status_t rv = APR_SUCCESS;

    while (!apr_atomic_read32(&svc->stop)) {
        if (apr_atomic_xchg32(&svc->reload, 0))
            svc->engine->ops->reload(svc->engine);
        if ((rv = turn(svc, TICK, 1)) != APR_SUCCESS)
            break;
    }
    /* What a client sent after this was never answered "ok": it was not
     * accepted, and the client can tell. The answers still due go out
     * during the drain. */
    apr_pollset_remove(svc->ps, &svc->lpfd);
    apr_socket_close(svc->listener);
    if (svc->unix_path)
        apr_file_remove(svc->unix_path, svc->p);
    svc__log(svc, PP_LOG_INFO, "stopped listening: %" APR_UINT64_T_FMT " tasks accepted, %"
             APR_UINT64_T_FMT " refused", svc->accepted, svc->refused);
    return rv;
}

void svc__wake(svc_t *svc)
{
    /* A wake after the loop's end (a second SIGTERM, a job cancelled by
     * the drain's end) has nothing left to wake. */
    apr_thread_mutex_lock(svc->wake_lock);
    if (!svc->closed)
        apr_pollset_wakeup(svc->ps);
    apr_thread_mutex_unlock(svc->wake_lock);
}

void svc_stop(svc_t *svc)
{
    apr_atomic_set32(&svc->stop, 1);
    svc__wake(svc);
}

void svc_reload(svc_t *svc)
{
    apr_atomic_set32(&svc->reload, 1);
    svc__wake(svc);
}

/* Run the loop without reading or accepting until every job has ended
 * and been answered, or until deadline. */
static void deliver_until(svc_t *svc, apr_time_t deadline)
{
    for (;;) {
        apr_time_t now = apr_time_now();
        if (svc->inflight == 0 || now >= deadline)
            break;
        if (turn(svc, deadline - now < TICK ? deadline - now : TICK, 0) != APR_SUCCESS)
            break;
    }
}

apr_status_t svc_drain(svc_t *svc, apr_interval_time_t timeout, svc_counts_t *counts)
{
    apr_time_t deadline = timeout < 0 ? APR_INT64_MAX : apr_time_now() + timeout;
    apr_status_t rv = APR_SUCCESS;
    svc_engine_t *e = svc->engine;
    svc_conn *c, *next;

    /* The clients still hear how their tasks end while the engine drains. */
    deliver_until(svc, deadline);
    if (svc->inflight > 0) {
        /* Drop what is still queued (each answered cancelled) and give
         * the running tasks, told to stop, a last short while. */
        rv = APR_TIMEUP;
        e->ops->cancel(e, CANCEL_GRACE);
        deliver_until(svc, apr_time_now() + CANCEL_GRACE + apr_time_from_msec(500));
    }
    e->ops->stop(e);
    /* The last answers, as far as the clients take them now. */
    svc__jobs_collect(svc);
    svc__conns_tend(svc, 0);
    for (c = svc->conns; c; c = next) {
        next = c->next;
        svc__conn_close(c, NULL);
    }
    apr_thread_mutex_lock(svc->wake_lock);
    svc->closed = 1;
    apr_thread_mutex_unlock(svc->wake_lock);
    if (counts) {
        counts->accepted = svc->accepted;
        counts->refused = svc->refused;
        counts->done = svc->ok;
        counts->failed = svc->failed;
        counts->cancelled = svc->cancelled;
    }
    svc__log(svc, rv == APR_SUCCESS ? PP_LOG_INFO : PP_LOG_WARN,
             "%s: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT
             " cancelled, %" APR_UINT64_T_FMT " still running",
             rv == APR_SUCCESS ? "drained" : "drain timed out", svc->ok, svc->failed,
             svc->cancelled, svc->inflight);
    if (svc->out) {
        apr_thread_mutex_lock(svc->out_lock);
        if (apr_file_flush(svc->out) != APR_SUCCESS && !apr_atomic_xchg32(&svc->write_failed, 1))
            svc__log(svc, PP_LOG_ERROR, "cannot write results to %s: the results of this run "
                     "are incomplete", svc->cfg.output);
        apr_thread_mutex_unlock(svc->out_lock);
    }
    if (rv == APR_SUCCESS && apr_atomic_read32(&svc->write_failed))
        rv = APR_EGENERAL;
    return rv;
}
