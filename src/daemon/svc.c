/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service task loop (svc.h): one thread polls the listening socket and
 * the clients with an APR pollset, queues each line as a task, answers it,
 * and is woken by svc_stop()/svc_reload() through apr_pollset_wakeup().
 * Everything here is APR, so both hosts share it as it is.
 *
 * Lifetimes: the registries live in a pool created before the parkpool
 * pool's, so that however the parent pool goes, the workers drain and stop
 * before any plugin is unloaded (APR destroys subpools newest first).
 * A registry replaced by svc_reload() has its plugins unloaded at once
 * (pp_registry_unload): each one's code goes when the last task queued
 * before the reload that runs it ends, so old versions do not pile up;
 * the registry itself (its names, a few KiB) stays until the end.
 */
#include "svc.h"
#include "listen.h"

#include <apr_atomic.h>
#include <apr_file_io.h>
#include <apr_network_io.h>
#include <apr_poll.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <stdarg.h>
#include <string.h>

#define MAX_CLIENTS 64
#define MAX_LINE    65536

typedef struct client {
    apr_pool_t   *p;
    apr_socket_t *sock;
    apr_pollfd_t  pfd;
    char         *buf;
    apr_size_t    len;
} client;

struct svc_t {
    apr_pool_t         *p;
    svc_config_t        cfg;
    apr_pool_t         *regs_p;     /* every registry, oldest first */
    pp_registry_t      *reg;        /* the current one; the loop's thread only */
    pp_pool_t          *pool;
    const svc_allow_t  *allow;
    apr_socket_t       *listener;
    const char         *unix_path;  /* removed when the service stops */
    apr_pollset_t      *ps;
    apr_uint32_t        nclients;
    apr_thread_mutex_t *out_lock;
    apr_file_t         *out;
    volatile apr_uint32_t stop, reload;
    apr_thread_mutex_t *wake_lock;  /* svc_stop/svc_reload vs. the pollset's end */
    int                 closed;     /* under wake_lock: no pollset to wake */
    apr_uint64_t        accepted, refused;
};

static void svc_log(const svc_t *svc, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void svc_log(const svc_t *svc, int level, const char *fmt, ...)
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

static void on_output(const char *line, const char *task_name, void *baton)
{
    svc_t *svc = baton;

    if (!svc->out) {
        svc_log(svc, PP_LOG_INFO, "%s: %s", task_name, line);
        return;
    }
    /* Whole lines, one task's line never cut by another's. */
    apr_thread_mutex_lock(svc->out_lock);
    apr_file_write_full(svc->out, line, strlen(line), NULL);
    apr_file_write_full(svc->out, "\n", 1, NULL);
    apr_thread_mutex_unlock(svc->out_lock);
}

static void on_task_error(apr_status_t status, const char *task_name, void *baton)
{
    char msg[256];

    svc_log(baton, status == PP_ECANCELLED ? PP_LOG_INFO : PP_LOG_WARN, "task %s %s: %s",
            task_name, status == PP_ECANCELLED ? "cancelled" : "failed",
            pp_strerror(status, msg, sizeof(msg)));
}

static void on_pool_log(int level, const char *message, void *baton)
{
    svc_log(baton, level, "pool: %s", message);
}

/* ------------------------------------------------------------ plugins */

static apr_status_t load_registry(svc_t *svc, pp_registry_t **out)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    char err[8192], *line, *last;
    apr_status_t rv;

    apr_pool_create(&p, svc->regs_p);
    rv = pp_registry_create(&reg, p);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(p);
        return rv;
    }
    err[0] = '\0';
    rv = pp_registry_load_dir(reg, svc->cfg.plugin_dir, err, sizeof(err));
    for (line = apr_strtok(err, "\n", &last); line; line = apr_strtok(NULL, "\n", &last))
        svc_log(svc, PP_LOG_WARN, "plugins: %s", line);
    if (pp_registry_count(reg) == 0) {
        /* A folder gone or emptied by mistake must not leave the service
         * unable to run anything: the caller keeps what it had. */
        apr_pool_destroy(p);
        return rv != APR_SUCCESS ? rv : PP_ENOTYPE;
    }
    svc_log(svc, PP_LOG_INFO, "plugins: %" APR_SIZE_T_FMT " task types from %s",
            pp_registry_count(reg), svc->cfg.plugin_dir);
    *out = reg;
    return APR_SUCCESS;
}

