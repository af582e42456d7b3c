/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: parkpoold's protocol (src/daemon/proto.c), both
 * sides: the first byte picks the daemon's parse of a client line or the
 * client's parse of a daemon line. Besides the sanitizers' checks, it
 * asserts what the callers rely on: a task's type and argument point into
 * the line, a refusal says why, and an answer parsed as "ok", "done" or
 * "hello" prints back as exactly the line it came from (no two lines
 * mean the same, so a client cannot be fooled by a lookalike).
 */
#include "config.h"
#include "daemon/proto.h"

#include <apr_strings.h>

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void request(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    svc_request_t req;

    if (!line)
        return;
    memcpy(line, data, size);
    line[size] = '\0';
    svc_proto_request(&req, line, size);
    switch (req.kind) {
    case SVC_REQ_TASK:
        assert(req.type >= line && req.type < line + size && *req.type);
        assert(req.arg > req.type && req.arg <= line + size);
        assert(!memchr(line, '\0', size) || req.arg + strlen(req.arg) <= line + size);
        break;
    case SVC_REQ_BAD:
        assert(req.why && *req.why);
        break;
    case SVC_REQ_OUTPUT:
    case SVC_REQ_NOWAIT:
        assert(size >= 7 && (!memcmp(line, "!output", 7) || !memcmp(line, "!nowait", 7)));
        break;
    case SVC_REQ_NONE:
        break;
    }
    free(line);
}

static void answer(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1), again[64];
    svc_answer_t a;

    if (!line)
        return;
    memcpy(line, data, size);
    line[size] = '\0';
    svc_proto_answer(&a, line);
    assert(a.text);
    switch (a.kind) {
    case SVC_ANS_HELLO:
        apr_snprintf(again, sizeof(again), SVC_PROTO_HELLO "%" APR_UINT64_T_FMT, a.id);
        assert(!strcmp(again, line));
        break;
    case SVC_ANS_OK:
        if (*a.text) {
            assert(!strcmp(line, "ok !output") || !strcmp(line, "ok !nowait"));
        }
        else {
            apr_snprintf(again, sizeof(again), "ok %" APR_UINT64_T_FMT, a.id);
            assert(!strcmp(again, line));
        }
        break;
    case SVC_ANS_DONE:
        assert(a.status >= 0 && a.status <= 2);
        apr_snprintf(again, sizeof(again), "done %" APR_UINT64_T_FMT " ", a.id);
        assert(!strncmp(again, line, strlen(again)));
        break;
    case SVC_ANS_OUT:
    case SVC_ANS_ERROR:
        assert(a.text >= line && a.text <= line + strlen(line));
        break;
    case SVC_ANS_BAD:
        break;
    }
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        answer(data + 1, size - 1);
    else
        request(data + 1, size - 1);
    return 0;
}
