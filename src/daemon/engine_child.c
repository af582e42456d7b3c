/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine that runs tasks in a worker process (engine.h): the plugins
 * are loaded there, never here, so a task that crashes ends only that
 * process. The service answers each task it had given it "failed: worker
 * crashed (signal N)", logs which task types were running, and starts
 * another, waiting 0.1 s after a crash, twice as long after each crash
 * that follows within a minute of a start, at most 10 s.
 *
 * The lines both ways are worker.c's. Everything here runs on the loop's
 * thread: the worker's pipes are in the loop's pollset (non-blocking on
 * this side), what is to be written waits in a buffer, and the sink is
 * called from here. The worker never waits for the loop except in a full
 * pipe: the loop reads it at every turn, and a worker's lines are bounded
 * (SVC_WORKER_MAX_OUT), so neither side can make the other wait for ever.
 * What the loop sends it is bounded by the jobs in flight, which the
 * service bounds per client.
 */
#include "engine.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define LOG(e, level, ...) svc_logf((e)->cfg.log, (e)->cfg.baton, level, __VA_ARGS__)

#define BACKOFF_FIRST  apr_time_from_msec(100)
#define BACKOFF_MAX    apr_time_from_sec(10)
/* A worker up this long has earned its successor a quick start. */
#define BACKOFF_RESET  apr_time_from_sec(60)
/* How long a worker may take to load its plugins and say so. */
#define START_LIMIT    apr_time_from_sec(60)
/* How long a worker told to end (its stdin closed) may take to. */
#define STOP_LIMIT     apr_time_from_sec(5)
#define MAX_LINE_IN    (SVC_WORKER_MAX_OUT + 64)
#define READ_TURN      (1024 * 1024)

/* A job given to the worker, until its DONE (or the worker's end). */
typedef struct rec_t {
    void        *job;
    apr_uint64_t id;
    int          started;
    char         type[];
} rec_t;

typedef struct child_t {
    svc_engine_t          base;
    apr_pool_t           *p;
    svc_engine_config_t   cfg;
    const char *const    *argv;
    svc_sink_t            sink;
    apr_pollset_t        *ps;
    /* The worker now: its pool holds the process record and the pipes. */
    apr_pool_t           *proc_p;
    apr_proc_t            proc;
    int                   up;
    int                   writing;     /* wpfd is in the pollset */
    apr_pollfd_t          rpfd, wpfd;
    apr_time_t            born;
    char                 *wbuf;        /* lines for it (malloc'd) */
    apr_size_t            woff, wlen, wcap;
    char                 *rbuf;        /* a partial line from it (malloc'd) */
    apr_size_t            rlen, rcap;
    apr_hash_t           *recs;        /* id -> rec_t (malloc'd) */
    /* Stand-ins for the types its last TYPES named. */
    apr_pool_t           *types_p;
    pp_registry_t        *types;
    apr_interval_time_t   backoff;
    apr_time_t            restart_at;  /* 0: no start due */
    int                   stopping;
    char                  last_end[64]; /* how the last worker ended */
} child_t;

static apr_status_t spawn(child_t *e);

/* ------------------------------------------------------------ to it */

static void write_some(child_t *e)
{
    apr_status_t rv;
    apr_size_t n;

    while (e->up && e->woff < e->wlen) {
        n = e->wlen - e->woff;
        rv = apr_file_write(e->proc.in, e->wbuf + e->woff, &n);
        e->woff += n;
        if (rv != APR_SUCCESS)
            break;    /* full (EAGAIN), or gone: its stdout's end says so */
    }
    if (e->woff == e->wlen)
        e->woff = e->wlen = 0;
    if (!e->ps)
        return;    /* not in the loop's pollset (yet, or any more) */
    if (e->up && !e->writing && e->wlen) {
        apr_pollset_add(e->ps, &e->wpfd);
        e->writing = 1;
    }
    else if (e->writing && !e->wlen) {
        apr_pollset_remove(e->ps, &e->wpfd);
        e->writing = 0;
    }
}

/* Queue a line of n words (given without its LF); sent as the pipe
 * takes it. */
