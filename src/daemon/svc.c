/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service task loop (svc.h): one thread polls the listening socket and
 * the clients with an APR pollset, makes a job of each line (job.c),
 * answers it, and passes each job's outcome back to its client when a
 * worker hands it back (conn.c). The loop never waits for anything but
 * the poll: the pool is unbounded, each client's tasks in flight are
 * bounded instead, and sockets are non-blocking. svc_stop(), svc_reload()
 * and a job's end wake it through apr_pollset_wakeup(). Everything here
 * is APR, so both hosts share it as it is.
 *
 * Lifetimes: the registries live in a pool created before the parkpool
 * pool's, so that however the parent pool goes, the workers drain and stop
 * before any plugin is unloaded (APR destroys subpools newest first).
 * A registry replaced by svc_reload() is destroyed (its plugins unloaded,
 * its memory freed) when the last job that uses its types has ended, so
 * reloads under load neither run old code for new tasks nor pile up.
 */
#include "svc_private.h"
#include "listen.h"
#include "plugin/task_root.h"

#include <apr_atomic.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include <apr_strings.h>

#include <stdarg.h>
#include <string.h>

#define DEFAULT_MAX_CLIENTS   64
#define DEFAULT_MAX_INFLIGHT  256
#define DEFAULT_IDLE_TIMEOUT  apr_time_from_sec(60)
/* The poll's longest sleep: idle clients are looked for this often. */
#define TICK apr_time_from_msec(500)

void svc__log(const svc_t *svc, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!svc->cfg.log)
        return;
    va_start(ap, fmt);
    apr_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    svc->cfg.log(level, msg, svc->cfg.baton);
}

/* ------------------------------------------------------------ pool hooks */

static void on_task_error(apr_status_t status, const char *task_name, void *baton)
{
    char msg[256];

    svc__log(baton, status == PP_ECANCELLED ? PP_LOG_INFO : PP_LOG_WARN, "task %s %s: %s",
             task_name, status == PP_ECANCELLED ? "cancelled" : "failed",
             pp_strerror(status, msg, sizeof(msg)));
}

static void on_pool_log(int level, const char *message, void *baton)
{
    svc__log(baton, level, "pool: %s", message);
}

/* ------------------------------------------------------------ plugins */

static apr_status_t load_gen(svc_t *svc, svc_gen **out)
{
    apr_pool_t *p;
    svc_gen *gen;
    char err[8192], *line, *last;
    apr_status_t rv;

    apr_pool_create(&p, svc->regs_p);
    gen = apr_pcalloc(p, sizeof(*gen));
    gen->p = p;
    rv = pp_registry_create(&gen->reg, p);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(p);
        return rv;
    }
    err[0] = '\0';
    rv = pp_registry_load_dir(gen->reg, svc->cfg.plugin_dir, err, sizeof(err));
    for (line = apr_strtok(err, "\n", &last); line; line = apr_strtok(NULL, "\n", &last))
        svc__log(svc, PP_LOG_WARN, "plugins: %s", line);
    if (pp_registry_count(gen->reg) == 0) {
        /* A folder gone or emptied by mistake must not leave the service
         * unable to run anything: the caller keeps what it had. */
        apr_pool_destroy(p);
        return rv != APR_SUCCESS ? rv : PP_ENOTYPE;
    }
    svc__log(svc, PP_LOG_INFO, "plugins: %" APR_SIZE_T_FMT " task types from %s",
             pp_registry_count(gen->reg), svc->cfg.plugin_dir);
    *out = gen;
    return APR_SUCCESS;
}

/* Each plugin of reg, "name version", keyed by name. */
static apr_hash_t *plugins_of(pp_registry_t *reg, apr_pool_t *p)
{
    apr_hash_t *h = apr_hash_make(p);
    apr_size_t i;

    for (i = 0; i < pp_registry_count(reg); i++) {
        const pp_plugin_info_t *info = pp_registry_owner(reg, pp_registry_type(reg, i));
        if (info && info->name)
            apr_hash_set(h, info->name, APR_HASH_KEY_STRING,
                         info->version ? info->version : "?");
    }
    return h;
}

/* Log what a reload changed: plugins added, gone, or of another version. */
static void log_changes(svc_t *svc, pp_registry_t *old, pp_registry_t *now)
{
    apr_pool_t *p;
    apr_hash_t *before, *after;
    apr_hash_index_t *hi;
    const char *said = "";

    apr_pool_create(&p, svc->p);
    before = plugins_of(old, p);
    after = plugins_of(now, p);
    for (hi = apr_hash_first(p, after); hi; hi = apr_hash_next(hi)) {
        const char *name = apr_hash_this_key(hi), *version = apr_hash_this_val(hi);
        const char *was = apr_hash_get(before, name, APR_HASH_KEY_STRING);
        if (!was)
            said = apr_psprintf(p, "%s, %s %s added", said, name, version);
        else if (strcmp(was, version) != 0)
            said = apr_psprintf(p, "%s, %s %s -> %s", said, name, was, version);
    }
    for (hi = apr_hash_first(p, before); hi; hi = apr_hash_next(hi))
        if (!apr_hash_get(after, apr_hash_this_key(hi), APR_HASH_KEY_STRING))
            said = apr_psprintf(p, "%s, %s removed", said, (const char *)apr_hash_this_key(hi));
    svc__log(svc, PP_LOG_INFO, "reload: %s", *said ? said + 2 : "no plugin added, removed or "
             "of another version (each loaded again from its file)");
    apr_pool_destroy(p);
}

