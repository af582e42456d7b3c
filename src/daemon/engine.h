/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What runs the service's tasks, behind the loop (svc.c): the loop knows a
 * task by its job, a type name and an argument text; an engine runs it and
 * tells the loop's sink what it printed and how it ended.
 *
 * Two engines: engine_local.c runs the tasks in this process (a parkpool
 * pool and the plugin folder's registry); engine_child.c runs them in a
 * worker process (worker.c, which runs engine_local.c) that it restarts
 * when it dies, so that a task that crashes takes only the tasks in
 * flight with it, each answered, never the service. parkpoold uses the
 * child; the Windows service host, which its service manager restarts,
 * the local one.
 *
 * Threads: every call but the sink's is the loop's. The sink is called
 * from any thread (a worker's, the loop's), once per output line and
 * exactly once per job run() took.
 */
#ifndef PP_SVC_ENGINE_H
#define PP_SVC_ENGINE_H

#include "parkpool/plugin.h"

#include <apr_poll.h>
#include <apr_pools.h>

typedef struct svc_engine_t svc_engine_t;

/** How a job ended, for svc_sink_t.done. LOST: the process that ran it
 *  died (why says how); it may or may not have run. */
enum { SVC_OUTCOME_OK, SVC_OUTCOME_FAILED, SVC_OUTCOME_CANCELLED, SVC_OUTCOME_LOST };

typedef void (*svc_log_fn)(int level, const char *message, void *baton);

/** Format a message for log (which may be NULL: then nothing). */
void svc_logf(svc_log_fn log, void *baton, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

typedef struct svc_sink_t {
    /** A worker took the job (may be NULL). */
    void (*started)(void *job, void *baton);
    /** A line the job's task printed (without its LF). */
    void (*output)(void *job, const char *line, void *baton);
    /** The job ended; why says how it failed (NULL otherwise). */
    void (*done)(void *job, int outcome, const char *why, void *baton);
    void *baton;
} svc_sink_t;

typedef struct svc_engine_ops_t {
    /** Load the plugins and start the workers; the engine's descriptors,
     *  if any, go in ps with e as their client_data. */
    apr_status_t (*start)(svc_engine_t *e, const svc_sink_t *sink, apr_pollset_t *ps);
    /** The type of this name, if the plugins have one (a stand-in when the
     *  plugins are elsewhere: only its name is meant to be read). */
    const pp_task_type_t *(*find)(svc_engine_t *e, const char *type);
    /** A type whose name is close to this one, or NULL. */
    const pp_task_type_t *(*suggest)(svc_engine_t *e, const char *type);
    /** The names of the types it runs, separated by spaces, in p. */
    const char *(*types)(svc_engine_t *e, apr_pool_t *p);
    /** Run job's task: the sink hears of it from now on. An error means
     *  the job was not taken (the sink will not hear of it). */
    apr_status_t (*run)(svc_engine_t *e, void *job, apr_uint64_t id, const char *type,
                        const char *arg);
    /** Load the plugin folder again; what is running keeps its plugins. */
    void (*reload)(svc_engine_t *e);
    /** One of its descriptors is ready (rtnevents in pfd). */
    void (*event)(svc_engine_t *e, const apr_pollfd_t *pfd);
    /** After each turn of the loop: returns the longest the loop may sleep
     *  before calling again (negative: no limit). */
    apr_interval_time_t (*tend)(svc_engine_t *e);
    /** Drop what is queued (each job answered cancelled) and tell what runs
     *  to stop; what has not ended within grace is let go by stop(). */
    void (*cancel)(svc_engine_t *e, apr_interval_time_t grace);
    /** The end: after the jobs have ended (or cancel()'s grace passed).
     *  Every job not yet answered is answered cancelled. */
    void (*stop)(svc_engine_t *e);
} svc_engine_ops_t;

struct svc_engine_t {
    const svc_engine_ops_t *ops;
};

/** Where an engine finds its plugins and how many workers it runs. */
typedef struct svc_engine_config_t {
    const char  *plugin_dir;
    apr_uint32_t threads;       /**< 0: online CPUs */
    svc_log_fn   log;
    void        *baton;
} svc_engine_config_t;

/** reg's type names, separated by spaces, in p. */
const char *svc__types_of(const pp_registry_t *reg, apr_pool_t *p);

/** Tasks run in this process. */
apr_status_t svc_engine_local_create(svc_engine_t **e, const svc_engine_config_t *cfg,
                                     apr_pool_t *p);

/** Tasks run in a worker process: argv (argv[0] a path, or a name to look
 *  for in PATH) starts one that runs svc_worker_main() with cfg's
 *  plugin_dir and threads. */
apr_status_t svc_engine_child_create(svc_engine_t **e, const svc_engine_config_t *cfg,
                                     const char *const *argv, apr_pool_t *p);

/** The longest OUT line's text a worker process sends. */
#define SVC_WORKER_MAX_OUT (1024 * 1024)

/**
 * The worker process's life: a local engine, given tasks on stdin and
 * answering on stdout in the lines engine_child.c reads (see worker.c);
 * the signals that stop the service are blocked, it ends when its stdin
 * does. Returns the process's exit status.
 */
int svc_worker_main(const svc_engine_config_t *cfg, apr_pool_t *p);

#endif
