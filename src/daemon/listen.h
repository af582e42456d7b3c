/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service's addresses: parsing them (for the daemon and its client
 * alike) and opening the listening socket safely.
 *
 *   unix:PATH, or a PATH with a '/'   a Unix socket
 *   tcp:PORT                          TCP on 127.0.0.1
 *   tcp:HOST:PORT                     TCP on HOST ([::1]:PORT for IPv6)
 */
#ifndef PP_SVC_LISTEN_H
#define PP_SVC_LISTEN_H

#include <apr_network_io.h>
#include <apr_pools.h>

typedef struct svc_listen_opts_t {
    const char *address;
    /** A Unix socket's mode bits (0660); -1: 0600, or 0660 with a group. */
    int         mode;
    /** A Unix socket's group (a name or a number); NULL: the daemon's. */
    const char *group;
    /** A TCP address off loopback may be bound: every client that can
     *  reach it may run tasks, so the caller says the task types are
     *  restricted (an explicit allow-list). */
    int         public_ok;
} svc_listen_opts_t;

/**
 * Parse an address. *unix_path is the socket's path, or NULL for TCP.
 * APR_EINVAL for anything else than the forms above.
 */
apr_status_t svc_address_parse(apr_sockaddr_t **sa, const char **unix_path,
                               const char *address, apr_pool_t *p);

/**
 * Bind and listen. A Unix socket is made in a private folder beside PATH,
 * given its mode and group there and then renamed to PATH, so it never
 * exists at PATH with other permissions. An existing PATH is replaced
 * only when it is a socket nobody listens on (what a killed daemon
 * leaves): a file that is not a socket is APR_EEXIST, a live daemon on it
 * APR_EBUSY. A TCP address off loopback without public_ok is
 * APR_EACCES. why gets a sentence for the log on failure.
 */
apr_status_t svc_listen_open(apr_socket_t **sock, const char **unix_path,
                             const svc_listen_opts_t *opts, int backlog,
                             char *why, apr_size_t whylen, apr_pool_t *p);

/**
 * Platform part (listen_posix.c, listen_win32.c): the listening socket a
 * service manager passed us (systemd's socket activation, by its
 * LISTEN_PID/LISTEN_FDS protocol, read without libsystemd): *sock, or NULL
 * when none was passed. APR_EINVAL when more than one was, or the one
 * passed is not a listening stream socket. The variables are removed so
 * that children do not take the socket for theirs.
 */
apr_status_t svc_listen_inherited(apr_socket_t **sock, apr_pool_t *p);

/**
 * Platform part: give the socket file at path its mode and group (NULL:
 * leave it).
 */
apr_status_t svc_sockfile_secure(const char *path, int mode, const char *group,
                                 apr_pool_t *p);

#endif
