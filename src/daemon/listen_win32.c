/* SPDX-License-Identifier: Apache-2.0 */
/* The Windows service listens on TCP only, on a socket of its own
 * (listen.h). */
#include "listen.h"

apr_status_t svc_listen_inherited(apr_socket_t **sock, apr_pool_t *p)
{
    (void)p;
    *sock = NULL;
    return APR_SUCCESS;
}

apr_status_t svc_sockfile_secure(const char *path, int mode, const char *group,
                                 apr_pool_t *p)
{
    (void)path;
    (void)mode;
    (void)group;
    (void)p;
    return APR_ENOTIMPL;
}