/* Unload every plugin of reg, which no new task will name: each type
 * found names its plugin, whose unload takes all of its types along. */
static void unload_all(svc_t *svc, pp_registry_t *reg)
{
    apr_size_t unloaded = 0;

    while (pp_registry_count(reg) > 0) {
        const pp_plugin_info_t *info = pp_registry_owner(reg, pp_registry_type(reg, 0));
        if (!info || pp_registry_unload(reg, info->name) != APR_SUCCESS)
            break;
        unloaded++;
    }
    svc_log(svc, PP_LOG_INFO, "plugins: %" APR_SIZE_T_FMT " old plugin%s unloaded (each once "
            "its last task ends)", unloaded, unloaded == 1 ? "" : "s");
}

static void do_reload(svc_t *svc)
{
    pp_registry_t *reg, *old = svc->reg;
    char msg[256];
    apr_status_t rv = load_registry(svc, &reg);

    if (rv != APR_SUCCESS) {
        svc_log(svc, PP_LOG_ERROR, "reload of %s failed (%s): the old plugins stay",
                svc->cfg.plugin_dir, pp_strerror(rv, msg, sizeof(msg)));
        return;
    }
    svc->reg = reg;
    if (old)
        unload_all(svc, old);
}

/* ------------------------------------------------------------ sockets */

