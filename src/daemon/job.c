/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A client's task (svc_private.h): made on the loop's thread from a line,
 * run by a worker, handed back to the loop when it has ended, answered
 * there ("done ID ..."), freed there. Workers touch only the job itself
 * and the hand-back list, so connections need no lock.
 *
 * The type is the current registry's; the job holds its load (svc_gen)
 * so that a reload unloads the old plugins only after their last job.
 */
#include "svc_private.h"

#include <apr_atomic.h>
#include <apr_strings.h>

#include <stdlib.h>
#include <string.h>

/* The most output of one job sent back to its client: past it, the rest
 * is dropped and the client told. Bounds what a job holds, and with the
 * in-flight limit what a connection can be made to hold. */
#define MAX_JOB_OUTPUT (1024 * 1024)

/* The job the calling worker runs, for the output hook. */
static _Thread_local svc_job *current;

static apr_status_t job_run(void *arg, pp_task_ctx_t *ctx)
{
    svc_job *j = arg;

    current = j;
    j->ran = 1;
    j->status = j->type->run(j->arg, ctx);
    current = NULL;
    return j->status;
}

/* Called once, after job_run or instead of it (a cancel dropped the job):
 * hand the job back to the loop. The loop is woken only by the push that
 * finds the list empty: it takes the whole list each time. */
static void job_release(void *arg)
{
    svc_job *j = arg;
    svc_t *svc = j->svc;
    int first;

    if (j->type->release)
        j->type->release(j->arg);
    j->next = NULL;
    apr_thread_mutex_lock(svc->done_lock);
    first = svc->done_head == NULL;
    if (svc->done_tail)
        svc->done_tail->next = j;
    else
        svc->done_head = j;
    svc->done_tail = j;
    apr_thread_mutex_unlock(svc->done_lock);
    if (first)
        svc__wake(svc);
}

/* Keep a line of j's output for its client (a worker's thread). */
static void capture(svc_job *j, const char *line)
{
    apr_size_t n = strlen(line) + 1, i;

    if (j->truncated)
        return;
    if (j->outlen + n > MAX_JOB_OUTPUT) {
        j->truncated = 1;
        return;
    }
    if (j->outlen + n > j->outcap) {
        apr_size_t cap = j->outcap ? j->outcap : 256;
        char *grown;
        while (cap < j->outlen + n)
            cap *= 2;
        if (!(grown = realloc(j->out, cap))) {
            j->truncated = 1;
            return;
        }
        j->out = grown;
        j->outcap = cap;
    }
    memcpy(j->out + j->outlen, line, n);    /* NUL-separated */
    /* A line with line breaks in it (one pp_task_emit() of several
     * lines) is that many lines: an "out" line must hold one. */
    for (i = j->outlen; i < j->outlen + n; i++)
        if (j->out[i] == '\n')
            j->out[i] = '\0';
    j->outlen += n;
}

void svc__job_output(const char *line, const char *task_name, void *baton)
{
    svc_t *svc = baton;
    svc_job *j = current;

    if (j && j->forward) {
        capture(j, line);
        return;
    }
    if (!svc->out) {
        svc__log(svc, PP_LOG_INFO, "%s: %s", task_name, line);
        return;
    }
    /* Whole lines, one task's line never cut by another's. */
    apr_thread_mutex_lock(svc->out_lock);
    if ((apr_file_write_full(svc->out, line, strlen(line), NULL) != APR_SUCCESS
         || apr_file_write_full(svc->out, "\n", 1, NULL) != APR_SUCCESS)
        && !apr_atomic_xchg32(&svc->write_failed, 1))
        svc__log(svc, PP_LOG_ERROR, "cannot write results to %s: the results of this run "
                 "are incomplete", svc->cfg.output);
    apr_thread_mutex_unlock(svc->out_lock);
}

