/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A client's connection (svc_private.h), on the loop's thread only. The
 * socket is non-blocking; the loop reads a client only while it may send
 * more (fewer than max_inflight tasks not ended, fewer than OUT_SOFT
 * bytes of answers waiting for it): a client that sends faster than the
 * pool runs, or does not read its answers, waits in its own socket's
 * buffers, and nobody else waits for it. Answers wait in a buffer of
 * their own per client; one that does not read them while they pile up
 * past OUT_HARD (the "out" lines of its tasks can) is disconnected.
 */
#include "svc_private.h"

#include <apr_strings.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Stop reading a client with this much unsent. */
#define OUT_SOFT (64 * 1024)
/* Disconnect a client with this much unsent. */
#define OUT_HARD (8 * 1024 * 1024)

static void set_events(svc_conn *c, apr_int16_t want)
{
    svc_t *svc = c->svc;

    if (want == c->events)
        return;
    if (c->events)
        apr_pollset_remove(svc->ps, &c->pfd);
    c->events = 0;
    if (want) {
        c->pfd.reqevents = want;
        if (apr_pollset_add(svc->ps, &c->pfd) == APR_SUCCESS)
            c->events = want;
    }
}

static void free_conn(svc_conn *c)
{
    svc_t *svc = c->svc;

    if (c->prev)
        c->prev->next = c->next;
    else
        svc->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c->out);
    apr_pool_destroy(c->p);
}

void svc__accept(svc_t *svc)
{
    apr_pool_t *p;
    apr_socket_t *sock;
    svc_conn *c;

    apr_pool_create(&p, svc->p);
    if (apr_socket_accept(&sock, svc->listener, p) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return;
    }
    apr_socket_timeout_set(sock, 0);    /* non-blocking */
    c = apr_pcalloc(p, sizeof(*c));
    c->p = p;
    c->svc = svc;
    c->sock = sock;
    c->last = apr_time_now();
    c->pfd.p = p;
    c->pfd.desc_type = APR_POLL_SOCKET;
    c->pfd.desc.s = sock;
    c->pfd.client_data = c;
    c->next = svc->conns;
    if (svc->conns)
        svc->conns->prev = c;
    svc->conns = c;
    svc->nconns++;
    if (svc->nconns > svc->cfg.max_clients) {
        svc__log(svc, PP_LOG_WARN, "a client refused: %u connected already (--max-clients)",
                 svc->cfg.max_clients);
        svc__conn_close(c, "too many clients");
        return;
    }
    c->in = apr_palloc(p, SVC_MAX_LINE + 1);
    svc__conn_say(c, SVC_PROTO_HELLO "%d", SVC_PROTO_VERSION);
}

static void put(svc_conn *c, const char *data, apr_size_t len)
{
    if (c->closed)
        return;
    if (c->outoff > 0 && c->outoff == c->outlen)
        c->outoff = c->outlen = 0;
    if (c->outlen + len > c->outcap) {
        apr_size_t cap = c->outcap ? c->outcap : 4096;
        char *grown;
        if (c->outoff > 0) {    /* what was sent goes first */
            memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
            c->outlen -= c->outoff;
            c->outoff = 0;
        }
        while (cap < c->outlen + len)
            cap *= 2;
        if (c->outlen + len > OUT_HARD || !(grown = realloc(c->out, cap))) {
            svc__log(c->svc, PP_LOG_WARN, "a client does not read its answers (%" APR_SIZE_T_FMT
                     " bytes waiting): disconnected", c->outlen);
            c->outoff = c->outlen = 0;
            svc__conn_close(c, NULL);
            return;
        }
        c->out = grown;
        c->outcap = cap;
    }
    memcpy(c->out + c->outlen, data, len);
    c->outlen += len;
}

void svc__conn_say(svc_conn *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    apr_size_t n;

    va_start(ap, fmt);
    n = (apr_size_t)apr_vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    buf[n++] = '\n';
    put(c, buf, n);
}

void svc__conn_say_bytes(svc_conn *c, const char *prefix, const char *data, apr_size_t len)
{
    put(c, prefix, strlen(prefix));
    put(c, data, len);
    put(c, "\n", 1);
}

/* Send what waits, as much as the socket takes now. */
static void flush(svc_conn *c)
{
    while (!c->closed && c->outoff < c->outlen) {
        apr_size_t n = c->outlen - c->outoff;
        apr_status_t rv = apr_socket_send(c->sock, c->out + c->outoff, &n);
        c->outoff += n;
        if (n > 0)
            c->last = apr_time_now();
        if (APR_STATUS_IS_EAGAIN(rv))
            return;
        if (rv != APR_SUCCESS) {
            svc__conn_close(c, NULL);    /* gone: nobody to tell */
            return;
        }
    }
}

void svc__conn_close(svc_conn *c, const char *why)
{
    svc_t *svc = c->svc;

    if (c->closed)
        return;
    if (why) {
        svc__conn_say(c, "error: %s", why);
        flush(c);    /* best effort: it is not read any more */
        if (c->closed)
            return;
    }
    set_events(c, 0);
    apr_socket_close(c->sock);
    c->closed = 1;
    svc->nconns--;
    free(c->out);
    c->out = NULL;
    c->outoff = c->outlen = c->outcap = 0;
    /* The record goes in svc__conns_tend(), once no job holds it: callers
     * up the stack (a line being taken, an answer being queued) still
     * look at it. */
}

