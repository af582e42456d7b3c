/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A client's task (svc_private.h): made on the loop's thread from a line,
 * given to the engine (engine.h), handed back to the loop by the engine's
 * sink when it has ended, answered there ("done ID ..."), freed there.
 * The sink, on whatever thread the engine calls it, touches only the job
 * itself and the hand-back list, so connections need no lock.
 */
#include "svc_private.h"

#include <apr_atomic.h>
#include <apr_strings.h>

#include <stdlib.h>
#include <string.h>


/* j has ended (any thread): hand it back to the loop. The loop is woken
 * only by the push that finds the list empty: it takes the whole list
 * each time. */
static void job_done(void *job, int outcome, const char *why, void *baton)
{
    svc_job *j = job;
    svc_t *svc = baton;
    int first;

    j->outcome = outcome;
    if (why)
        apr_cpystrn(j->why, why, sizeof(j->why));
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

/* A line of j's output (any thread, before j's end). */
static void job_output(void *job, const char *line, void *baton)
{
    svc_t *svc = baton;
    svc_job *j = job;

    if (j->forward) {
        svc_capture_add(&j->out, line);
        return;
    }
    if (!svc->out) {
        svc__log(svc, PP_LOG_INFO, "%s: %s", j->type_name, line);
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

void svc__job_sink(svc_t *svc, svc_sink_t *sink)
{
    sink->started = NULL;
    sink->output = job_output;
    sink->done = job_done;
    sink->baton = svc;
}

void svc__job_submit(svc_conn *c, const char *type_name, const char *text)
{
    svc_t *svc = c->svc;
    svc_engine_t *e = svc->engine;
    const pp_task_type_t *similar;
    apr_size_t len = strlen(type_name);
    svc_job *j;
    char msg[256];
    apr_status_t rv;

    if (!svc_allow_permits(svc->allow, type_name)) {
        svc->refused++;
        svc__conn_say(c, "error: task type '%s' is not allowed here (parkpoold --allow)",
                      type_name);
        return;
    }
    if (!e->ops->find(e, type_name)) {
        svc->refused++;
        if ((similar = e->ops->suggest(e, type_name)) != NULL
            && svc_allow_permits(svc->allow, similar->name))
            svc__conn_say(c, "error: unknown task type '%s' (did you mean '%s'?)", type_name,
                          similar->name);
        else
            svc__conn_say(c, "error: unknown task type '%s'", type_name);
        return;
    }
    if (!(j = calloc(1, sizeof(*j) + len + 1))) {
        svc->refused++;
        svc__conn_say(c, "error: %s", pp_strerror(APR_ENOMEM, msg, sizeof(msg)));
        return;
    }
    memcpy(j->type_name, type_name, len + 1);
    j->svc = svc;
    j->conn = c;
    j->forward = c->want_output && !c->nowait;
    j->quiet = c->nowait;
    j->id = svc->next_id + 1;
    /* Counted once run() took it: the sink may hand it back before run()
     * returns, but only this thread collects it, and after this. */
    rv = e->ops->run(e, j, j->id, type_name, text);
    if (rv != APR_SUCCESS) {
        svc->refused++;
        svc__conn_say(c, "error: %s %s: %s", type_name, text, pp_strerror(rv, msg, sizeof(msg)));
        free(j);
        return;
    }
    svc->next_id++;
    svc->accepted++;
    svc->inflight++;
    c->inflight++;
    svc__conn_say(c, "ok %" APR_UINT64_T_FMT, j->id);
}

/* j has ended: tell its client, let go of what it held. */
static void finish(svc_t *svc, svc_job *j)
{
    svc_conn *c = j->conn;

    if (!c->closed && !j->quiet) {
        apr_size_t off = 0;
        char id[32];
        apr_snprintf(id, sizeof(id), "out %" APR_UINT64_T_FMT " ", j->id);
        while (off < j->out.len) {
            apr_size_t n = strlen(j->out.buf + off);
            svc__conn_say_bytes(c, id, j->out.buf + off, n);
            off += n + 1;
        }
        if (j->out.truncated)
            svc__conn_say(c, "out %" APR_UINT64_T_FMT " [output cut at %d bytes]", j->id,
                          SVC_CAPTURE_MAX);
        if (j->outcome == SVC_OUTCOME_OK)
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " ok", j->id);
        else if (j->outcome == SVC_OUTCOME_CANCELLED)
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " cancelled", j->id);
        else
            svc__conn_say(c, "done %" APR_UINT64_T_FMT " failed: %s", j->id, j->why);
    }
    if (j->outcome == SVC_OUTCOME_OK)
        svc->ok++;
    else if (j->outcome == SVC_OUTCOME_CANCELLED)
        svc->cancelled++;
    else
        svc->failed++;
    free(j->out.buf);
    free(j);
    svc->inflight--;
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
