/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The queue worker (queue.h). Three threads, each with one job:
 *
 * - the reader (its own Redis connection) reads entries with XREADGROUP,
 *   never more than there are free slots (the window: entries read and
 *   not yet acknowledged), so a backlog stays in Redis, not here; now
 *   and then it claims entries idle for claim_after (XAUTOCLAIM: their
 *   consumer died) and sends those delivered too often to the dead letters;
 * - the loop (the caller of svc_queue_run) gives each entry to the engine
 *   and is the engine's thread (its pipes are in the loop's pollset);
 * - the writer (its own connection) adds each ended entry's result and
 *   acknowledges the entry in one MULTI/EXEC, a batch at a time, and only
 *   then frees its slot.
 *
 * A lost connection is retried with backoff by the thread that lost it;
 * nothing is acknowledged that has no result stored, and a batch retried
 * after a reply that never came skips the entries it finds acknowledged,
 * so a result is not stored twice. An entry this worker cannot run (a
 * type it does not have or may not run), or whose task was lost with the
 * worker process, stays pending: another consumer claims it later, and
 * after max_deliveries it is a dead letter.
 */
#include "queue.h"
#include "capture.h"
#include "redis/qaddr.h"
#include "redis/connect.h"
#include "redis/stream.h"
#include "qentry.h"

#include <apr_atomic.h>
#include <apr_network_io.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>

#include <hiredis/hiredis.h>

#include <stdlib.h>
#include <string.h>

#define LOG(q, level, ...) svc_logf((q)->cfg.log, (q)->cfg.baton, level, __VA_ARGS__)

#define READ_BLOCK_MS   500
#define BATCH           256
#define BACKOFF_FIRST   apr_time_from_msec(100)
#define BACKOFF_MAX     apr_time_from_sec(5)
#define CANCEL_GRACE    apr_time_from_sec(2)
#define TICK            apr_time_from_msec(100)
#define WHY_LEN         256
/* The window: about this much work read ahead per worker, so that a
 * worker never waits for a read while tiny tasks wait in Redis, and long
 * tasks are not hoarded by one consumer while others idle. */
#define READ_AHEAD      apr_time_from_msec(20)
#define WINDOW_MIN      2      /* entries per worker, whatever the tasks take */
#define WINDOW_MAX      256

typedef struct entry_t entry_t;
struct entry_t {
    entry_t      *next;
    const char   *rid;       /* the stream's id for it */
    const char   *id;        /* the producer's, else rid */
    const char   *type, *arg;
    const char   *dead;      /* why it goes to the dead letters, or NULL */
    int           outcome;
    char          err[256];
    svc_capture_t out;
    apr_time_t    started, ended;
    char          text[];    /* the strings above */
};

struct svc_queue_t {
    apr_pool_t         *p;
    svc_queue_config_t  cfg;
    const svc_allow_t  *allow;
    const char         *host, *stream, *results, *dead;
    int                 port;
    char                hostname[APRMAXHOSTLEN + 1];
    svc_engine_t       *e;
    apr_pollset_t      *ps;
    apr_uint64_t        next_job;        /* the loop's */
    apr_thread_mutex_t *lock;
    apr_thread_cond_t  *room, *work;
    /* Under lock: */
    entry_t            *inbox, *inbox_tail;
    entry_t            *done, *done_tail;
    apr_uint32_t        used;            /* read, not yet acknowledged or let go */
    apr_interval_time_t avg_run;         /* a task's run time, averaged (0: none yet) */
    int                 writer_stop;     /* the writer ends once done is empty */
    /* Also read without the lock, by a thread that waits for Redis: */
    volatile apr_uint32_t stop;          /* the reader stops */
    volatile apr_uint32_t abandon;       /* the writer ends now */
    int                 closed;          /* no pollset to wake */
    int                 reload;
    apr_uint64_t        ok, failed, dead_letters, left;
    char                rwhy[WHY_LEN];   /* why the reader's last command failed */
    char                wwhy[WHY_LEN];   /* the writer's */
};

/* ------------------------------------------------------------ Redis */

static redisContext *connect_to(svc_queue_t *q, char *why, apr_size_t whylen)
{
    return pp__redis_connect(q->host, q->port, why, whylen);
}

static redisReply *command(redisContext *c, int argc, const char **argv)
{
    return redisCommandArgv(c, argc, argv, NULL);
}

