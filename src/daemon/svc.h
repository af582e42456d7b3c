/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The task loop that both service hosts run: the Unix daemon
 * (src/daemon/parkpoold.c) and the Windows service host
 * (src/daemon/ppservice_win32.c). Only the host differs: how it is started,
 * how it is told to stop, where the log goes.
 *
 * Clients connect to a stream socket (listen.h's addresses) and send
 * "TYPE ARG" lines; each line is answered "ok N" once the task is queued
 * (N counts accepted tasks from 1) or "error: WHY". Blank lines and lines
 * starting with '#' get no answer. Only the task types the allow-list
 * permits run (allow.h: by default every type but exec.*). A task's result
 * lines go to the output file; its failure goes to the log.
 */
#ifndef PP_SVC_H
#define PP_SVC_H

#include "parkpool/parkpool.h"
#include "parkpool/plugin.h"
#include "allow.h"

#include <apr_pools.h>
#include <stdio.h>

typedef struct svc_t svc_t;

typedef struct svc_config_t {
    const char  *listen;       /**< an address (listen.h) */
    /** The task types clients may run; NULL: the default rule (allow.h).
     *  An explicit list also lets TCP listen off loopback. */
    const svc_allow_t *allow;
    int          socket_mode;  /**< a Unix socket's mode bits; 0: listen.h's default */
    const char  *socket_group; /**< a Unix socket's group; NULL: the service's */
    const char  *plugin_dir;   /**< folder of plugins, reloaded by svc_reload() */
    const char  *output;       /**< file the result lines are appended to; NULL = the log */
    apr_uint32_t threads;      /**< workers; 0 = online CPUs */
    /** Where everything the service and its pool say goes (PP_LOG_* levels). */
    void (*log)(int level, const char *message, void *baton);
    void        *baton;
} svc_config_t;

/** What the service did, for its exit message. */
typedef struct svc_counts_t {
    apr_uint64_t accepted, refused, done, failed, cancelled;
} svc_counts_t;

/** Load the plugins, start the pool, bind the listening socket. */
apr_status_t svc_create(svc_t **svc, const svc_config_t *cfg, apr_pool_t *p);

/** Serve clients until svc_stop(); returns APR_SUCCESS once it has stopped
 *  accepting (the tasks may still run: see svc_drain). */
apr_status_t svc_serve(svc_t *svc);

/** From any thread (a signal watcher, a service control handler): make
 *  svc_serve() close the socket and return. */
void svc_stop(svc_t *svc);

/** From any thread: load the plugin folder again at the loop's next turn.
 *  New tasks use the new registry; running ones keep their plugins. */
void svc_reload(svc_t *svc);

/**
 * Run what was accepted, for at most timeout (negative: no limit), then
 * cancel what is left. APR_SUCCESS when everything ran, APR_TIMEUP when the
 * timeout cut it short. counts may be NULL.
 */
apr_status_t svc_drain(svc_t *svc, apr_interval_time_t timeout, svc_counts_t *counts);

/**
 * The client side: send each line of in to the service at address, print
 * each answer on out. APR_SUCCESS when every line was accepted.
 */
apr_status_t svc_send(const char *address, FILE *in, FILE *out, apr_pool_t *p);

#endif