static apr_status_t queue_line(child_t *e, const char *const *words, int n)
{
    apr_size_t need = e->wlen - e->woff + 1, len;
    int i;

    for (i = 0; i < n; i++)
        need += strlen(words[i]) + 1;
    if (e->woff) {    /* what was sent makes room first */
        memmove(e->wbuf, e->wbuf + e->woff, e->wlen - e->woff);
        e->wlen -= e->woff;
        e->woff = 0;
    }
    if (need > e->wcap) {
        apr_size_t cap = e->wcap ? e->wcap : 4096;
        char *grown;
        while (cap < need)
            cap *= 2;
        if (!(grown = realloc(e->wbuf, cap)))
            return APR_ENOMEM;
        e->wbuf = grown;
        e->wcap = cap;
    }
    for (i = 0; i < n; i++) {
        len = strlen(words[i]);
        memcpy(e->wbuf + e->wlen, words[i], len);
        e->wlen += len;
        e->wbuf[e->wlen++] = i + 1 < n ? ' ' : '\n';
    }
    write_some(e);
    return APR_SUCCESS;
}

/* ------------------------------------------------------------ its end */

/* What its signal or status says. */
static void describe_end(char *buf, apr_size_t size, int code, apr_exit_why_e why)
{
    if (APR_PROC_CHECK_SIGNALED(why))
        apr_snprintf(buf, size, "crashed (signal %d%s)", code,
                     APR_PROC_CHECK_CORE_DUMP(why) ? ", core dumped" : "");
    else
        apr_snprintf(buf, size, "exited (status %d)", code);
}

/* The worker has ended, or must: reap it, answer every job it had, and
 * (unless the service is stopping) start another after the backoff. */
static void worker_gone(child_t *e)
{
    apr_pool_t *tmp;
    apr_hash_t *running;
    apr_hash_index_t *hi;
    const char *types = "";
    char end[80];
    apr_exit_why_e why;
    apr_size_t njobs = 0;
    apr_time_t now = apr_time_now();
    int code;

    if (!e->up)
        return;
    e->up = 0;
    apr_pool_create(&tmp, e->p);
    /* Its stdout closed: it is gone or going; make sure, then reap it. */
    apr_proc_kill(&e->proc, SIGKILL);
    apr_proc_wait(&e->proc, &code, &why, APR_WAIT);
    describe_end(e->last_end, sizeof(e->last_end), code, why);
    apr_snprintf(end, sizeof(end), "worker %s", e->last_end);
    if (e->ps) {
        apr_pollset_remove(e->ps, &e->rpfd);
        if (e->writing)
            apr_pollset_remove(e->ps, &e->wpfd);
    }
    e->writing = 0;
    apr_pool_destroy(e->proc_p);    /* the pipes */
    e->proc_p = NULL;
    e->woff = e->wlen = e->rlen = 0;

    running = apr_hash_make(tmp);
    for (hi = apr_hash_first(tmp, e->recs); hi; hi = apr_hash_next(hi)) {
        rec_t *r = apr_hash_this_val(hi);
        if (r->started) {
            apr_size_t *count = apr_hash_get(running, r->type, APR_HASH_KEY_STRING);
            if (!count) {
                count = apr_pcalloc(tmp, sizeof(*count));
                apr_hash_set(running, apr_pstrdup(tmp, r->type), APR_HASH_KEY_STRING, count);
            }
            (*count)++;
        }
        /* A stop answers what is left as cancelled: its end was asked. */
        if (e->stopping)
            e->sink.done(r->job, SVC_OUTCOME_CANCELLED, NULL, e->sink.baton);
        else
            e->sink.done(r->job, SVC_OUTCOME_LOST, end, e->sink.baton);
        apr_hash_set(e->recs, &r->id, sizeof(r->id), NULL);
        free(r);
        njobs++;
    }
    for (hi = apr_hash_first(tmp, running); hi; hi = apr_hash_next(hi))
        types = apr_psprintf(tmp, "%s%s%s x%" APR_SIZE_T_FMT, types, *types ? ", " : "",
                             (const char *)apr_hash_this_key(hi),
                             *(apr_size_t *)apr_hash_this_val(hi));
    if (e->stopping) {
        if (njobs)
            LOG(e, PP_LOG_WARN, "the worker process %s with %" APR_SIZE_T_FMT " tasks not done "
                "(answered cancelled)%s%s", e->last_end, njobs, *types ? "; running: " : "",
                types);
    }
    else {
        if (now - e->born >= BACKOFF_RESET)
            e->backoff = BACKOFF_FIRST;
        e->restart_at = now + e->backoff;
        LOG(e, PP_LOG_ERROR, "the worker process (pid %d) %s; running: %s; %" APR_SIZE_T_FMT
            " task%s in flight lost; another starts in %.1f s", (int)e->proc.pid,
            e->last_end, *types ? types : "no task", njobs, njobs == 1 ? "" : "s",
            (double)e->backoff / APR_USEC_PER_SEC);
        e->backoff = e->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : e->backoff * 2;
    }
    apr_pool_destroy(tmp);
}