/* A thread's connection: made (again) with backoff until it works or the
 * thread is told to end (*quit). Says once that it was lost, once that
 * it is back. */
static redisContext *reconnect(svc_queue_t *q, const char *who, const char *lost,
                               volatile apr_uint32_t *quit)
{
    apr_interval_time_t wait = BACKOFF_FIRST;
    char why[256];
    redisContext *c;
    int said = 0;

    if (lost) {
        LOG(q, PP_LOG_WARN, "queue: the %s lost its connection to %s:%d (%s); trying again",
            who, q->host, q->port, lost);
        said = 1;
    }
    while (!apr_atomic_read32(quit)) {
        if ((c = connect_to(q, why, sizeof(why))) != NULL) {
            if (said)
                LOG(q, PP_LOG_INFO, "queue: the %s is connected again", who);
            return c;
        }
        if (!said)
            LOG(q, PP_LOG_WARN, "queue: the %s cannot connect to %s:%d (%s); trying again",
                who, q->host, q->port, why);
        said = 1;
        apr_sleep(wait);
        wait = wait * 2 > BACKOFF_MAX ? BACKOFF_MAX : wait * 2;
    }
    return NULL;
}

/* An error reply, or none (the connection's end): what it says, copied
 * into why (a thread's own WHY_LEN bytes: it outlives the reply and the
 * connection); NULL when r is neither. */
static const char *failure(redisContext *c, const redisReply *r, char *why)
{
    if (r && r->type != REDIS_REPLY_ERROR)
        return NULL;
    apr_cpystrn(why, !r ? (c->errstr[0] ? c->errstr : "no reply") : r->str, WHY_LEN);
    return why;
}

/* ------------------------------------------------------------ the reader */

/* The entry rid with these fields (NULL: deleted), or NULL when out of
 * memory (it stays pending: it is claimed again later). */
static entry_t *entry_of(const char *rid, const redisReply *fields)
{
    apr_size_t tlen = 0, alen = 0, need;
    const char *type = pp__stream_field(fields, "type", &tlen);
    const char *arg = pp__stream_field(fields, "arg", &alen);
    const char *id = pp__stream_field(fields, "id", NULL);
    entry_t *e;
    char *t;

    need = strlen(rid) + 1 + (type ? strlen(type) : 0) + 1 + (arg ? strlen(arg) : 0) + 1
           + (id ? strlen(id) : strlen(rid)) + 1;
    if (!(e = calloc(1, sizeof(*e) + need)))
        return NULL;
    t = e->text;
#define KEEP(field, value) \
    do { e->field = t; strcpy(t, value); t += strlen(value) + 1; } while (0)
    KEEP(rid, rid);
    KEEP(type, type ? type : "");
    KEEP(arg, arg ? arg : "");
    KEEP(id, id ? id : rid);
#undef KEEP
    e->dead = svc_qentry_refusal(type, tlen, arg, alen);
    return e;
}

/* Entries read or claimed: each takes a slot, the loop is told. */
static void push_inbox(svc_queue_t *q, entry_t *head, entry_t *tail, apr_uint32_t n)
{
    apr_thread_mutex_lock(q->lock);
    q->used += n;
    if (q->inbox_tail)
        q->inbox_tail->next = head;
    else
        q->inbox = head;
    q->inbox_tail = tail;
    if (!q->closed)
        apr_pollset_wakeup(q->ps);
    apr_thread_mutex_unlock(q->lock);
}

/* How many times rid was delivered (XPENDING's count), 0 if not pending. */
static long long deliveries(redisContext *c, svc_queue_t *q, const char *rid, int *failed)
{
    const char *argv[] = { "XPENDING", q->stream, q->cfg.group, rid, rid, "1" };
    redisReply *r = command(c, 6, argv);
    long long n = 0;

    if (!r || r->type == REDIS_REPLY_ERROR) {
        *failed = 1;
    }
    else if (r->type == REDIS_REPLY_ARRAY && r->elements == 1
             && r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 4
             && r->element[0]->element[3]->type == REDIS_REPLY_INTEGER) {
        n = r->element[0]->element[3]->integer;
    }
    if (r)
        freeReplyObject(r);
    return n;
}

