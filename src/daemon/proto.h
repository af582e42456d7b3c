/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpoold's protocol, version 1 (parkpoold(8), PROTOCOL): lines of text,
 * each ended by LF. The daemon greets each client with
 *
 *   hello parkpoold 1
 *
 * then reads lines: "TYPE ARG" (a task: answered "ok ID" or "error: WHY"),
 * "!output" (answered "ok !output": from now on, the output lines of this
 * client's tasks come back as "out ID LINE"), "!nowait" (answered
 * "ok !nowait": no "out" or "done" lines for this client's tasks from now
 * on, and the connection closes once its lines are answered), blank lines
 * and lines that start with '#' (no answer). When a task ends the daemon sends
 * "done ID ok", "done ID failed: WHY" or "done ID cancelled". Answers to
 * lines come in the order of the lines; "out" and "done" lines come when
 * tasks end, between them. Before it closes a connection on its own the
 * daemon sends "error: WHY".
 *
 * These are the pure parts, both sides': parsing a client's line and
 * parsing the daemon's answers (fuzzed: tests/fuzz/fuzz_proto.c).
 */
#ifndef PP_SVC_PROTO_H
#define PP_SVC_PROTO_H

#include <apr.h>
#include <apr_errno.h>

#define SVC_PROTO_VERSION 1
#define SVC_PROTO_HELLO   "hello parkpoold "
/** The longest line either side sends or takes, with its LF. */
#define SVC_MAX_LINE      65536

typedef enum {
    SVC_REQ_NONE,       /**< blank or a comment: no answer */
    SVC_REQ_TASK,       /**< type, arg */
    SVC_REQ_OUTPUT,     /**< "!output" */
    SVC_REQ_NOWAIT,     /**< "!nowait" */
    SVC_REQ_BAD         /**< why says what is wrong */
} svc_req_kind;

typedef struct svc_request_t {
    svc_req_kind kind;
    char        *type, *arg;   /* SVC_REQ_TASK: in the line */
    const char  *why;          /* SVC_REQ_BAD: static text */
} svc_request_t;

/**
 * Parse one line from a client: len bytes ending in its LF (or not, for a
 * last line), with a NUL at line[len]; the line is modified (type and arg
 * point into it).
 */
void svc_proto_request(svc_request_t *req, char *line, apr_size_t len);

typedef enum {
    SVC_ANS_HELLO,      /**< id: the protocol version */
    SVC_ANS_OK,         /**< id; or text, the command answered ("!output") */
    SVC_ANS_ERROR,      /**< text: why */
    SVC_ANS_OUT,        /**< id, text: the output line */
    SVC_ANS_DONE,       /**< id, status: 0 ok, 1 failed (text: why), 2 cancelled */
    SVC_ANS_BAD         /**< not a line of this protocol */
} svc_ans_kind;

typedef struct svc_answer_t {
    svc_ans_kind kind;
    apr_uint64_t id;
    int          status;
    const char  *text;    /* into the line, or "" */
} svc_answer_t;

/** Parse one line from the daemon, without its LF, NUL-terminated. */
void svc_proto_answer(svc_answer_t *ans, const char *line);

#endif
