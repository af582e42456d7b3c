/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool submit: the producer of a Redis Streams queue whose workers are
 * parkpoold --queue (parkpoold(8), QUEUE). Job lines in (parkpool run's
 * grammar), one entry each (type, arg, and an id of ours: PREFIX-N); with
 * --wait, the results and dead letters of those ids read back as they
 * come, printed as parkpool run prints tasks, with its exit status.
 *
 * The ids' prefix (the time in ms and our pid) tells our results from
 * others'; a result seen twice (an entry run twice: at least once) is
 * printed once. --wait reads the results streams from their ends as they
 * were before the first entry went in, so no result of ours can be missed
 * (unless trimmed by --results-maxlen before it was read).
 */
#include "cli.h"
#include "cli_os.h"
#include "redis/connect.h"
#include "redis/qaddr.h"
#include "redis/stream.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIPELINE 1000

typedef struct job_t {
    const char *type, *arg;
} job_t;

typedef struct submit_t {
    apr_pool_t         *p;
    const char         *host, *stream, *results, *dead, *prefix;
    int                 port;
    apr_array_header_t *jobs;        /* job_t */
    char               *seen;        /* one per job: its result was printed */
    apr_uint64_t        nseen, ok, failed, dead_letters;
    int                 json;
} submit_t;

static volatile apr_uint32_t interrupted;

static void on_interrupt(void)
{
    apr_atomic_set32(&interrupted, 1);
}

static void submit_usage(FILE *f)
{
    fputs("usage: parkpool submit --queue redis://HOST[:PORT]/STREAM [-f FILE] [--type TYPE]\n"
          "                       [--wait [--json]]\n"
          "  Add a queue entry for each job line of FILE (or stdin): 'TYPE ARG', or ARG\n"
          "  with --type. --wait: print each result as parkpool run prints a task and exit\n"
          "  0 when all succeeded, 1 otherwise. See parkpool(1).\n", f);
}

/* The job lines of f: all of them read and checked before any is sent. */
static int read_jobs(submit_t *s, FILE *f, const char *type, const char *name)
{
    char *line = NULL, *t, *a;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    job_t *j;

    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)n)) {
            cli_error("%s:%ld: a NUL byte in a job line", name, lineno);
            free(line);
            return CLI_USAGE;
        }
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        j = apr_array_push(s->jobs);
        if (type) {
            j->type = type;
            j->arg = apr_pstrdup(s->p, line);
        }
        else if (pp_job_line_split(line, &t, &a) == APR_SUCCESS) {
            j->type = apr_pstrdup(s->p, t);
            j->arg = apr_pstrdup(s->p, a);
        }
        else {
            cli_error("%s:%ld: expected 'TYPE ARG', got '%s'", name, lineno, line);
            free(line);
            return CLI_USAGE;
        }
    }
    free(line);
    if (ferror(f)) {
        cli_error("%s: read error", name);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The last entry's id of key, or "0-0". */
static const char *last_id(redisContext *c, const char *key, apr_pool_t *p)
{
    const char *argv[] = { "XREVRANGE", key, "+", "-", "COUNT", "1" };
    redisReply *r = redisCommandArgv(c, 6, argv, NULL);
    const char *id = "0-0";

    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1
        && r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2)
        id = apr_pstrdup(p, r->element[0]->element[0]->str);
    if (r)
        freeReplyObject(r);
    return id;
}

/* XADD every job, PIPELINE at a time. */
static int add_all(submit_t *s, redisContext *c)
{
    int i, from, upto, total = s->jobs->nelts;
    char id[96];
    void *reply;
    redisReply *r;

    for (from = 0; from < total; from = upto) {
        upto = from + PIPELINE < total ? from + PIPELINE : total;
        for (i = from; i < upto; i++) {
            const job_t *j = &APR_ARRAY_IDX(s->jobs, i, job_t);
            const char *argv[] = { "XADD", s->stream, "*", "type", j->type, "arg", j->arg,
                                   "id", id };
            apr_snprintf(id, sizeof(id), "%s-%d", s->prefix, i + 1);
            redisAppendCommandArgv(c, 9, argv, NULL);
        }
        for (i = from; i < upto; i++) {
            if (redisGetReply(c, &reply) != REDIS_OK) {
                cli_error("%s: %s (%d of %d entries added)", s->stream, c->errstr, i, total);
                return CLI_FAILED;
            }
            r = reply;
            if (r->type == REDIS_REPLY_ERROR) {
                cli_error("%s: %s (%d of %d entries added)", s->stream, r->str, i, total);
                freeReplyObject(r);
                return CLI_FAILED;
            }
            freeReplyObject(r);
        }
    }
    return CLI_OK;
}