/* Entries being taken from a reply, and what it takes to take them. */
typedef struct taking_t {
    svc_queue_t  *q;
    redisContext *c;          /* to ask how often each was delivered; NULL: not */
    entry_t      *head, *tail;
    apr_uint32_t  n;
    int           failed;     /* a question failed: ask no more */
} taking_t;

static void take_entry(void *baton, const char *key, const char *rid, const redisReply *fields)
{
    taking_t *tk = baton;
    entry_t *e;

    (void)key;
    if (!(e = entry_of(rid, fields)))
        return;
    if (tk->c && !tk->failed && !e->dead
        && deliveries(tk->c, tk->q, rid, &tk->failed) > (long long)tk->q->cfg.max_deliveries)
        e->dead = "delivered more than --max-deliveries times";
    if (tk->tail)
        tk->tail->next = e;
    else
        tk->head = e;
    tk->tail = e;
    tk->n++;
}

/* Claim up to count entries idle for claim_after from any consumer; those
 * delivered more than max_deliveries times are marked for the dead
 * letters. Returns the connection's failure, or NULL. */
static const char *claim(redisContext *c, svc_queue_t *q, char *cursor, apr_size_t cursorlen,
                         apr_uint32_t count, char *why)
{
    char idle[32], n[32];
    const char *argv[] = { "XAUTOCLAIM", q->stream, q->cfg.group, q->cfg.consumer, idle, cursor,
                           "COUNT", n };
    taking_t tk = { q, c, NULL, NULL, 0, 0 };
    const char *bad;
    redisReply *r;

    apr_snprintf(idle, sizeof(idle), "%" APR_INT64_T_FMT,
                 (apr_int64_t)apr_time_as_msec(q->cfg.claim_after));
    apr_snprintf(n, sizeof(n), "%u", count);
    r = command(c, 8, argv);
    if ((bad = failure(c, r, why)) != NULL) {
        if (r)
            freeReplyObject(r);
        return bad;
    }
    /* [next cursor, [entry, ...], [deleted ids]] */
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 || r->element[0]->type != REDIS_REPLY_STRING
        || r->element[1]->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return apr_cpystrn(why, "XAUTOCLAIM answered what it should not", WHY_LEN);
    }
    apr_cpystrn(cursor, r->element[0]->str, cursorlen);
    pp__stream_list(r->element[1], NULL, take_entry, &tk);
    freeReplyObject(r);
    if (tk.n) {
        /* Even after a failed XPENDING: they are ours now, pending. */
        LOG(q, PP_LOG_INFO, "queue: claimed %u entr%s idle for %" APR_INT64_T_FMT " s or more",
            tk.n, tk.n == 1 ? "y" : "ies", (apr_int64_t)apr_time_sec(q->cfg.claim_after));
        push_inbox(q, tk.head, tk.tail, tk.n);
    }
    if (tk.failed)
        apr_cpystrn(why, c->errstr[0] ? c->errstr : "XPENDING failed", WHY_LEN);
    return tk.failed ? why : NULL;
}

/* A server that is loading its data after a restart answers errors for a
 * while: a wait, not a failure. */
static int loading(const char *why)
{
    return why && strncmp(why, "LOADING", 7) == 0;
}

/* The group, made with its stream if missing (from the stream's start:
 * entries added before any worker came are work too). */
static const char *ensure_group(redisContext *c, svc_queue_t *q, char *why)
{
    const char *argv[] = { "XGROUP", "CREATE", q->stream, q->cfg.group, "0", "MKSTREAM" };
    redisReply *r = command(c, 6, argv);
    const char *bad = failure(c, r, why);

    if (bad && r && strncmp(r->str, "BUSYGROUP", 9) == 0)
        bad = NULL;
    if (r)
        freeReplyObject(r);
    return bad;
}

/* Under lock: how many entries may be read and not yet acknowledged:
 * READ_AHEAD of work per worker by the tasks' average run time, between
 * WINDOW_MIN and WINDOW_MAX per worker, never above max_inflight. */
static apr_uint32_t window(const svc_queue_t *q)
{
    apr_interval_time_t per = q->avg_run > 0 ? READ_AHEAD / q->avg_run : WINDOW_MIN;
    apr_uint64_t w;

    if (per < WINDOW_MIN)
        per = WINDOW_MIN;
    if (per > WINDOW_MAX)
        per = WINDOW_MAX;
    w = (apr_uint64_t)per * q->cfg.workers;
    return w < q->cfg.max_inflight ? (apr_uint32_t)w : q->cfg.max_inflight;
}

