/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool queue-stats: what a Redis Streams queue of parkpoold workers
 * holds: the stream's length, each consumer group's pending entries and
 * lag, each consumer's pending entries and idle time, the results and the
 * dead letters.
 */
#include "cli.h"
#include "redis/connect.h"
#include "redis/qaddr.h"

#include <apr_strings.h>

#include <string.h>

static long long length(redisContext *c, const char *key)
{
    const char *argv[] = { "XLEN", key };
    redisReply *r = redisCommandArgv(c, 2, argv, NULL);
    long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    if (r)
        freeReplyObject(r);
    return n;
}

/* A value of XINFO's [name, value, ...] as text, or "-". */
static const char *info(const redisReply *m, const char *name, char *buf, apr_size_t len)
{
    apr_size_t i;

    for (i = 0; m->type == REDIS_REPLY_ARRAY && i + 1 < m->elements; i += 2) {
        const redisReply *k = m->element[i], *v = m->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || strcmp(k->str, name) != 0)
            continue;
        if (v->type == REDIS_REPLY_INTEGER)
            apr_snprintf(buf, len, "%" APR_INT64_T_FMT, (apr_int64_t)v->integer);
        else if (v->type == REDIS_REPLY_STRING || v->type == REDIS_REPLY_STATUS)
            apr_cpystrn(buf, v->str, len);
        else
            break;
        return buf;
    }
    return "-";
}

static void consumers(redisContext *c, const char *stream, const char *group)
{
    const char *argv[] = { "XINFO", "CONSUMERS", stream, group };
    redisReply *r = redisCommandArgv(c, 4, argv, NULL);
    char a[256], b[64], d[64];
    apr_size_t i;

    for (i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *m = r->element[i];
        const char *idle = info(m, "idle", b, sizeof(b));
        printf("    consumer %s: %s pending, idle %s ms\n", info(m, "name", a, sizeof(a)),
               info(m, "pending", d, sizeof(d)), idle);
    }
    if (r)
        freeReplyObject(r);
}

int cli_queue_stats(int argc, const char *const *argv, apr_pool_t *p)
{
    static const apr_getopt_option_t opts[] = {
        { "queue", 'q', 1, "" }, { NULL, 0, 0, NULL }
    };
    const char *url = NULL, *host, *stream, *optval;
    const char *gargv[3] = { "XINFO", "GROUPS", NULL };
    apr_getopt_t *os;
    redisContext *c;
    redisReply *r;
    char why[512], a[256], b[64], d[64], e[64];
    apr_size_t i;
    int port, opt;
    apr_status_t rv;

    apr_getopt_init(&os, p, argc, argv);
    os->errfn = NULL;
    while ((rv = apr_getopt_long(os, opts, &opt, &optval)) == APR_SUCCESS)
        url = optval;
    if (rv != APR_EOF || os->ind != argc || !url) {
        fputs("usage: parkpool queue-stats --queue redis://HOST[:PORT]/STREAM\n", stderr);
        return CLI_USAGE;
    }
    if (pp__queue_addr(url, &host, &port, &stream, why, sizeof(why), p) != APR_SUCCESS) {
        cli_error("%s", why);
        return CLI_USAGE;
    }
    if (!(c = pp__redis_connect(host, port, why, sizeof(why)))) {
        cli_error("cannot connect to %s:%d: %s", host, port, why);
        return CLI_FAILED;
    }
    printf("stream %s: %lld entries\n", stream, length(c, stream));
    gargv[2] = stream;
    r = redisCommandArgv(c, 3, gargv, NULL);
    for (i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *m = r->element[i];
        const char *name = info(m, "name", a, sizeof(a));
        printf("  group %s: %s pending, %s not yet read (lag), last delivered %s\n", name,
               info(m, "pending", b, sizeof(b)), info(m, "lag", d, sizeof(d)),
               info(m, "last-delivered-id", e, sizeof(e)));
        consumers(c, stream, name);
    }
    if (r)
        freeReplyObject(r);
    printf("results %s:results: %lld entries\n", stream,
           length(c, apr_pstrcat(p, stream, ":results", NULL)));
    printf("dead letters %s:dead: %lld entries\n", stream,
           length(c, apr_pstrcat(p, stream, ":dead", NULL)));
    redisFree(c);
    return CLI_OK;
}
