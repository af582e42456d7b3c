/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client side of the service (svc_send, svc.h): one thread reads the
 * input and sends its lines while this one reads the answers, so neither
 * side waits for the other: the daemon may stop reading us (we have as
 * many tasks in flight as it allows) while we read what it says. When the
 * input ends the sender shuts down its side; the daemon closes the
 * connection once it has answered everything (with !nowait, every line;
 * else every task's end too), so the reader needs no timeout: blocking
 * calls throughout (a timed-out recv leaves a Windows socket unusable).
 */
#include "svc.h"
#include "listen.h"
#include "proto.h"

#include <apr_strings.h>
#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>

#include <stdlib.h>
#include <string.h>

typedef struct sender {
    apr_socket_t       *sock;
    FILE               *in, *out, *err;
    apr_thread_mutex_t *lock;     /* out, and what follows */
    apr_uint64_t        sent;     /* lines sent, each to be answered */
    apr_uint64_t        refused;  /* refused here: too long */
    apr_uint64_t        lineno;
    int                 done;     /* the sender is finished */
    apr_status_t        rv;       /* why it finished, if not at the input's end */
    char               *buf;      /* input, 2 * SVC_MAX_LINE */
    apr_size_t          have, pos;
    int                 eof;
} sender;

/* Send all of data (blocking: a daemon that is not reading us is waited
 * out). */
static apr_status_t send_all(apr_socket_t *s, const char *data, apr_size_t len)
{
    while (len > 0) {
        apr_size_t n = len;
        apr_status_t rv = apr_socket_send(s, data, &n);
        data += n;
        len -= n;
        if (rv != APR_SUCCESS)
            return rv;
    }
    return APR_SUCCESS;
}

/* A command at the start, and its answer. */
static apr_status_t command(apr_socket_t *s, const char *cmd, char *buf, apr_size_t size,
                            apr_size_t *have, apr_size_t *pos);

/* The next input line, with its LF (added to a last line without one):
 * 1, 0 at the end, -1 for a line too long (skipped to its LF). */
static int next_line(sender *sd, char **line, apr_size_t *len)
{
    for (;;) {
        char *lf = memchr(sd->buf + sd->pos, '\n', sd->have - sd->pos);
        apr_size_t n;
        if (lf) {
            *line = sd->buf + sd->pos;
            *len = (apr_size_t)(lf - *line) + 1;
            sd->pos += *len;
            sd->lineno++;
            return *len > SVC_MAX_LINE ? -1 : 1;
        }
        if (sd->eof) {
            if (sd->pos == sd->have)
                return 0;
            *line = sd->buf + sd->pos;
            *len = sd->have - sd->pos;
            sd->pos = sd->have;
            sd->lineno++;
            if (*len >= SVC_MAX_LINE)
                return -1;
            (*line)[(*len)++] = '\n';    /* buf has room: see below */
            return 1;
        }
        if (sd->have - sd->pos > SVC_MAX_LINE) {
            /* Too long already: drop what we have, then up to the LF. */
            int c;
            sd->pos = sd->have = 0;
            while ((c = getc(sd->in)) != EOF && c != '\n')
                ;
            sd->lineno++;
            if (c == EOF)
                sd->eof = 1;
            return -1;
        }
        memmove(sd->buf, sd->buf + sd->pos, sd->have - sd->pos);
        sd->have -= sd->pos;
        sd->pos = 0;
        /* Room for a byte more than read, for a last line's LF. */
        n = fread(sd->buf + sd->have, 1, 2 * SVC_MAX_LINE - 1 - sd->have, sd->in);
        sd->have += n;
        if (n == 0)
            sd->eof = 1;
    }
}

static void *APR_THREAD_FUNC sender_main(apr_thread_t *thread, void *data)
{
    (void)thread;
    sender *sd = data;
    apr_status_t rv = APR_SUCCESS;
    char *line;
    apr_size_t len;
    int got;

    while ((got = next_line(sd, &line, &len)) != 0) {
        svc_request_t req;
        char *copy;
        if (got < 0) {
            apr_thread_mutex_lock(sd->lock);
            sd->refused++;
            fprintf(sd->out, "error: line %" APR_UINT64_T_FMT " is longer than %d bytes: "
                    "not sent\n", sd->lineno, SVC_MAX_LINE - 1);
            fflush(sd->out);
            apr_thread_mutex_unlock(sd->lock);
            continue;
        }
        /* Lines that hold no task get no answer: skip them here, by the
         * service's own grammar. The copy is the parser's to modify. */
        copy = malloc(len + 1);
        if (!copy) {
            rv = APR_ENOMEM;
            break;
        }
        memcpy(copy, line, len);
        copy[len] = '\0';
        svc_proto_request(&req, copy, len);
        free(copy);
        if (req.kind == SVC_REQ_NONE)
            continue;
        apr_thread_mutex_lock(sd->lock);
        sd->sent++;    /* before it can be answered */
        apr_thread_mutex_unlock(sd->lock);
        if ((rv = send_all(sd->sock, line, len)) != APR_SUCCESS)
            break;
    }
    if (rv == APR_SUCCESS && ferror(sd->in))
        rv = APR_EGENERAL;
    /* Done before the shutdown: the daemon closes the connection once it
     * has answered everything, and the reader, seeing that, must find us
     * done. */
    apr_thread_mutex_lock(sd->lock);
    sd->rv = rv;
    sd->done = 1;
    apr_thread_mutex_unlock(sd->lock);
    apr_socket_shutdown(sd->sock, APR_SHUTDOWN_WRITE);
    /* A return, not apr_thread_exit(): nobody reads the exit status, and
     * pthread_exit trips ASan's thread teardown (a false stack overflow). */
    return NULL;
}

/* The reader's side of the conversation. */
typedef struct tally {
    apr_uint64_t answered, accepted, refused, ended, failed, cancelled;
} tally;

/* Read one line from s into buf (without its LF): APR_SUCCESS, APR_EOF,
 * or the socket's error. */
static apr_status_t read_line(apr_socket_t *s, char *buf, apr_size_t size, apr_size_t *have,
                              apr_size_t *pos, char **line)
{
    for (;;) {
        char *lf = memchr(buf + *pos, '\n', *have - *pos);
        apr_size_t n;
        apr_status_t rv;
        if (lf) {
            *lf = '\0';
            *line = buf + *pos;
            *pos = (apr_size_t)(lf - buf) + 1;
            return APR_SUCCESS;
        }
        memmove(buf, buf + *pos, *have - *pos);
        *have -= *pos;
        *pos = 0;
        if (*have == size)
            return APR_EGENERAL;    /* longer than any answer */
        n = size - *have;
        rv = apr_socket_recv(s, buf + *have, &n);
        *have += n;
        if (n == 0)
            return rv == APR_SUCCESS ? APR_EOF : rv;
    }
}

static apr_status_t command(apr_socket_t *s, const char *cmd, char *buf, apr_size_t size,
                            apr_size_t *have, apr_size_t *pos)
{
    char *line;
    apr_status_t rv = send_all(s, cmd, strlen(cmd));

    if (rv == APR_SUCCESS)
        rv = send_all(s, "\n", 1);
    if (rv == APR_SUCCESS)
        rv = read_line(s, buf, size, have, pos, &line);
    if (rv == APR_SUCCESS && (strncmp(line, "ok ", 3) != 0 || strcmp(line + 3, cmd) != 0))
        rv = APR_EGENERAL;
    return rv;
}

apr_status_t svc_send(const char *address, int flags, FILE *in, FILE *out, FILE *err,
                      apr_pool_t *p)
{
    apr_sockaddr_t *sa;
    apr_socket_t *s;
    const char *unix_path, *why = NULL;
    apr_size_t have = 0, pos = 0, size = SVC_MAX_LINE + 64;
    char *buf = apr_palloc(p, size), *line, msg[256];
    apr_thread_t *thread;
    sender *sd;
    svc_answer_t ans;
    tally t;
    apr_status_t rv, srv;
    int complete = 0, sender_done;

    memset(&t, 0, sizeof(t));
    rv = svc_address_parse(&sa, &unix_path, address, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_create(&s, sa->family, SOCK_STREAM, unix_path ? 0 : APR_PROTO_TCP, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_timeout_set(s, apr_time_from_sec(10));
    if (rv == APR_SUCCESS)
        rv = apr_socket_connect(s, sa);
    if (rv == APR_SUCCESS)
        rv = read_line(s, buf, size, &have, &pos, &line);
    if (rv != APR_SUCCESS) {
        fprintf(err, "--send: cannot talk to %s: %s\n", address,
                rv == APR_EINVAL ? "not an address (unix:PATH, a PATH with a '/', tcp:PORT, "
                "tcp:HOST:PORT)" : pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    svc_proto_answer(&ans, line);
    if (ans.kind == SVC_ANS_ERROR) {
        fprintf(err, "--send: %s refused the connection: %s\n", address, ans.text);
        return APR_EGENERAL;
    }
    if (ans.kind != SVC_ANS_HELLO || ans.id != SVC_PROTO_VERSION) {
        fprintf(err, "--send: %s does not speak parkpoold's protocol %d: it said '%s'\n",
                address, SVC_PROTO_VERSION, line);
        return APR_EGENERAL;
    }
    rv = APR_SUCCESS;
    if (flags & SVC_SEND_OUTPUT)
        rv = command(s, "!output", buf, size, &have, &pos);
    if (rv == APR_SUCCESS && (flags & SVC_SEND_NOWAIT))
        rv = command(s, "!nowait", buf, size, &have, &pos);
    if (rv != APR_SUCCESS) {
        fprintf(err, "--send: %s did not take a command: %s\n", address,
                pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }
    apr_socket_timeout_set(s, -1);

    sd = apr_pcalloc(p, sizeof(*sd));
    sd->sock = s;
    sd->in = in;
    sd->out = out;
    sd->err = err;
    sd->buf = apr_palloc(p, 2 * SVC_MAX_LINE);
    rv = apr_thread_mutex_create(&sd->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_create(&thread, NULL, sender_main, sd, p);
    if (rv != APR_SUCCESS) {
        fprintf(err, "--send: %s\n", pp_strerror(rv, msg, sizeof(msg)));
        return rv;
    }

    for (;;) {
        rv = read_line(s, buf, size, &have, &pos, &line);
        apr_thread_mutex_lock(sd->lock);
        if (rv == APR_SUCCESS) {
            fprintf(out, "%s\n", line);
            fflush(out);
            svc_proto_answer(&ans, line);
            switch (ans.kind) {
            case SVC_ANS_OK:    t.answered++; t.accepted++; break;
            case SVC_ANS_ERROR:
                /* An answer to a line, or the daemon's last word. */
                if (t.answered < sd->sent) { t.answered++; t.refused++; }
                else why = apr_pstrdup(p, ans.text);
                break;
            case SVC_ANS_DONE:
                t.ended++;
                if (ans.status == 1) t.failed++;
                if (ans.status == 2) t.cancelled++;
                break;
            default: break;
            }
        }
        complete = sd->done && t.answered == sd->sent
                   && ((flags & SVC_SEND_NOWAIT) || t.ended == t.accepted);
        apr_thread_mutex_unlock(sd->lock);
        if (rv != APR_SUCCESS)
            break;
    }
    apr_thread_mutex_lock(sd->lock);
    sender_done = sd->done;
    srv = sd->rv;
    t.refused += sd->refused;
    apr_thread_mutex_unlock(sd->lock);
    apr_socket_close(s);    /* a sender still writing fails and ends */
    if (sender_done) {
        apr_status_t ignored;
        apr_thread_join(&ignored, thread);
    }
    /* else the sender waits for input that the caller's exit ends. */

    fprintf(err, "--send: %" APR_UINT64_T_FMT " accepted (%" APR_UINT64_T_FMT " ok, %"
            APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT " cancelled%s), %" APR_UINT64_T_FMT
            " refused", t.accepted, t.ended - t.failed - t.cancelled, t.failed, t.cancelled,
            t.ended < t.accepted ? apr_psprintf(p, ", %" APR_UINT64_T_FMT " not ended yet",
                                                t.accepted - t.ended) : "", t.refused);
    if (!complete) {
        /* The daemon went before everything was answered. */
        if (why)
            fprintf(err, ": the daemon said '%s' and closed the connection\n", why);
        else if (rv == APR_EOF)
            fprintf(err, ": the daemon closed the connection before answering everything\n");
        else
            fprintf(err, ": connection lost: %s\n", pp_strerror(rv, msg, sizeof(msg)));
        return rv == APR_EOF ? APR_EGENERAL : rv;
    }
    if (srv != APR_SUCCESS) {
        fprintf(err, ": stopped sending: %s\n", pp_strerror(srv, msg, sizeof(msg)));
        return srv;
    }
    fprintf(err, "\n");
    return t.refused || t.failed || t.cancelled ? APR_EGENERAL : APR_SUCCESS;
}