static void print_json(const redisReply *f, const char *status, const char *error)
{
    const char *keys[] = { "id", "entry", "type", "arg" }, *v, *out;
    apr_size_t i, len = 0;

    fputc('{', stdout);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        printf("%s\"%s\":", i ? "," : "", keys[i]);
        if ((v = pp__stream_field(f, keys[i], &len)) != NULL)
            cli_json_bytes(stdout, v, len);
        else
            fputs("null", stdout);
    }
    printf(",\"status\":\"%s\",\"error\":", status);
    if (error)
        cli_json_string(stdout, error);
    else
        fputs("null", stdout);
    fputs(",\"output\":[", stdout);
    if ((out = pp__stream_field(f, "output", &len)) != NULL && len) {
        const char *end = out + len, *nl;
        for (i = 0; out <= end; out = nl + 1, i++) {
            nl = memchr(out, '\n', (apr_size_t)(end - out));
            if (!nl)
                nl = end;
            fputs(i ? "," : "", stdout);
            cli_json_bytes(stdout, out, (apr_size_t)(nl - out));
        }
    }
    printf("],\"host\":");
    if ((v = pp__stream_field(f, "host", &len)) != NULL)
        cli_json_bytes(stdout, v, len);
    else
        fputs("null", stdout);
    v = pp__stream_field(f, "seconds", NULL);
    printf(",\"seconds\":%s}\n", v ? v : "null");
}

/* A result or dead letter: print it if it is one of ours not yet seen. */
static void take(submit_t *s, const redisReply *f, int dead)
{
    apr_size_t plen = strlen(s->prefix), len;
    const char *id = pp__stream_field(f, "id", NULL), *v, *error = NULL, *status;
    char *end;
    long n;

    if (!id || strncmp(id, s->prefix, plen) != 0 || id[plen] != '-')
        return;
    n = strtol(id + plen + 1, &end, 10);
    if (*end || n < 1 || n > s->jobs->nelts || s->seen[n - 1])
        return;
    s->seen[n - 1] = 1;
    s->nseen++;
    if (dead) {
        status = "dead";
        error = pp__stream_field(f, "reason", NULL);
        s->dead_letters++;
    }
    else if ((v = pp__stream_field(f, "status", NULL)) != NULL && strcmp(v, "ok") == 0) {
        status = "ok";
        s->ok++;
    }
    else {
        status = "failed";
        error = pp__stream_field(f, "error", NULL);
        s->failed++;
    }
    if (s->json) {
        print_json(f, status, error);
        return;
    }
    if ((v = pp__stream_field(f, "output", &len)) != NULL && len) {
        fwrite(v, 1, len, stdout);
        fputc('\n', stdout);
    }
    if (error || strcmp(status, "ok") != 0)
        cli_error("%s %s: %s%s", pp__stream_field(f, "type", NULL) ? pp__stream_field(f, "type", NULL) : "?",
                  pp__stream_field(f, "arg", NULL) ? pp__stream_field(f, "arg", NULL) : "",
                  dead ? "dead letter: " : "", error ? error : "failed");
}

/* A connection lost while following: made again, with backoff, until it
 * works or Ctrl-C. */
static redisContext *reconnect(const submit_t *s, const char *lost)
{
    apr_interval_time_t wait = apr_time_from_msec(100);
    redisContext *c;
    char why[256];

    cli_error("%s: %s; connecting again", s->results, lost);
    while (!apr_atomic_read32(&interrupted)) {
        if ((c = pp__redis_connect(s->host, s->port, why, sizeof(why))) != NULL) {
            cli_error("%s: connected again", s->results);
            return c;
        }
        apr_sleep(wait);
        wait = wait * 2 > apr_time_from_sec(5) ? apr_time_from_sec(5) : wait * 2;
    }
    return NULL;
}

/* Where follow is in the results and the dead letters. */
typedef struct following_t {
    submit_t *s;
    char      rid[64], did[64];
} following_t;

static void take_entry(void *baton, const char *key, const char *id, const redisReply *fields)
{
    following_t *fl = baton;
    int dead = strcmp(key, fl->s->dead) == 0;

    apr_cpystrn(dead ? fl->did : fl->rid, id, sizeof(fl->rid));
    if (fields)
        take(fl->s, fields, dead);
}

/* Follow the results and the dead letters from their ends before the
 * submit until every job has one. A lost connection is made again: the
 * streams are read on from where they were. */
static int follow(submit_t *s, redisContext **cp, const char *from_results,
                  const char *from_dead)
{
    following_t fl = { s, { 0 }, { 0 } };
    const char *argv[] = { "XREAD", "COUNT", "1000", "BLOCK", "1000", "STREAMS", s->results,
                           s->dead, fl.rid, fl.did };
    redisReply *r;

    apr_cpystrn(fl.rid, from_results, sizeof(fl.rid));
    apr_cpystrn(fl.did, from_dead, sizeof(fl.did));
    while (s->nseen < (apr_uint64_t)s->jobs->nelts && !apr_atomic_read32(&interrupted)) {
        r = redisCommandArgv(*cp, 10, argv, NULL);
        if (!r) {
            char lost[256];
            apr_cpystrn(lost, (*cp)->errstr, sizeof(lost));
            redisFree(*cp);
            if (!(*cp = reconnect(s, lost)))
                return CLI_INTERRUPTED;
            continue;
        }
        if (r->type == REDIS_REPLY_ERROR) {
            if (strncmp(r->str, "LOADING", 7) == 0) {
                /* A restarted server loading its data: soon ready. */
                freeReplyObject(r);
                apr_sleep(apr_time_from_msec(100));
                continue;
            }
            cli_error("%s: %s", s->results, r->str);
            freeReplyObject(r);
            return CLI_FAILED;
        }
        pp__stream_read(r, take_entry, &fl);
        freeReplyObject(r);
        fflush(stdout);
    }
    return CLI_OK;
}

