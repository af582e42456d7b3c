/* SPDX-License-Identifier: Apache-2.0 */
/* parkpoold built without hiredis: --queue says how to get it. */
#include "queue.h"

apr_status_t svc_queue_create(svc_queue_t **q, const svc_queue_config_t *cfg, apr_pool_t *p)
{
    (void)q;
    (void)p;
    svc_logf(cfg->log, cfg->baton, PP_LOG_ERROR, "this parkpoold was built without hiredis: "
             "--queue needs it (Debian: apt-get install libhiredis-dev, then configure again)");
    return APR_ENOTIMPL;
}

apr_status_t svc_queue_run(svc_queue_t *q, apr_interval_time_t timeout)
{
    (void)q;
    (void)timeout;
    return APR_ENOTIMPL;
}

void svc_queue_stop(svc_queue_t *q)
{
    (void)q;
}

void svc_queue_reload(svc_queue_t *q)
{
    (void)q;
}