/* Destroying the registry's pool unloads its plugins: no job of it is
 * queued or running any more. */
static void drop_gen(svc_t *svc, svc_gen *gen)
{
    svc__log(svc, PP_LOG_INFO, "plugins: the old load unloaded");
    apr_pool_destroy(gen->p);
}

void svc__gen_release(svc_t *svc, svc_gen *gen)
{
    if (--gen->inflight == 0 && gen->retired)
        drop_gen(svc, gen);
}

static void do_reload(svc_t *svc)
{
    svc_gen *gen, *old = svc->gen;
    char msg[256];
    apr_status_t rv = load_gen(svc, &gen);

    if (rv != APR_SUCCESS) {
        svc__log(svc, PP_LOG_ERROR, "reload of %s failed (%s): the old plugins stay",
                 svc->cfg.plugin_dir, pp_strerror(rv, msg, sizeof(msg)));
        return;
    }
    log_changes(svc, old->reg, gen->reg);
    svc->gen = gen;
    old->retired = 1;
    if (old->inflight == 0)
        drop_gen(svc, old);
    else
        svc__log(svc, PP_LOG_INFO, "plugins: the old load stays for its %" APR_UINT64_T_FMT
                 " task%s in flight", old->inflight, old->inflight == 1 ? "" : "s");
}

/* ------------------------------------------------------------ the service */

apr_status_t svc_create(svc_t **out, const svc_config_t *cfg, apr_pool_t *parent)
{
    svc_t *svc;
    pp_config_t pcfg;
    svc_listen_opts_t lo;
    svc_allow_t *allow;
    apr_status_t rv;
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
    /* Before the pool's own pool: see the top of this file. */
    apr_pool_create(&svc->regs_p, parent);
    rv = load_gen(svc, &svc->gen);
    if (rv != APR_SUCCESS) {
        svc__log(svc, PP_LOG_ERROR, "no plugins in %s: %s", cfg->plugin_dir,
                 pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    rv = pp__task_root_create(&svc->task_root, parent);
    if (rv == APR_SUCCESS)
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

    /* The listener before the pool: a service that cannot listen has
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
    rv = apr_pollset_create(&svc->ps, svc->cfg.max_clients + 2, parent, APR_POLLSET_WAKEABLE);
    if (rv == APR_SUCCESS) {
        memset(&svc->lpfd, 0, sizeof(svc->lpfd));
        svc->lpfd.p = parent;
        svc->lpfd.desc_type = APR_POLL_SOCKET;
        svc->lpfd.reqevents = APR_POLLIN;
        svc->lpfd.desc.s = svc->listener;
        rv = apr_pollset_add(svc->ps, &svc->lpfd);
    }
    if (rv == APR_SUCCESS) {
        pp_config_init(&pcfg);
        pcfg.threads = cfg->threads;
        pcfg.name_prefix = "ppsvc";
        pcfg.on_output = svc__job_output;
        pcfg.on_task_error = on_task_error;
        pcfg.on_log = on_pool_log;
        pcfg.baton = svc;
        rv = pp_pool_create(&svc->pool, &pcfg, parent);
    }
    if (rv != APR_SUCCESS) {
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

    rv = apr_pollset_poll(svc->ps, timeout, &n, &fds);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EINTR(rv) && !APR_STATUS_IS_TIMEUP(rv)) {
        svc__log(svc, PP_LOG_ERROR, "poll: %s", pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    for (i = 0; i < n; i++) {
        if (fds[i].client_data)
            svc__conn_event(fds[i].client_data, fds[i].rtnevents);
        else if (accepting)
            svc__accept(svc);
    }
    svc__jobs_collect(svc);
    svc__conns_tend(svc, accepting);
    return APR_SUCCESS;
}

apr_status_t svc_serve(svc_t *svc)
{
    apr_status_t rv = APR_SUCCESS;

    while (!apr_atomic_read32(&svc->stop)) {
        if (apr_atomic_xchg32(&svc->reload, 0))
            do_reload(svc);
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
    apr_status_t rv;
    pp_stats_t st;
    svc_conn *c, *next;

    /* The clients still hear how their tasks end while the pool drains. */
    deliver_until(svc, deadline);
    if (svc->inflight == 0) {
        rv = pp_pool_shutdown(svc->pool, PP_DRAIN, -1);    /* nothing left: the workers go */
    }
    else {
        /* Drop what is still queued (each reported as cancelled) and give
         * the running tasks, told to stop, a last short while. */
        rv = pp_pool_shutdown(svc->pool, PP_CANCEL, apr_time_from_sec(2));
        if (rv == APR_SUCCESS)
            rv = APR_TIMEUP;
        deliver_until(svc, apr_time_now() + apr_time_from_msec(500));
    }
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
    pp_pool_stats(svc->pool, &st);
    if (counts) {
        counts->accepted = svc->accepted;
        counts->refused = svc->refused;
        counts->done = st.completed;
        counts->failed = st.failed;
        counts->cancelled = st.cancelled;
    }
    svc__log(svc, rv == APR_SUCCESS ? PP_LOG_INFO : PP_LOG_WARN,
             "%s: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT
             " cancelled, %" APR_UINT64_T_FMT " still running",
             rv == APR_SUCCESS ? "drained" : "drain timed out", st.completed, st.failed,
             st.cancelled, st.running);
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