void svc__job_submit(svc_conn *c, const char *type_name, const char *text)
{
    svc_t *svc = c->svc;
    const pp_task_type_t *type;
    const pp_task_type_t *similar;
    pp_task_t task;
    apr_pool_t *p;
    svc_job *j;
    char msg[256];
    apr_status_t rv;

    if (!svc_allow_permits(svc->allow, type_name)) {
        svc->refused++;
        svc__conn_say(c, "error: task type '%s' is not allowed here (parkpoold --allow)",
                      type_name);
        return;
    }
    type = pp_registry_find(svc->gen->reg, type_name);
    if (!type) {
        svc->refused++;
        if ((similar = pp_registry_suggest(svc->gen->reg, type_name)) != NULL
            && svc_allow_permits(svc->allow, similar->name))
            svc__conn_say(c, "error: unknown task type '%s' (did you mean '%s'?)", type_name,
                          similar->name);
        else
            svc__conn_say(c, "error: unknown task type '%s'", type_name);
        return;
    }
    if ((rv = apr_pool_create(&p, svc->task_root)) != APR_SUCCESS) {
        svc->refused++;
        svc__conn_say(c, "error: %s", pp_strerror(rv, msg, sizeof(msg)));
        return;
    }
    j = apr_pcalloc(p, sizeof(*j));
    j->p = p;
    j->svc = svc;
    j->conn = c;
    j->gen = svc->gen;
    j->type = type;
    j->forward = c->want_output && !c->nowait;
    j->quiet = c->nowait;
    /* The parse runs here, on the loop's thread, which is also the one
     * that unloads plugins: the plugin cannot go meanwhile. */
    rv = type->parse ? type->parse(&j->arg, text, p) : APR_SUCCESS;
    if (!type->parse)
        j->arg = apr_pstrdup(p, text);
    if (rv != APR_SUCCESS) {
        svc->refused++;
        svc__conn_say(c, "error: %s %s: %s", type_name, text, pp_strerror(rv, msg, sizeof(msg)));
        apr_pool_destroy(p);
        return;
    }
    j->id = ++svc->next_id;
    memset(&task, 0, sizeof(task));
    task.fn = job_run;
    task.arg = j;
    task.release = job_release;
    task.name = type->name;
    /* The pool is unbounded: the service bounds what each client has in
     * flight instead (conn.c stops reading it), so this never waits. */
    rv = pp_submit_task(svc->pool, &task, NULL, 0);
    if (rv != APR_SUCCESS) {
        svc->refused++;
        svc__conn_say(c, "error: %s %s: %s", type_name, text, pp_strerror(rv, msg, sizeof(msg)));
        if (type->release)
            type->release(j->arg);
        apr_pool_destroy(p);
        return;
    }
    svc->accepted++;
    svc->inflight++;
    j->gen->inflight++;
    c->inflight++;
    svc__conn_say(c, "ok %" APR_UINT64_T_FMT, j->id);
}

/* j has ended: tell its client, let go of what it held. */
static void finish(svc_t *svc, svc_job *j)
{
    svc_conn *c = j->conn;
    char msg[256];

    if (!c->closed && !j->quiet) {
        apr_size_t off = 0;
        char id[32];
        apr_snprintf(id, sizeof(id), "out %" APR_UINT64_T_FMT " ", j->id);
        while (off < j->outlen) {
            apr_size_t n = strlen(j->out + off);
            svc__conn_say_bytes(c, id, j->out + off, n);
            off += n + 1;
        }
        if (j->truncated)
            svc__conn_say(c, "out %" APR_UINT64_T_FMT " [output cut at %d bytes]", j->id,
                          MAX_JOB_OUTPUT);
        if (!j->ran)
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " cancelled", j->id);
        else if (j->status == APR_SUCCESS)
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " ok", j->id);
        else if (j->status == PP_ECANCELLED)
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " cancelled", j->id);
        else
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " failed: %s", j->id,
                          pp_strerror(j->status, msg, sizeof(msg)));
    }
    free(j->out);
    svc->inflight--;
    svc__gen_release(svc, j->gen);
    apr_pool_destroy(j->p);
    svc__conn_job_ended(c);
}

void svc__jobs_collect(svc_t *svc)
{
    svc_job *j, *next;

    apr_thread_mutex_lock(svc->done_lock);
    j = svc->done_head;
    svc->done_head = svc->done_tail = NULL;
    apr_thread_mutex_unlock(svc->done_lock);
    for (; j; j = next) {
        next = j->next;
        finish(svc, j);
    }
}
