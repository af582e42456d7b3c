/* SPDX-License-Identifier: Apache-2.0 */
/* parkpoold's protocol, the pure parts (proto.h). */
#include "proto.h"
#include "parkpool/plugin.h"

#include <string.h>

void svc_proto_request(svc_request_t *req, char *line, apr_size_t len)
{
    char *type, *arg;
    apr_status_t rv;

    memset(req, 0, sizeof(*req));
    if (memchr(line, '\0', len)) {
        req->kind = SVC_REQ_BAD;
        req->why = "a NUL byte in the line";
        return;
    }
    if (line[0] == '!') {
        /* A command: its own word, then the line's end (CR LF or LF). */
        apr_size_t n = len;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n == 7 && !memcmp(line, "!output", 7)) {
            req->kind = SVC_REQ_OUTPUT;
            return;
        }
        if (n == 7 && !memcmp(line, "!nowait", 7)) {
            req->kind = SVC_REQ_NOWAIT;
            return;
        }
        req->kind = SVC_REQ_BAD;
        req->why = "unknown command (there are !output and !nowait)";
        return;
    }
    rv = pp_job_line_split(line, &type, &arg);
    if (rv == APR_EOF) {
        req->kind = SVC_REQ_NONE;
        return;
    }
    if (rv != APR_SUCCESS) {
        req->kind = SVC_REQ_BAD;
        req->why = "expected 'TYPE ARG'";
        return;
    }
    req->kind = SVC_REQ_TASK;
    req->type = type;
    req->arg = arg;
}

/* A decimal id at s: the id and what follows it, or 0 for anything else
 * (no digit, a sign, a leading zero, an overflow). */
static int parse_id(apr_uint64_t *id, const char **rest, const char *s)
{
    apr_uint64_t v = 0;
    const char *p = s;

    if (*p < '1' || *p > '9')
        return 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        apr_uint64_t d = (apr_uint64_t)(*p - '0');
        if (v > (APR_UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *id = v;
    *rest = p;
    return 1;
}

void svc_proto_answer(svc_answer_t *a, const char *line)
{
    const char *rest;

    memset(a, 0, sizeof(*a));
    a->text = "";
    a->kind = SVC_ANS_BAD;
    if (!strncmp(line, SVC_PROTO_HELLO, sizeof(SVC_PROTO_HELLO) - 1)) {
        if (parse_id(&a->id, &rest, line + sizeof(SVC_PROTO_HELLO) - 1) && !*rest)
            a->kind = SVC_ANS_HELLO;
    }
    else if (!strcmp(line, "ok !output") || !strcmp(line, "ok !nowait")) {
        a->kind = SVC_ANS_OK;
        a->text = line + 3;
    }
    else if (!strncmp(line, "ok ", 3)) {
        if (parse_id(&a->id, &rest, line + 3) && !*rest)
            a->kind = SVC_ANS_OK;
    }
    else if (!strncmp(line, "error: ", 7)) {
        a->kind = SVC_ANS_ERROR;
        a->text = line + 7;
    }
    else if (!strncmp(line, "out ", 4)) {
        if (parse_id(&a->id, &rest, line + 4) && *rest == ' ') {
            a->kind = SVC_ANS_OUT;
            a->text = rest + 1;
        }
    }
    else if (!strncmp(line, "done ", 5) && parse_id(&a->id, &rest, line + 5) && *rest++ == ' ') {
        if (!strcmp(rest, "ok")) {
            a->kind = SVC_ANS_DONE;
            a->status = 0;
        }
        else if (!strncmp(rest, "failed: ", 8)) {
            a->kind = SVC_ANS_DONE;
            a->status = 1;
            a->text = rest + 8;
        }
        else if (!strcmp(rest, "cancelled")) {
            a->kind = SVC_ANS_DONE;
            a->status = 2;
        }
    }
}