static void *APR_THREAD_FUNC reader_main(apr_thread_t *t, void *data)
{
    (void)t;
    svc_queue_t *q = data;
    redisContext *c = NULL;
    char count[32], block[32], cursor[64] = "0-0";
    const char *argv[] = { "XREADGROUP", "GROUP", q->cfg.group, q->cfg.consumer, "COUNT", count,
                           "BLOCK", block, "STREAMS", q->stream, ">" };
    const char *lost = NULL;
    apr_interval_time_t every = q->cfg.claim_after / 2;
    apr_time_t next_claim = 0;    /* at once: what died before we started */
    apr_uint32_t room;
    redisReply *r;

    if (every < apr_time_from_sec(1))
        every = apr_time_from_sec(1);
    if (every > apr_time_from_sec(30))
        every = apr_time_from_sec(30);
    apr_snprintf(block, sizeof(block), "%d", READ_BLOCK_MS);
    for (;;) {
        apr_thread_mutex_lock(q->lock);
        while (!apr_atomic_read32(&q->stop) && q->used >= window(q))
            apr_thread_cond_timedwait(q->room, q->lock, apr_time_from_msec(READ_BLOCK_MS));
        room = window(q) - q->used;
        apr_thread_mutex_unlock(q->lock);
        if (apr_atomic_read32(&q->stop))
            break;
        if (!c) {
            if (!(c = reconnect(q, "reader", lost, &q->stop)))
                break;
            if ((lost = ensure_group(c, q, q->rwhy)) != NULL) {
                /* A server still loading its data is soon ready; a key
                 * that is not a stream, say, needs a person: no haste. */
                apr_sleep(loading(lost) ? BACKOFF_FIRST : BACKOFF_MAX);
                redisFree(c);
                c = NULL;
                continue;
            }
        }
        lost = NULL;
        if (apr_time_now() >= next_claim) {
            lost = claim(c, q, cursor, sizeof(cursor), room, q->rwhy);
            if (!lost && strcmp(cursor, "0-0") == 0)
                next_claim = apr_time_now() + every;    /* a whole pass: rest */
        }
        else {
            apr_snprintf(count, sizeof(count), "%u", room);
            r = command(c, 11, argv);
            if (!(lost = failure(c, r, q->rwhy))) {
                taking_t tk = { q, NULL, NULL, NULL, 0, 0 };
                pp__stream_read(r, take_entry, &tk);
                if (tk.n)
                    push_inbox(q, tk.head, tk.tail, tk.n);
            }
            else if (r && strncmp(r->str, "NOGROUP", 7) == 0)
                lost = "the stream or its group was deleted";
            if (r)
                freeReplyObject(r);
        }
        if (lost) {
            /* An error reply on a live connection is logged and waited
             * out like a lost one: the same backoff. */
            redisFree(c);
            c = NULL;
        }
    }
    if (c)
        redisFree(c);
    /* A return, not apr_thread_exit(): nobody reads the exit status, and
     * pthread_exit trips ASan's thread teardown (as in send.c). */
    return NULL;
}

/* ------------------------------------------------------------ the writer */

