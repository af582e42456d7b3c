/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The task loop that both service hosts run: the Unix daemon
 * (src/daemon/parkpoold.c) and the Windows service host
 * (src/daemon/ppservice_win32.c). Only the host differs: how it is started,
 * how it is told to stop, where the log goes.
 *
 * Clients connect to a stream socket (listen.h's addresses) and speak
 * proto.h's protocol: "TYPE ARG" lines, each answered "ok ID" once the
 * task is queued or "error: WHY", then "done ID ok|failed: WHY|cancelled"
 * when it ends. Only the task types the allow-list permits run (allow.h:
 * by default every type but exec.*). A task's result lines go to the
 * output file, or back to its client if it asked ("!output"). Each client
 * has at most max_inflight tasks not ended: past that its lines wait,
 * unread, in its socket; nobody else waits for it.
 */
#ifndef PP_SVC_H
#define PP_SVC_H

#include "parkpool/parkpool.h"
#include "parkpool/plugin.h"
#include "allow.h"
#include "engine.h"

#include <apr_network_io.h>
#include <apr_pools.h>
#include <stdio.h>

typedef struct svc_t svc_t;

typedef struct svc_config_t {
    const char  *listen;       /**< an address (listen.h), or what listener is */
    /** A socket already listening (socket activation): used instead of
     *  binding listen, which then only names it for the log. */
    apr_socket_t *listener;
    /** The task types clients may run; NULL: the default rule (allow.h).
     *  An explicit list also lets TCP listen off loopback. */
    const svc_allow_t *allow;
    int          socket_mode;  /**< a Unix socket's mode bits; 0: listen.h's default */
    const char  *socket_group; /**< a Unix socket's group; NULL: the service's */
    const char  *plugin_dir;   /**< folder of plugins, reloaded by svc_reload() */
    /** What runs the tasks (engine.h); NULL: they run in this process, on
     *  `threads` workers, with the plugins of plugin_dir. */
    svc_engine_t *engine;
    const char  *output;       /**< file the result lines are appended to; NULL = the log */
    apr_uint32_t threads;      /**< workers (without engine); 0 = online CPUs */
    apr_uint32_t max_clients;  /**< clients connected at once; 0 = 64 */
    apr_uint32_t max_inflight; /**< a client's tasks not yet ended; 0 = 256 */
    /** A client with no task in flight that sends and reads nothing for
     *  this long is disconnected; 0 = 60 s. */
    apr_interval_time_t idle_timeout;
    /** Where everything the service and its pool say goes (PP_LOG_* levels). */
    void (*log)(int level, const char *message, void *baton);
    void        *baton;
} svc_config_t;

/** What the service did, for its exit message. */
typedef struct svc_counts_t {
    apr_uint64_t accepted, refused, done, failed, cancelled;
} svc_counts_t;

/** Bind the listening socket, start the engine (its plugins, its workers). */
apr_status_t svc_create(svc_t **svc, const svc_config_t *cfg, apr_pool_t *p);

/** Serve clients until svc_stop(); returns APR_SUCCESS once it has stopped
 *  accepting (the tasks may still run, their clients still to be answered:
 *  see svc_drain). */
apr_status_t svc_serve(svc_t *svc);

/** From any thread (a signal watcher, a service control handler): make
 *  svc_serve() close the socket and return. */
void svc_stop(svc_t *svc);

/** From any thread: load the plugin folder again at the loop's next turn.
 *  New tasks use the new registry; running ones keep their plugins. */
void svc_reload(svc_t *svc);

/**
 * After svc_serve(), on the same thread or another: run what was accepted
 * for at most timeout (negative: no limit), answering the clients as
 * tasks end, then cancel what is left. APR_SUCCESS when everything ran,
 * APR_TIMEUP when the timeout cut it short, APR_EGENERAL when results
 * could not be written to the output file. counts may be NULL.
 */
apr_status_t svc_drain(svc_t *svc, apr_interval_time_t timeout, svc_counts_t *counts);

/** svc_send() flags. */
#define SVC_SEND_NOWAIT 0x1   /**< return once every line is answered, not every task ended */
#define SVC_SEND_OUTPUT 0x2   /**< ask for the tasks' output lines ("out ID LINE") */

/**
 * The client side: send each line of in to the service at address, print
 * each answer on out, and wait until every accepted task has ended (unless
 * SVC_SEND_NOWAIT). A line longer than the protocol allows is refused
 * whole, here. Says on err why it stopped, with the counts. APR_SUCCESS
 * when every line was accepted and every task succeeded, APR_EGENERAL when
 * not (the answers say which), else why the conversation failed.
 */
apr_status_t svc_send(const char *address, int flags, FILE *in, FILE *out, FILE *err,
                      apr_pool_t *p);

#endif
