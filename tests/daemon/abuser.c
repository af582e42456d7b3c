/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Clients that misbehave, for tests/sh/daemon.sh: each mode opens its
 * connections to parkpoold's Unix socket, does its harm, says "ready" on
 * stdout and then holds on until it is killed.
 *
 *   abuser PATH flood N      one client sends N "demo.sleep 1" lines and
 *                            never reads an answer
 *   abuser PATH halfline N   N clients each send half a line and wait
 *   abuser PATH longline N   one client sends a line of N bytes, then
 *                            "demo.echo after-long", prints what comes
 *                            back until the connection ends, and exits
 */
#include <apr_general.h>
#include <apr_network_io.h>
#include <apr_strings.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static apr_socket_t *connect_to(const char *path, apr_pool_t *p)
{
    apr_sockaddr_t *sa;
    apr_socket_t *s;

    if (apr_sockaddr_info_get(&sa, path, APR_UNIX, 0, 0, p) != APR_SUCCESS
        || apr_socket_create(&s, APR_UNIX, SOCK_STREAM, 0, p) != APR_SUCCESS
        || apr_socket_connect(s, sa) != APR_SUCCESS) {
        fprintf(stderr, "abuser: cannot connect to %s\n", path);
        exit(1);
    }
    return s;
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *p;
    long n, i;

    if (argc != 4 || (n = atol(argv[3])) < 1) {
        fprintf(stderr, "usage: abuser PATH flood|halfline N\n");
        return 2;
    }
    apr_app_initialize(&argc, &argv, NULL);
    apr_pool_create(&p, NULL);
    if (!strcmp(argv[2], "flood")) {
        apr_socket_t *s = connect_to(argv[1], p);
        /* Sent in the background of the socket: a daemon that stops
         * reading us leaves the rest in our buffers, and we do not wait. */
        apr_socket_timeout_set(s, 0);
        for (i = 0; i < n; i++) {
            const char *line = "demo.sleep 1\n";
            apr_size_t len = strlen(line);
            if (apr_socket_send(s, line, &len) != APR_SUCCESS)
                break;    /* full: the daemon stopped reading us, as it should */
        }
        printf("ready: %ld lines sent\n", i);
    }
    else if (!strcmp(argv[2], "halfline")) {
        for (i = 0; i < n; i++) {
            apr_socket_t *s = connect_to(argv[1], p);
            apr_size_t len = 10;
            apr_socket_send(s, "demo.echo ", &len);
        }
        printf("ready\n");
    }
    else if (!strcmp(argv[2], "longline")) {
        apr_socket_t *s = connect_to(argv[1], p);
        char *line = malloc((size_t)n + 1), buf[4096];
        const char *next = "\ndemo.echo after-long\n";
        apr_size_t len;
        apr_status_t rv;
        memset(line, 'x', (size_t)n);
        memcpy(line, "demo.echo ", 10);
        for (i = 0; i < n; i += (long)len) {
            len = (apr_size_t)(n - i);
            if (apr_socket_send(s, line + i, &len) != APR_SUCCESS)
                return 1;
        }
        len = strlen(next);
        apr_socket_send(s, next, &len);
        apr_socket_shutdown(s, APR_SHUTDOWN_WRITE);
        do {
            len = sizeof(buf);
            rv = apr_socket_recv(s, buf, &len);
            fwrite(buf, 1, len, stdout);
        } while (rv == APR_SUCCESS);
        free(line);
        fflush(stdout);
        apr_terminate();
        return 0;
    }
    else {
        fprintf(stderr, "abuser: no mode '%s'\n", argv[2]);
        return 2;
    }
    fflush(stdout);
    for (;;)
        apr_sleep(apr_time_from_sec(1));
}