/* Queue the commands that store e's outcome and acknowledge it. */
static void append_result(redisContext *c, svc_queue_t *q, const entry_t *e, const char *maxlen,
                          char *scratch, apr_size_t scratchlen)
{
    const char *argv[28];
    apr_size_t len[28], i;
    int n = 0;
    char *output = NULL;

#define ARG(s) do { argv[n] = (s); len[n] = strlen(argv[n]); n++; } while (0)
    if (e->dead) {
        ARG("XADD"); ARG(q->dead); ARG("*");
        ARG("id"); ARG(e->id); ARG("entry"); ARG(e->rid); ARG("type"); ARG(e->type);
        ARG("arg"); ARG(e->arg); ARG("reason"); ARG(e->dead);
        ARG("consumer"); ARG(q->cfg.consumer);
    }
    else {
        ARG("XADD"); ARG(q->results); ARG("MAXLEN"); ARG("~"); ARG(maxlen); ARG("*");
        ARG("id"); ARG(e->id); ARG("entry"); ARG(e->rid); ARG("type"); ARG(e->type);
        ARG("arg"); ARG(e->arg);
        ARG("status"); ARG(e->outcome == SVC_OUTCOME_OK ? "ok" : "failed");
        if (e->outcome != SVC_OUTCOME_OK) {
            ARG("error"); ARG(e->err);
        }
        ARG("output");
        /* The lines LF-separated: the capture keeps them NUL-separated. */
        if (e->out.len) {
            output = malloc(e->out.len);
            if (output) {
                for (i = 0; i < e->out.len; i++)
                    output[i] = e->out.buf[i] ? e->out.buf[i] : '\n';
                argv[n] = output;
                len[n] = e->out.len - 1;    /* no LF after the last */
                n++;
            }
            else {
                ARG("");
            }
        }
        else {
            ARG("");
        }
        ARG("host"); ARG(q->hostname); ARG("consumer"); ARG(q->cfg.consumer);
        apr_snprintf(scratch, scratchlen, "%.6f",
                     e->started ? (double)(e->ended - e->started) / APR_USEC_PER_SEC : 0.0);
        ARG("seconds"); ARG(scratch);
    }
#undef ARG
    redisAppendCommandArgv(c, n, argv, len);
    free(output);
    argv[0] = "XACK"; argv[1] = q->stream; argv[2] = q->cfg.group; argv[3] = e->rid;
    redisAppendCommandArgv(c, 4, argv, NULL);
}

/* Store and acknowledge a batch in one transaction. NULL, or why not. */
static const char *write_batch(redisContext *c, svc_queue_t *q, entry_t *batch)
{
    static const char *const multi[] = { "MULTI" }, *const exec[] = { "EXEC" };
    char maxlen[32], seconds[32];
    const char *bad = NULL;
    redisReply *r;
    entry_t *e;
    int replies = 0, i;

    apr_snprintf(maxlen, sizeof(maxlen), "%" APR_UINT64_T_FMT, q->cfg.results_maxlen);
    redisAppendCommandArgv(c, 1, (const char **)multi, NULL);
    for (e = batch; e; e = e->next) {
        append_result(c, q, e, maxlen, seconds, sizeof(seconds));
        replies += 2;
    }
    redisAppendCommandArgv(c, 1, (const char **)exec, NULL);
    /* MULTI's +OK, a +QUEUED each, then EXEC's array (nil if aborted). */
    for (i = 0; i < replies + 2; i++) {
        void *reply = NULL;
        if (redisGetReply(c, &reply) != REDIS_OK)
            return failure(c, NULL, q->wwhy);
        r = reply;
        if (!bad)
            bad = failure(c, r, q->wwhy);
        if (i == replies + 1 && !bad && r->type != REDIS_REPLY_ARRAY)
            bad = "the transaction was aborted";
        freeReplyObject(r);
    }
    return bad;
}

/* After a reply that never came, a batch may be stored already: keep the
 * entries still pending (one XPENDING each; a rare path). */
static entry_t *still_pending(redisContext *c, svc_queue_t *q, entry_t *batch, int *failed,
                              apr_uint32_t *gone)
{
    entry_t *keep = NULL, **tail = &keep, *e, *next;

    for (e = batch; e; e = next) {
        next = e->next;
        e->next = NULL;
        if (deliveries(c, q, e->rid, failed) > 0 || *failed) {
            *tail = e;
            tail = &e->next;
        }
        else {
            free(e->out.buf);
            free(e);
            (*gone)++;
        }
    }
    return keep;
}