/* ------------------------------------------------------------ from it */

/* A stand-in's run: the loop only reads the names. */
static apr_status_t stand_in_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_ENOTIMPL;
}

static void stand_in_types(child_t *e, const char *names)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    char *list, *name, *last;

    if (apr_pool_create(&p, e->p) != APR_SUCCESS)
        return;
    if (pp_registry_create(&reg, p) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return;
    }
    list = apr_pstrdup(p, names);
    for (name = apr_strtok(list, " ", &last); name; name = apr_strtok(NULL, " ", &last)) {
        pp_task_type_t *t = apr_pcalloc(p, sizeof(*t));
        t->name = name;
        t->run = stand_in_run;
        pp_registry_add(reg, t);
    }
    if (e->types_p)
        apr_pool_destroy(e->types_p);
    e->types_p = p;
    e->types = reg;
}

static rec_t *rec_of(child_t *e, const char *text, const char **rest)
{
    char *end;
    apr_uint64_t id = (apr_uint64_t)apr_strtoi64(text, &end, 10);
    rec_t *r;

    if (end == text || (*end != ' ' && *end != '\0'))
        return NULL;
    *rest = *end ? end + 1 : end;
    r = apr_hash_get(e->recs, &id, sizeof(id));
    return r;
}

static void take_line(child_t *e, char *line)
{
    const char *rest;
    rec_t *r;

    if (strncmp(line, "TYPES ", 6) == 0) {
        stand_in_types(e, line + 6);
    }
    else if (strncmp(line, "START ", 6) == 0 && (r = rec_of(e, line + 6, &rest))) {
        r->started = 1;
        if (e->sink.started)
            e->sink.started(r->job, e->sink.baton);
    }
    else if (strncmp(line, "OUT ", 4) == 0 && (r = rec_of(e, line + 4, &rest))) {
        e->sink.output(r->job, rest, e->sink.baton);
    }
    else if (strncmp(line, "DONE ", 5) == 0 && (r = rec_of(e, line + 5, &rest))) {
        apr_hash_set(e->recs, &r->id, sizeof(r->id), NULL);
        if (strcmp(rest, "ok") == 0)
            e->sink.done(r->job, SVC_OUTCOME_OK, NULL, e->sink.baton);
        else if (strcmp(rest, "cancelled") == 0)
            e->sink.done(r->job, SVC_OUTCOME_CANCELLED, NULL, e->sink.baton);
        else
            e->sink.done(r->job, SVC_OUTCOME_FAILED,
                         strncmp(rest, "failed ", 7) == 0 ? rest + 7 : rest, e->sink.baton);
        free(r);
    }
    else {
        LOG(e, PP_LOG_WARN, "the worker process said what it should not: %.200s", line);
    }
}

/* Read what it wrote; its end (EOF, an error) is its death. At most
 * READ_TURN bytes a turn: a task that prints without end must not keep
 * the loop from its clients (the poll brings it back). */
static void read_some(child_t *e)
{
    apr_status_t rv;
    apr_size_t n, i, start, total = 0;

    while (total < READ_TURN) {
        if (e->rcap - e->rlen < 65536) {
            apr_size_t cap = e->rcap ? e->rcap * 2 : 65536 * 2;
            char *grown;
            if (cap > MAX_LINE_IN + 65536 || !(grown = realloc(e->rbuf, cap))) {
                LOG(e, PP_LOG_ERROR, "the worker process sent a line longer than %d bytes",
                    MAX_LINE_IN);
                worker_gone(e);
                return;
            }
            e->rbuf = grown;
            e->rcap = cap;
        }
        n = e->rcap - e->rlen;
        rv = apr_file_read(e->proc.out, e->rbuf + e->rlen, &n);
        if (rv != APR_SUCCESS) {
            if (!APR_STATUS_IS_EAGAIN(rv))
                worker_gone(e);
            return;
        }
        start = 0;
        for (i = e->rlen; i < e->rlen + n; i++) {
            if (e->rbuf[i] == '\n') {
                e->rbuf[i] = '\0';
                take_line(e, e->rbuf + start);
                start = i + 1;
            }
        }
        e->rlen += n;
        total += n;
        memmove(e->rbuf, e->rbuf + start, e->rlen - start);
        e->rlen -= start;
        if (e->rlen > MAX_LINE_IN) {
            LOG(e, PP_LOG_ERROR, "the worker process sent a line longer than %d bytes",
                MAX_LINE_IN);
            worker_gone(e);
            return;
        }
    }
}

/* ------------------------------------------------------------ the engine */