int cli_submit(int argc, const char *const *argv, apr_pool_t *p)
{
    static const apr_getopt_option_t opts[] = {
        { "queue", 'q', 1, "" }, { "file", 'f', 1, "" }, { "type", 't', 1, "" },
        { "wait", 'w', 0, "" }, { "json", 'J', 0, "" }, { "help", 'h', 0, "" },
        { NULL, 0, 0, NULL }
    };
    const char *url = NULL, *file = "-", *type = NULL, *optval, *from_r = NULL, *from_d = NULL;
    submit_t s;
    apr_getopt_t *os;
    redisContext *c;
    apr_time_t start;
    FILE *f;
    char why[512];
    int opt, wait = 0, rc;
    double secs;
    apr_status_t rv;

    memset(&s, 0, sizeof(s));
    s.p = p;
    apr_getopt_init(&os, p, argc, argv);
    os->errfn = NULL;
    while ((rv = apr_getopt_long(os, opts, &opt, &optval)) == APR_SUCCESS) {
        switch (opt) {
        case 'q': url = optval; break;
        case 'f': file = optval; break;
        case 't': type = optval; break;
        case 'w': wait = 1; break;
        case 'J': s.json = 1; break;
        default: submit_usage(stdout); return CLI_OK;
        }
    }
    if (rv != APR_EOF || os->ind != argc || !url || (s.json && !wait)) {
        submit_usage(stderr);
        return CLI_USAGE;
    }
    if (pp__queue_addr(url, &s.host, &s.port, &s.stream, why, sizeof(why), p) != APR_SUCCESS) {
        cli_error("%s", why);
        return CLI_USAGE;
    }
    s.results = apr_pstrcat(p, s.stream, ":results", NULL);
    s.dead = apr_pstrcat(p, s.stream, ":dead", NULL);
    s.prefix = apr_psprintf(p, "s%" APR_UINT64_T_HEX_FMT "-%ld",
                            (apr_uint64_t)apr_time_as_msec(apr_time_now()), (long)getpid());
    s.jobs = apr_array_make(p, 1024, sizeof(job_t));
    if (strcmp(file, "-") == 0) {
        rc = read_jobs(&s, stdin, type, "stdin");
    }
    else if ((f = fopen(file, "r")) != NULL) {
        rc = read_jobs(&s, f, type, file);
        fclose(f);
    }
    else {
        cli_error("cannot open %s", file);
        return CLI_USAGE;
    }
    if (rc != CLI_OK)
        return rc;
    if (!(c = pp__redis_connect(s.host, s.port, why, sizeof(why)))) {
        cli_error("cannot connect to %s:%d: %s", s.host, s.port, why);
        return CLI_FAILED;
    }
    if (wait) {
        from_r = last_id(c, s.results, p);
        from_d = last_id(c, s.dead, p);
        s.seen = apr_pcalloc(p, (apr_size_t)s.jobs->nelts + 1);
        cli_os_watch_interrupts(on_interrupt);
    }
    start = apr_time_now();
    rc = add_all(&s, c);
    if (rc == CLI_OK && !wait)
        fprintf(stderr, "parkpool: %d entr%s added to %s (ids %s-1 to %s-%d)\n", s.jobs->nelts,
                s.jobs->nelts == 1 ? "y" : "ies", s.stream, s.prefix, s.prefix, s.jobs->nelts);
    if (rc == CLI_OK && wait) {
        rc = follow(&s, &c, from_r, from_d);
        secs = (double)(apr_time_now() - start) / APR_USEC_PER_SEC;
        if (rc == CLI_OK)
            rc = apr_atomic_read32(&interrupted) ? CLI_INTERRUPTED
                 : s.failed || s.dead_letters ? CLI_FAILED : CLI_OK;
        if (s.json)
            printf("{\"summary\":{\"submitted\":%d,\"done\":%" APR_UINT64_T_FMT ",\"failed\":%"
                   APR_UINT64_T_FMT ",\"dead\":%" APR_UINT64_T_FMT ",\"wall_s\":%.3f,"
                   "\"interrupted\":%s,\"exit\":%d}}\n", s.jobs->nelts, s.ok, s.failed,
                   s.dead_letters, secs, rc == CLI_INTERRUPTED ? "true" : "false", rc);
        else
            fprintf(stderr, "parkpool: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT
                    " failed, %" APR_UINT64_T_FMT " dead letters, %" APR_UINT64_T_FMT
                    " without a result yet in %.2f s (%.0f tasks/s)\n", s.ok, s.failed,
                    s.dead_letters, (apr_uint64_t)s.jobs->nelts - s.nseen, secs,
                    secs > 0 ? (double)s.nseen / secs : 0.0);
    }
    if (c)
        redisFree(c);
    return rc;
}