static void *APR_THREAD_FUNC writer_main(apr_thread_t *t, void *data)
{
    (void)t;
    svc_queue_t *q = data;
    redisContext *c = NULL;
    entry_t *batch, *e, *next;
    const char *lost = NULL;
    apr_uint32_t n, ok, failed, dead, gone, left;
    int retry = 0, xfail = 0;

    for (;;) {
        apr_thread_mutex_lock(q->lock);
        while (!q->done && !q->writer_stop && !apr_atomic_read32(&q->abandon))
            apr_thread_cond_wait(q->work, q->lock);
        if (apr_atomic_read32(&q->abandon) || (!q->done && q->writer_stop)) {
            apr_thread_mutex_unlock(q->lock);
            break;
        }
        /* Up to BATCH of them. */
        batch = q->done;
        for (n = 1, e = batch; e->next && n < BATCH; e = e->next)
            n++;
        q->done = e->next;
        if (!q->done)
            q->done_tail = NULL;
        e->next = NULL;
        apr_thread_mutex_unlock(q->lock);

        gone = 0;
        for (;;) {
            if (!c && !(c = reconnect(q, "writer", lost, &q->abandon)))
                break;
            lost = NULL;
            xfail = 0;
            if (retry)
                batch = still_pending(c, q, batch, &xfail, &gone);
            if (!xfail && (!batch || !(lost = write_batch(c, q, batch))))
                break;
            if (xfail)
                lost = apr_cpystrn(q->wwhy, c->errstr[0] ? c->errstr : "XPENDING failed",
                                   WHY_LEN);
            redisFree(c);
            c = NULL;
            retry = 1;
            apr_sleep(BACKOFF_FIRST);    /* an error reply: not at once again */
        }
        retry = 0;
        ok = failed = dead = left = 0;
        for (e = batch; e; e = next) {
            next = e->next;
            if (!c)
                left++;    /* abandoned: pending still, for another consumer */
            else if (e->dead)
                dead++;
            else if (e->outcome == SVC_OUTCOME_OK)
                ok++;
            else
                failed++;
            free(e->out.buf);
            free(e);
        }
        apr_thread_mutex_lock(q->lock);
        q->used -= ok + failed + dead + gone + left;
        q->ok += ok;
        q->failed += failed;
        q->dead_letters += dead;
        q->left += left;
        apr_thread_cond_signal(q->room);
        if (!q->closed)
            apr_pollset_wakeup(q->ps);
        apr_thread_mutex_unlock(q->lock);
        if (dead)
            LOG(q, PP_LOG_WARN, "queue: %u entr%s moved to %s", dead, dead == 1 ? "y" : "ies",
                q->dead);
    }
    if (c)
        redisFree(c);
    /* A return, not apr_thread_exit(): nobody reads the exit status, and
     * pthread_exit trips ASan's thread teardown (as in send.c). */
    return NULL;
}

/* ------------------------------------------------------------ the loop */

/* An entry that leaves without a result: its slot is free, the entry
 * stays pending (another consumer claims it after claim_after). */
static void let_go(svc_queue_t *q, entry_t *e)
{
    free(e->out.buf);
    free(e);
    apr_thread_mutex_lock(q->lock);
    q->used--;
    q->left++;
    apr_thread_cond_signal(q->room);
    apr_thread_mutex_unlock(q->lock);
}

static void to_writer(svc_queue_t *q, entry_t *e)
{
    e->next = NULL;
    apr_thread_mutex_lock(q->lock);
    if (!e->dead && e->started) {
        /* A moving average over about the last 16 tasks. */
        apr_interval_time_t run = e->ended - e->started;
        q->avg_run = q->avg_run ? q->avg_run + (run - q->avg_run) / 16 : (run ? run : 1);
    }
    if (q->done_tail)
        q->done_tail->next = e;
    else
        q->done = e;
    q->done_tail = e;
    apr_thread_cond_signal(q->work);
    apr_thread_mutex_unlock(q->lock);
}

/* Any thread: a worker took the entry's task ("seconds" is its run). */
static void on_started(void *job, void *baton)
{
    (void)baton;
    ((entry_t *)job)->started = apr_time_now();
}

static void on_output(void *job, const char *line, void *baton)
{
    (void)baton;
    svc_capture_add(&((entry_t *)job)->out, line);
}

/* Any thread: the entry's task ended. */
static void on_done(void *job, int outcome, const char *why, void *baton)
{
    svc_queue_t *q = baton;
    entry_t *e = job;

    e->ended = apr_time_now();
    e->outcome = outcome;
    if (outcome == SVC_OUTCOME_CANCELLED || outcome == SVC_OUTCOME_LOST) {
        /* It did not run to its end here: it is another consumer's to run. */
        let_go(q, e);
        return;
    }
    if (why)
        apr_cpystrn(e->err, why, sizeof(e->err));
    to_writer(q, e);
}