static apr_status_t spawn(child_t *e)
{
    apr_procattr_t *attr;
    apr_status_t rv;
    char msg[256];

    e->restart_at = 0;
    if ((rv = apr_pool_create(&e->proc_p, e->p)) != APR_SUCCESS)
        return rv;
    rv = apr_procattr_create(&attr, e->proc_p);
    /* Non-blocking on this side, blocking on the worker's; its stderr is
     * ours: the log. */
    if (rv == APR_SUCCESS)
        rv = apr_procattr_io_set(attr, APR_CHILD_BLOCK, APR_CHILD_BLOCK, APR_NO_PIPE);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_cmdtype_set(attr, strchr(e->argv[0], '/') ? APR_PROGRAM_ENV
                                      : APR_PROGRAM_PATH);
    if (rv == APR_SUCCESS)
        rv = apr_proc_create(&e->proc, e->argv[0], e->argv, NULL, attr, e->proc_p);
    if (rv != APR_SUCCESS) {
        LOG(e, PP_LOG_ERROR, "cannot start a worker process (%s): %s", e->argv[0],
            pp_strerror(rv, msg, sizeof(msg)));
        apr_pool_destroy(e->proc_p);
        e->proc_p = NULL;
        return rv;
    }
    e->up = 1;
    e->born = apr_time_now();
    e->rlen = 0;
    memset(&e->rpfd, 0, sizeof(e->rpfd));
    e->rpfd.p = e->proc_p;
    e->rpfd.desc_type = APR_POLL_FILE;
    e->rpfd.reqevents = APR_POLLIN;
    e->rpfd.desc.f = e->proc.out;
    e->rpfd.client_data = e;
    e->wpfd = e->rpfd;
    e->wpfd.reqevents = APR_POLLOUT;
    e->wpfd.desc.f = e->proc.in;
    if (e->ps)
        apr_pollset_add(e->ps, &e->rpfd);
    LOG(e, PP_LOG_INFO, "worker process %d started", (int)e->proc.pid);
    return APR_SUCCESS;
}

static apr_status_t c_start(svc_engine_t *be, const svc_sink_t *sink, apr_pollset_t *ps)
{
    child_t *e = (child_t *)be;
    apr_time_t deadline = apr_time_now() + START_LIMIT;
    apr_pollfd_t pfd;
    apr_int32_t n;
    apr_status_t rv;

    e->sink = *sink;
    e->ps = NULL;    /* polled here until it has said what it runs */
    e->stopping = 1;    /* no other try if it dies now: nothing would change */
    if ((rv = spawn(e)) != APR_SUCCESS)
        return rv;
    pfd = e->rpfd;
    while (e->up && !e->types) {
        apr_time_t now = apr_time_now();
        if (now >= deadline) {
            LOG(e, PP_LOG_ERROR, "the worker process did not start within %d s",
                (int)apr_time_sec(START_LIMIT));
            worker_gone(e);
            return APR_TIMEUP;
        }
        rv = apr_poll(&pfd, 1, &n, deadline - now);
        if (rv == APR_SUCCESS || APR_STATUS_IS_EINTR(rv))
            read_some(e);
    }
    if (!e->up) {
        LOG(e, PP_LOG_ERROR, "the worker process %s before it was ready (its messages are "
            "above)", e->last_end);
        return PP_ENOTYPE;
    }
    e->stopping = 0;
    e->ps = ps;
    return apr_pollset_add(ps, &e->rpfd);
}

static const pp_task_type_t *c_find(svc_engine_t *be, const char *type)
{
    return pp_registry_find(((child_t *)be)->types, type);
}

static const pp_task_type_t *c_suggest(svc_engine_t *be, const char *type)
{
    return pp_registry_suggest(((child_t *)be)->types, type);
}

static const char *c_types(svc_engine_t *be, apr_pool_t *p)
{
    return svc__types_of(((child_t *)be)->types, p);
}

static apr_status_t c_run(svc_engine_t *be, void *job, apr_uint64_t id, const char *type,
                          const char *arg)
{
    child_t *e = (child_t *)be;
    apr_size_t len = strlen(type);
    char ids[32];
    const char *words[4];
    rec_t *r = malloc(sizeof(*r) + len + 1);
    apr_status_t rv;

    /* One line to the worker: a line break in it would be a line of its
     * own there, read as a command (the callers refuse those first). */
    if (!*type || strpbrk(type, " \n") || strchr(arg, '\n')) {
        free(r);
        return APR_EINVAL;
    }
    if (!r)
        return APR_ENOMEM;
    r->job = job;
    r->id = id;
    r->started = 0;
    memcpy(r->type, type, len + 1);
    apr_snprintf(ids, sizeof(ids), "%" APR_UINT64_T_FMT, id);
    words[0] = "RUN";
    words[1] = ids;
    words[2] = type;
    words[3] = arg;
    /* While no worker is up (a restart is due), the line waits for the
     * next one. */
    if ((rv = queue_line(e, words, 4)) != APR_SUCCESS) {
        free(r);
        return rv;
    }
    apr_hash_set(e->recs, &r->id, sizeof(r->id), r);
    return APR_SUCCESS;
}

