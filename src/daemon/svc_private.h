/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What svc.c (the loop), conn.c (a client's connection) and job.c (a
 * client's task) share. Threads: everything here belongs to the loop's
 * thread (svc_serve, then svc_drain), except what the engine's sink
 * touches, on any thread, each marked: a job's outcome and captured output
 * before it is handed back, and the hand-back list under done_lock.
 */
#ifndef PP_SVC_PRIVATE_H
#define PP_SVC_PRIVATE_H

#include "svc.h"
#include "proto.h"
#include "engine.h"
#include "capture.h"

#include <apr_poll.h>
#include <apr_thread_mutex.h>

typedef struct svc_conn svc_conn;
typedef struct svc_job svc_job;

struct svc_conn {
    apr_pool_t     *p;
    svc_t          *svc;
    apr_socket_t   *sock;
    apr_pollfd_t    pfd;
    apr_int16_t     events;      /* what the pollset has for it; 0: not in it */
    char           *in;          /* a partial line: SVC_MAX_LINE + 1 bytes */
    apr_size_t      inlen;
    int             skipping;    /* dropping an over-long line up to its LF */
    char           *out;         /* answers not yet sent (malloc'd) */
    apr_size_t      outoff, outlen, outcap;
    apr_uint32_t    inflight;    /* its jobs not yet ended */
    int             want_output;
    int             nowait;      /* no outcomes: close once the lines are answered */
    int             eof;         /* the client sent all it will */
    int             closed;      /* the socket is gone; the record waits for its jobs */
    apr_time_t      last;        /* its last byte in or out */
    svc_conn       *next, *prev; /* svc->conns */
};

struct svc_job {
    svc_t                *svc;
    svc_conn             *conn;
    apr_uint64_t          id;
    int                   forward;   /* its output goes back to the client */
    int                   quiet;     /* its outcome is not sent (!nowait) */
    /* The engine's sink's, until the job is handed back. */
    int                   outcome;   /* SVC_OUTCOME_* */
    char                  why[256];  /* how it failed */
    svc_capture_t         out;       /* its output lines, if forward */
    svc_job              *next;      /* the hand-back list */
    char                  type_name[];
};

struct svc_t {
    apr_pool_t         *p;
    svc_config_t        cfg;
    const svc_allow_t  *allow;
    svc_engine_t       *engine;
    apr_interval_time_t engine_wait; /* the longest its tend() let the loop sleep */
    apr_socket_t       *listener;
    apr_pollfd_t        lpfd;
    const char         *unix_path;   /* removed when the service stops */
    apr_pollset_t      *ps;
    svc_conn           *conns;
    apr_uint32_t        nconns;      /* open ones (not closed) */
    apr_uint64_t        inflight;    /* every job not yet ended */
    apr_uint64_t        next_id, accepted, refused;
    apr_uint64_t        ok, failed, cancelled;    /* jobs ended, by outcome */
    apr_thread_mutex_t *out_lock;    /* the output file */
    apr_file_t         *out;
    volatile apr_uint32_t write_failed;
    volatile apr_uint32_t stop, reload;
    apr_thread_mutex_t *wake_lock;   /* svc_stop/svc_reload/job ends vs. the pollset's end */
    int                 closed;      /* under wake_lock: no pollset to wake */
    apr_thread_mutex_t *done_lock;
    svc_job            *done_head, *done_tail;   /* under done_lock */
};

void svc__log(const svc_t *svc, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Wake the loop (from any thread). */
void svc__wake(svc_t *svc);

/* conn.c */
void svc__accept(svc_t *svc);
void svc__conn_event(svc_conn *c, apr_int16_t rtnevents);
/** Queue an answer line (without its LF) for the client. */
void svc__conn_say(svc_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void svc__conn_say_bytes(svc_conn *c, const char *prefix, const char *data, apr_size_t len);
/** Close the socket (after a last "error: WHY" when why is set); the
 *  record stays until its jobs have ended and svc__conns_tend() frees it. */
void svc__conn_close(svc_conn *c, const char *why);
/** After events and hand-backs: write what waits, close what is done or
 *  idle, free what is closed and no job holds, and poll each for what it
 *  needs now. now_reading: 0 once the service stopped accepting. */
void svc__conns_tend(svc_t *svc, int now_reading);
/** A job of c ended (the loop's thread). */
void svc__conn_job_ended(svc_conn *c);

/* job.c */
/** Make and queue a job for c's line TYPE ARG; answers the client. */
void svc__job_submit(svc_conn *c, const char *type, const char *arg);
/** Take the jobs the engine handed back and answer their clients. */
void svc__jobs_collect(svc_t *svc);
/** The engine's sink: a job's output to its client or the file, its end
 *  to the hand-back list. */
void svc__job_sink(svc_t *svc, svc_sink_t *sink);

#endif