/* Give what the reader took to the engine. */
static void run_inbox(svc_queue_t *q)
{
    entry_t *e, *next;
    char msg[256];
    apr_status_t rv;

    apr_thread_mutex_lock(q->lock);
    e = q->inbox;
    q->inbox = q->inbox_tail = NULL;
    apr_thread_mutex_unlock(q->lock);
    for (; e; e = next) {
        next = e->next;
        e->next = NULL;
        if (e->dead) {
            to_writer(q, e);
            continue;
        }
        if (!svc_allow_permits(q->allow, e->type) || !q->e->ops->find(q->e, e->type)) {
            LOG(q, PP_LOG_WARN, "queue: entry %s: task type '%s' is %s here; left pending for "
                "another consumer", e->rid, e->type, svc_allow_permits(q->allow, e->type)
                ? "unknown" : "not allowed");
            let_go(q, e);
            continue;
        }
        rv = q->e->ops->run(q->e, e, ++q->next_job, e->type, e->arg);
        if (rv != APR_SUCCESS) {
            LOG(q, PP_LOG_WARN, "queue: entry %s: %s", e->rid, pp_strerror(rv, msg, sizeof(msg)));
            let_go(q, e);
        }
    }
}

static apr_uint32_t used(svc_queue_t *q)
{
    apr_uint32_t n;

    apr_thread_mutex_lock(q->lock);
    n = q->used;
    apr_thread_mutex_unlock(q->lock);
    return n;
}

static void turn(svc_queue_t *q, apr_interval_time_t timeout)
{
    const apr_pollfd_t *fds;
    apr_interval_time_t wait;
    apr_int32_t n = 0, i;
    int reload;

    wait = q->e->ops->tend(q->e);
    if (wait >= 0 && wait < timeout)
        timeout = wait;
    apr_pollset_poll(q->ps, timeout, &n, &fds);
    for (i = 0; i < n; i++)
        if (fds[i].client_data == q->e)
            q->e->ops->event(q->e, &fds[i]);
    apr_thread_mutex_lock(q->lock);
    reload = q->reload;
    q->reload = 0;
    apr_thread_mutex_unlock(q->lock);
    if (reload)
        q->e->ops->reload(q->e);
    run_inbox(q);
}

apr_status_t svc_queue_create(svc_queue_t **out, const svc_queue_config_t *cfg, apr_pool_t *p)
{
    svc_queue_t *q;
    svc_allow_t *allow;
    svc_sink_t sink;
    redisContext *c;
    const char *bad;
    char why[512];
    apr_status_t rv;

    if (!out || !cfg || !cfg->url || !cfg->group || !cfg->consumer || !cfg->engine || !p)
        return APR_EINVAL;
    q = apr_pcalloc(p, sizeof(*q));
    q->p = p;
    q->cfg = *cfg;
    q->e = cfg->engine;
    if (!q->cfg.claim_after)
        q->cfg.claim_after = apr_time_from_sec(60);
    if (!q->cfg.max_deliveries)
        q->cfg.max_deliveries = 5;
    if (!q->cfg.results_maxlen)
        q->cfg.results_maxlen = 1000000;
    if (!q->cfg.workers)
        q->cfg.workers = 1;
    if (!q->cfg.max_inflight)
        q->cfg.max_inflight = WINDOW_MAX * q->cfg.workers;
    if ((rv = pp__queue_addr(cfg->url, &q->host, &q->port, &q->stream, why, sizeof(why), p))
        != APR_SUCCESS) {
        LOG(q, PP_LOG_ERROR, "%s", why);
        return rv;
    }
    q->results = apr_pstrcat(p, q->stream, ":results", NULL);
    q->dead = apr_pstrcat(p, q->stream, ":dead", NULL);
    if (cfg->allow)
        q->allow = cfg->allow;
    else if ((rv = svc_allow_create(&allow, p)) == APR_SUCCESS)
        q->allow = allow;
    else
        return rv;
    if (apr_gethostname(q->hostname, sizeof(q->hostname), p) != APR_SUCCESS)
        apr_cpystrn(q->hostname, "?", sizeof(q->hostname));
    /* Once now, to say at start what is wrong rather than retry for ever. */
    if (!(c = connect_to(q, why, sizeof(why)))) {
        LOG(q, PP_LOG_ERROR, "queue: cannot connect to %s:%d: %s", q->host, q->port, why);
        return APR_ECONNREFUSED;
    }
    bad = ensure_group(c, q, why);
    if (bad) {
        LOG(q, PP_LOG_ERROR, "queue: cannot make the group %s of %s: %s", cfg->group, q->stream,
            bad);
        redisFree(c);
        return APR_EGENERAL;
    }
    redisFree(c);
    rv = apr_thread_mutex_create(&q->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&q->room, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&q->work, p);
    if (rv == APR_SUCCESS)
        rv = apr_pollset_create(&q->ps, 4, p, APR_POLLSET_WAKEABLE);
    if (rv != APR_SUCCESS)
        return rv;
    sink.started = on_started;
    sink.output = on_output;
    sink.done = on_done;
    sink.baton = q;
    if ((rv = q->e->ops->start(q->e, &sink, q->ps)) != APR_SUCCESS)
        return rv;    /* the engine said why */
    LOG(q, PP_LOG_INFO, "queue: consumer %s of group %s of %s:%d/%s; %u workers, at most %u "
        "entries in flight (%u to %u by the tasks' run time); entries idle %" APR_INT64_T_FMT " s claimed, dead after %u deliveries (%s); "
        "results in %s; task types allowed: %s", cfg->consumer, cfg->group, q->host, q->port,
        q->stream, q->cfg.workers, q->cfg.max_inflight, WINDOW_MIN * q->cfg.workers,
        WINDOW_MAX * q->cfg.workers, (apr_int64_t)apr_time_sec(q->cfg.claim_after),
        q->cfg.max_deliveries, q->dead, q->results, svc_allow_describe(q->allow, p));
    *out = q;
    return APR_SUCCESS;
}