static void c_reload(svc_engine_t *be)
{
    child_t *e = (child_t *)be;

    static const char *const reload[] = { "RELOAD" };

    if (e->up)
        queue_line(e, reload, 1);
    else
        LOG(e, PP_LOG_INFO, "reload: the next worker process loads the plugins anew");
}

static void c_event(svc_engine_t *be, const apr_pollfd_t *pfd)
{
    child_t *e = (child_t *)be;

    if (!e->up)
        return;    /* an event of a worker this turn already saw end */
    if (pfd->desc.f == e->proc.out)
        read_some(e);
    else if (pfd->desc.f == e->proc.in)
        write_some(e);
}

static apr_interval_time_t c_tend(svc_engine_t *be)
{
    child_t *e = (child_t *)be;
    apr_time_t now;

    if (e->up || !e->restart_at || e->stopping)
        return -1;
    now = apr_time_now();
    if (now < e->restart_at)
        return e->restart_at - now;
    if (spawn(e) == APR_SUCCESS) {
        write_some(e);    /* the lines that waited */
        return -1;
    }
    e->restart_at = now + e->backoff;
    e->backoff = e->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : e->backoff * 2;
    return e->restart_at - now;
}

static void c_cancel(svc_engine_t *be, apr_interval_time_t grace)
{
    child_t *e = (child_t *)be;
    char ms[32];
    const char *words[2];

    apr_snprintf(ms, sizeof(ms), "%" APR_INT64_T_FMT, (apr_int64_t)(grace / 1000));
    words[0] = "CANCEL";
    words[1] = ms;
    e->stopping = 1;
    if (e->up)
        queue_line(e, words, 2);
}

static void c_stop(svc_engine_t *be)
{
    child_t *e = (child_t *)be;
    apr_time_t deadline = apr_time_now() + STOP_LIMIT;
    apr_pollfd_t pfd;
    apr_int32_t n;

    e->stopping = 1;
    e->restart_at = 0;
    if (!e->up)
        return;
    /* What is still to be written goes first, then the end of its stdin:
     * it runs what it has, answers, and exits. */
    apr_pollset_remove(e->ps, &e->rpfd);
    if (e->writing)
        apr_pollset_remove(e->ps, &e->wpfd);
    e->writing = 0;
    e->ps = NULL;
    apr_file_pipe_timeout_set(e->proc.in, STOP_LIMIT);
    if (e->woff < e->wlen)
        apr_file_write_full(e->proc.in, e->wbuf + e->woff, e->wlen - e->woff, NULL);
    e->woff = e->wlen = 0;
    apr_file_close(e->proc.in);
    pfd = e->rpfd;
    while (e->up) {
        apr_time_t now = apr_time_now();
        if (now >= deadline) {
            LOG(e, PP_LOG_WARN, "the worker process did not end within %d s: killed",
                (int)apr_time_sec(STOP_LIMIT));
            worker_gone(e);
            break;
        }
        if (apr_poll(&pfd, 1, &n, deadline - now) == APR_SUCCESS)
            read_some(e);
    }
}

static const svc_engine_ops_t child_ops = {
    c_start, c_find, c_suggest, c_types, c_run, c_reload, c_event, c_tend, c_cancel, c_stop
};

static apr_status_t cleanup(void *data)
{
    child_t *e = data;

    free(e->wbuf);
    free(e->rbuf);
    return APR_SUCCESS;
}

apr_status_t svc_engine_child_create(svc_engine_t **out, const svc_engine_config_t *cfg,
                                     const char *const *argv, apr_pool_t *p)
{
    child_t *e;

    if (!out || !cfg || !argv || !argv[0] || !p)
        return APR_EINVAL;
    e = apr_pcalloc(p, sizeof(*e));
    e->base.ops = &child_ops;
    e->p = p;
    e->cfg = *cfg;
    e->argv = argv;
    e->recs = apr_hash_make(p);
    e->backoff = BACKOFF_FIRST;
    apr_pool_cleanup_register(p, e, cleanup, apr_pool_cleanup_null);
    *out = &e->base;
    return APR_SUCCESS;
}