void svc__conn_job_ended(svc_conn *c)
{
    c->inflight--;
}

/* One line: len bytes ending in its LF, a NUL after them. */
static void handle_line(svc_conn *c, char *line, apr_size_t len)
{
    svc_request_t req;

    svc_proto_request(&req, line, len);
    switch (req.kind) {
    case SVC_REQ_NONE:
        break;
    case SVC_REQ_OUTPUT:
        c->want_output = 1;
        svc__conn_say(c, "ok !output");
        break;
    case SVC_REQ_NOWAIT:
        c->nowait = 1;
        svc__conn_say(c, "ok !nowait");
        break;
    case SVC_REQ_BAD:
        c->svc->refused++;
        svc__conn_say(c, "error: %s", req.why);
        break;
    case SVC_REQ_TASK:
        svc__job_submit(c, req.type, req.arg);
        break;
    }
}

/* Whether c may have another line taken (see the top of this file). */
static int may_take(const svc_conn *c)
{
    return !c->closed && c->inflight < c->svc->cfg.max_inflight
           && c->outlen - c->outoff < OUT_SOFT;
}

/* Whether the loop reads more from c. */
static int may_read(const svc_conn *c)
{
    return !c->eof && may_take(c) && c->inlen < SVC_MAX_LINE;
}

/* Take the whole lines that wait in c->in, while c may send more: a
 * client that has as many tasks in flight as it may keeps the rest
 * until one ends. */
static void take_lines(svc_conn *c)
{
    apr_size_t start = 0, i;
    int stalled = 0;

    for (i = 0; i < c->inlen; i++) {
        char after;
        if (c->in[i] != '\n')
            continue;
        if (c->skipping) {
            c->skipping = 0;    /* the end of a line that was refused whole */
            start = i + 1;
            continue;
        }
        if (!may_take(c)) {
            stalled = 1;
            break;
        }
        /* in has a byte to spare past SVC_MAX_LINE for this NUL. */
        after = c->in[i + 1];
        c->in[i + 1] = '\0';
        handle_line(c, c->in + start, i + 1 - start);
        c->in[i + 1] = after;
        start = i + 1;
        if (c->closed)
            return;
    }
    memmove(c->in, c->in + start, c->inlen - start);
    c->inlen -= start;
    if (!stalled && c->inlen == SVC_MAX_LINE) {
        /* A line longer than any the protocol allows: refused whole, the
         * rest of it skipped up to its LF. */
        if (!c->skipping) {
            c->svc->refused++;
            svc__conn_say(c, "error: a line longer than %d bytes: not run", SVC_MAX_LINE - 1);
        }
        c->skipping = 1;
        c->inlen = 0;
    }
}

static void read_some(svc_conn *c)
{
    apr_size_t n = SVC_MAX_LINE - c->inlen;
    apr_status_t rv = apr_socket_recv(c->sock, c->in + c->inlen, &n);

    if (n == 0) {
        if (APR_STATUS_IS_EAGAIN(rv))
            return;
        /* EOF or an error: answers still go out if they can. A last line
         * without its LF is a line, as parkpool run reads it. */
        c->eof = 1;
        if (c->inlen > 0 && !memchr(c->in, '\n', c->inlen) && c->inlen < SVC_MAX_LINE)
            c->in[c->inlen++] = '\n';
    }
    else {
        c->inlen += n;
        c->last = apr_time_now();
    }
    take_lines(c);
}

void svc__conn_event(svc_conn *c, apr_int16_t rtnevents)
{
    if (c->closed)
        return;
    if (rtnevents & APR_POLLOUT)
        flush(c);
    /* A hang-up or an error is read as EOF. */
    if ((rtnevents & (APR_POLLIN | APR_POLLHUP | APR_POLLERR)) && may_read(c))
        read_some(c);
}

void svc__conns_tend(svc_t *svc, int now_reading)
{
    svc_conn *c, *next;
    apr_time_t now = apr_time_now();
    unsigned idle = 0;

    for (c = svc->conns; c; c = next) {
        apr_int16_t want = 0;
        next = c->next;
        if (c->closed) {
            if (c->inflight == 0)
                free_conn(c);
            continue;
        }
        if (c->inlen > 0 && may_take(c))
            take_lines(c);    /* what waited for a job to end */
        if (c->closed)
            continue;
        if (c->eof && c->inlen > 0 && !memchr(c->in, '\n', c->inlen))
            c->inlen = 0;    /* an over-long last line's rest */
        flush(c);
        if (c->closed)
            continue;
        if (c->eof && c->inlen == 0 && (c->inflight == 0 || c->nowait)
            && c->outoff == c->outlen) {
            svc__conn_close(c, NULL);    /* everything answered */
            continue;
        }
        /* Idle: nothing in flight, nothing moved either way for a while
         * (a client that holds a slot with half a line, or with nothing). */
        if (c->inflight == 0 && now - c->last > svc->cfg.idle_timeout) {
            idle++;
            svc__conn_close(c, apr_psprintf(c->p, "idle for %" APR_TIME_T_FMT " s: closing",
                                            apr_time_sec(svc->cfg.idle_timeout)));
            continue;
        }
        if (now_reading && may_read(c))
            want |= APR_POLLIN;
        if (c->outoff < c->outlen)
            want |= APR_POLLOUT;
        set_events(c, want);
    }
    if (idle)
        svc__log(svc, PP_LOG_INFO, "idle clients: closing %u (--idle-timeout)", idle);
}