static void reply(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reply(client *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    apr_size_t n;

    va_start(ap, fmt);
    n = (apr_size_t)apr_vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    buf[n++] = '\n';
    apr_socket_send(c->sock, buf, &n);    /* a client gone is seen at its next read */
}

static void drop_client(svc_t *svc, client *c)
{
    apr_pollset_remove(svc->ps, &c->pfd);
    apr_socket_close(c->sock);
    apr_pool_destroy(c->p);
    svc->nclients--;
}

static void accept_client(svc_t *svc)
{
    apr_pool_t *p;
    apr_socket_t *sock;
    client *c;

    apr_pool_create(&p, svc->p);
    if (apr_socket_accept(&sock, svc->listener, p) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return;
    }
    c = apr_pcalloc(p, sizeof(*c));
    c->p = p;
    c->sock = sock;
    /* Reads only follow the poll, so they never wait; the timeout bounds
     * an answer to a client that stopped reading. */
    apr_socket_timeout_set(sock, apr_time_from_sec(5));
    if (svc->nclients >= MAX_CLIENTS) {
        reply(c, "error: too many clients");
        apr_socket_close(sock);
        apr_pool_destroy(p);
        return;
    }
    c->buf = apr_palloc(p, MAX_LINE + 1);
    c->pfd.p = p;
    c->pfd.desc_type = APR_POLL_SOCKET;
    c->pfd.reqevents = APR_POLLIN;
    c->pfd.desc.s = sock;
    c->pfd.client_data = c;
    if (apr_pollset_add(svc->ps, &c->pfd) != APR_SUCCESS) {
        apr_socket_close(sock);
        apr_pool_destroy(p);
        return;
    }
    svc->nclients++;
}

/* line: len bytes ending in its LF, with a NUL after them. The grammar is
 * the tool's (pp_job_line_split): ARG exactly as the client wrote it. */
static void handle_line(svc_t *svc, client *c, char *line, apr_size_t len)
{
    char *type, *arg, msg[256];
    const pp_task_type_t *similar;
    apr_status_t rv;

    if (memchr(line, '\0', len)) {
        svc->refused++;
        reply(c, "error: a NUL byte in the line");
        return;
    }
    rv = pp_job_line_split(line, &type, &arg);
    if (rv == APR_EOF)
        return;
    if (rv != APR_SUCCESS) {
        svc->refused++;
        reply(c, "error: expected 'TYPE ARG', got '%s'", type);
        return;
    }
    if (!svc_allow_permits(svc->allow, type)) {
        svc->refused++;
        reply(c, "error: task type '%s' is not allowed here (parkpoold --allow)", type);
        return;
    }
    rv = pp_submit_named(svc->pool, svc->reg, type, arg, NULL);
    if (rv == APR_SUCCESS) {
        reply(c, "ok %" APR_UINT64_T_FMT, ++svc->accepted);
        return;
    }
    svc->refused++;
    if (rv != PP_ENOTYPE)
        reply(c, "error: %s %s: %s", type, arg, pp_strerror(rv, msg, sizeof(msg)));
    else if ((similar = pp_registry_suggest(svc->reg, type)) != NULL)
        reply(c, "error: unknown task type '%s' (did you mean '%s'?)", type, similar->name);
    else
        reply(c, "error: unknown task type '%s'", type);
}

static void read_client(svc_t *svc, client *c)
{
    apr_size_t n = MAX_LINE - c->len, start = 0, i;
    apr_status_t rv = apr_socket_recv(c->sock, c->buf + c->len, &n);

    if (n == 0 && rv != APR_SUCCESS) {
        drop_client(svc, c);    /* EOF or an error: either way it is gone */
        return;
    }
    for (i = c->len; i < c->len + n; i++) {
        char after;
        if (c->buf[i] != '\n')
            continue;
        /* buf has a byte to spare past MAX_LINE for this NUL. */
        after = c->buf[i + 1];
        c->buf[i + 1] = '\0';
        handle_line(svc, c, c->buf + start, i + 1 - start);
        c->buf[i + 1] = after;
        start = i + 1;
    }
    c->len += n;
    memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
    if (c->len == MAX_LINE) {
        reply(c, "error: line longer than %d bytes", MAX_LINE);
        drop_client(svc, c);
    }
}

/* ------------------------------------------------------------ the service */

apr_status_t svc_create(svc_t **out, const svc_config_t *cfg, apr_pool_t *parent)
{
    svc_t *svc;
    pp_config_t pcfg;
    svc_listen_opts_t lo;
    svc_allow_t *allow;
    apr_pollfd_t pfd;
    apr_status_t rv;
    char msg[256], why[768];

    if (!out || !cfg || !cfg->listen || !cfg->plugin_dir || !parent)
        return APR_EINVAL;
    svc = apr_pcalloc(parent, sizeof(*svc));
    svc->p = parent;
    svc->cfg = *cfg;
    if (cfg->allow)
        svc->allow = cfg->allow;
    else if ((rv = svc_allow_create(&allow, parent)) == APR_SUCCESS)
        svc->allow = allow;
    else
        return rv;
    /* Before the pool's own pool: see the top of this file. */
    apr_pool_create(&svc->regs_p, parent);
    rv = load_registry(svc, &svc->reg);
    if (rv != APR_SUCCESS) {
        svc_log(svc, PP_LOG_ERROR, "no plugins in %s: %s", cfg->plugin_dir,
                pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    rv = apr_thread_mutex_create(&svc->out_lock, APR_THREAD_MUTEX_DEFAULT, parent);
    if (rv == APR_SUCCESS)
        rv = apr_thread_mutex_create(&svc->wake_lock, APR_THREAD_MUTEX_DEFAULT, parent);
    if (rv == APR_SUCCESS && cfg->output)
        rv = apr_file_open(&svc->out, cfg->output, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                           | APR_FOPEN_APPEND | APR_FOPEN_BINARY, APR_FPROT_OS_DEFAULT, parent);
    if (rv != APR_SUCCESS) {
        svc_log(svc, PP_LOG_ERROR, "cannot open %s: %s", cfg->output,
                pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }

    pp_config_init(&pcfg);
    pcfg.threads = cfg->threads;
    pcfg.name_prefix = "ppsvc";
    /* Backpressure: a full queue holds the answer back, not the memory. */
    pcfg.queue_capacity = 1024;
    pcfg.on_output = on_output;
    pcfg.on_task_error = on_task_error;
    pcfg.on_log = on_pool_log;
    pcfg.baton = svc;
    rv = pp_pool_create(&svc->pool, &pcfg, parent);
    if (rv != APR_SUCCESS) {
        svc_log(svc, PP_LOG_ERROR, "cannot start the pool: %s", pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }

    lo.address = cfg->listen;
    lo.mode = cfg->socket_mode ? cfg->socket_mode : -1;
    lo.group = cfg->socket_group;
    lo.public_ok = svc_allow_explicit(svc->allow);
    rv = svc_listen_open(&svc->listener, &svc->unix_path, &lo, MAX_CLIENTS, why, sizeof(why),
                         parent);
    if (rv != APR_SUCCESS) {
        svc_log(svc, PP_LOG_ERROR, "%s", why);
        pp_pool_shutdown(svc->pool, PP_CANCEL, -1);
        return rv;
    }
    rv = apr_pollset_create(&svc->ps, MAX_CLIENTS + 1, parent, APR_POLLSET_WAKEABLE);
    if (rv == APR_SUCCESS) {
        memset(&pfd, 0, sizeof(pfd));
        pfd.p = parent;
        pfd.desc_type = APR_POLL_SOCKET;
        pfd.reqevents = APR_POLLIN;
        pfd.desc.s = svc->listener;
        rv = apr_pollset_add(svc->ps, &pfd);
    }
    if (rv != APR_SUCCESS) {
        svc_log(svc, PP_LOG_ERROR, "cannot listen on %s: %s", cfg->listen,
                pp_strerror(rv, msg, sizeof(msg)));
        apr_socket_close(svc->listener);
        if (svc->unix_path)
            apr_file_remove(svc->unix_path, parent);
        pp_pool_shutdown(svc->pool, PP_CANCEL, -1);
        return rv;
    }
    svc_log(svc, PP_LOG_INFO, "listening on %s; task types allowed: %s", cfg->listen,
            svc_allow_describe(svc->allow, parent));
    *out = svc;
    return APR_SUCCESS;
}

apr_status_t svc_serve(svc_t *svc)
{
    const apr_pollfd_t *fds;
    apr_int32_t n, i;
    apr_status_t rv = APR_SUCCESS;
    char msg[256];

    while (!apr_atomic_read32(&svc->stop)) {
        if (apr_atomic_xchg32(&svc->reload, 0))
            do_reload(svc);
        rv = apr_pollset_poll(svc->ps, -1, &n, &fds);
        if (APR_STATUS_IS_EINTR(rv)) {    /* apr_pollset_wakeup(), or a signal */
            rv = APR_SUCCESS;
            continue;
        }
        if (rv != APR_SUCCESS) {
            svc_log(svc, PP_LOG_ERROR, "poll: %s", pp_strerror(rv, msg, sizeof(msg)));
            break;
        }
        for (i = 0; i < n; i++) {
            if (fds[i].client_data)
                read_client(svc, fds[i].client_data);
            else
                accept_client(svc);
        }
    }
    /* Whatever a client sent after this was never answered "ok": it was
     * not accepted, and the client can tell. */
    apr_thread_mutex_lock(svc->wake_lock);
    svc->closed = 1;
    apr_thread_mutex_unlock(svc->wake_lock);
    apr_pollset_destroy(svc->ps);
    apr_socket_close(svc->listener);
    if (svc->unix_path)
        apr_file_remove(svc->unix_path, svc->p);
    svc_log(svc, PP_LOG_INFO, "stopped listening: %" APR_UINT64_T_FMT " tasks accepted, %"
            APR_UINT64_T_FMT " refused", svc->accepted, svc->refused);
    return rv;
}

static void wake(svc_t *svc)
{
    /* A stop or reload that comes after the loop ended (a second SIGTERM
     * during the drain) has nothing left to wake. */
    apr_thread_mutex_lock(svc->wake_lock);
    if (!svc->closed)
        apr_pollset_wakeup(svc->ps);
    apr_thread_mutex_unlock(svc->wake_lock);
}

void svc_stop(svc_t *svc)
{
    apr_atomic_set32(&svc->stop, 1);
    wake(svc);
}

void svc_reload(svc_t *svc)
{
    apr_atomic_set32(&svc->reload, 1);
    wake(svc);
}

apr_status_t svc_drain(svc_t *svc, apr_interval_time_t timeout, svc_counts_t *counts)
{
    apr_status_t rv = pp_pool_shutdown(svc->pool, PP_DRAIN, timeout);
    pp_stats_t st;

    if (rv == APR_TIMEUP) {
        /* Drop what is still queued (each reported as cancelled) and give
         * the running tasks, told to stop, a last short while. */
        rv = pp_pool_shutdown(svc->pool, PP_CANCEL, apr_time_from_sec(2));
        if (rv == APR_SUCCESS)
            rv = APR_TIMEUP;
    }
    pp_pool_stats(svc->pool, &st);
    if (counts) {
        counts->accepted = svc->accepted;
        counts->refused = svc->refused;
        counts->done = st.completed;
        counts->failed = st.failed;
        counts->cancelled = st.cancelled;
    }
    svc_log(svc, rv == APR_SUCCESS ? PP_LOG_INFO : PP_LOG_WARN,
            "%s: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT
            " cancelled, %" APR_UINT64_T_FMT " still running",
            rv == APR_SUCCESS ? "drained" : "drain timed out", st.completed, st.failed,
            st.cancelled, st.running);
    if (svc->out)
        apr_file_flush(svc->out);
    return rv;
}

/* ------------------------------------------------------------ the client */

static apr_status_t read_reply(apr_socket_t *s, char *buf, apr_size_t size)
{
    apr_size_t len = 0;

    while (len + 1 < size) {
        apr_size_t n = 1;
        apr_status_t rv = apr_socket_recv(s, buf + len, &n);
        if (n == 0)
            return rv != APR_SUCCESS ? rv : APR_EOF;
        if (buf[len] == '\n')
            break;
        len++;
    }
    buf[len] = '\0';
    return APR_SUCCESS;
}

apr_status_t svc_send(const char *address, FILE *in, FILE *out, apr_pool_t *p)
{
    apr_sockaddr_t *sa;
    apr_socket_t *s;
    const char *unix_path;
    char *line = apr_palloc(p, MAX_LINE + 2), answer[1024];
    apr_status_t rv, result = APR_SUCCESS;

    rv = svc_address_parse(&sa, &unix_path, address, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_create(&s, sa->family, SOCK_STREAM, unix_path ? 0 : APR_PROTO_TCP, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_timeout_set(s, apr_time_from_sec(60));
    if (rv == APR_SUCCESS)
        rv = apr_socket_connect(s, sa);
    if (rv != APR_SUCCESS)
        return rv;
    /* One line, one answer, in order: the answers say what was accepted. */
    while (fgets(line, MAX_LINE, in)) {
        apr_size_t len = strlen(line);
        char *copy, *type, *arg;

        /* Lines that hold no task get no answer: skip them here, by the
         * service's own grammar. */
        copy = apr_pstrmemdup(p, line, len);
        if (pp_job_line_split(copy, &type, &arg) == APR_EOF)
            continue;
        if (!len || line[len - 1] != '\n')
            line[len++] = '\n';
        rv = apr_socket_send(s, line, &len);
        if (rv == APR_SUCCESS)
            rv = read_reply(s, answer, sizeof(answer));
        if (rv != APR_SUCCESS) {
            result = rv;
            break;
        }
        fprintf(out, "%s\n", answer);
        if (strncmp(answer, "ok ", 3) != 0)
            result = APR_EGENERAL;
    }
    fflush(out);
    apr_socket_close(s);
    return result;
}