apr_status_t svc_queue_run(svc_queue_t *q, apr_interval_time_t timeout)
{
    apr_thread_t *reader, *writer;
    apr_status_t rv, trv;
    apr_time_t deadline;

    rv = apr_thread_create(&reader, NULL, reader_main, q, q->p);
    if (rv != APR_SUCCESS)
        return rv;
    if ((rv = apr_thread_create(&writer, NULL, writer_main, q, q->p)) != APR_SUCCESS) {
        svc_queue_stop(q);
        apr_thread_join(&trv, reader);
        return rv;
    }
    while (!apr_atomic_read32(&q->stop))
        turn(q, apr_time_from_msec(500));
    /* Stop reading; run and acknowledge what was read. */
    apr_thread_join(&trv, reader);
    deadline = timeout < 0 ? APR_INT64_MAX : apr_time_now() + timeout;
    while (used(q) > 0 && apr_time_now() < deadline)
        turn(q, TICK);
    rv = APR_SUCCESS;
    if (used(q) > 0) {
        rv = APR_TIMEUP;
        q->e->ops->cancel(q->e, CANCEL_GRACE);
        deadline = apr_time_now() + CANCEL_GRACE + apr_time_from_msec(500);
        while (used(q) > 0 && apr_time_now() < deadline)
            turn(q, TICK);
    }
    q->e->ops->stop(q->e);
    run_inbox(q);
    apr_thread_mutex_lock(q->lock);
    q->writer_stop = 1;
    if (rv != APR_SUCCESS)
        apr_atomic_set32(&q->abandon, 1);    /* what is not stored by now stays pending */
    apr_thread_cond_signal(q->work);
    apr_thread_mutex_unlock(q->lock);
    apr_thread_join(&trv, writer);
    apr_thread_mutex_lock(q->lock);
    q->closed = 1;
    apr_thread_mutex_unlock(q->lock);
    LOG(q, rv == APR_SUCCESS ? PP_LOG_INFO : PP_LOG_WARN, "queue: %s: %" APR_UINT64_T_FMT
        " ok, %" APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT " dead letters, %"
        APR_UINT64_T_FMT " left pending for another consumer",
        rv == APR_SUCCESS ? "drained" : "drain timed out", q->ok, q->failed, q->dead_letters,
        q->left);
    return rv;
}

void svc_queue_stop(svc_queue_t *q)
{
    apr_thread_mutex_lock(q->lock);
    apr_atomic_set32(&q->stop, 1);
    apr_thread_cond_broadcast(q->room);
    if (!q->closed)
        apr_pollset_wakeup(q->ps);
    apr_thread_mutex_unlock(q->lock);
}

void svc_queue_reload(svc_queue_t *q)
{
    apr_thread_mutex_lock(q->lock);
    q->reload = 1;
    if (!q->closed)
        apr_pollset_wakeup(q->ps);
    apr_thread_mutex_unlock(q->lock);
}
