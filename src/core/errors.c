/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "parkpool/parkpool.h"

#include <apr_strings.h>

static const char *const messages[PP_END_ERROR - PP_START_ERROR] = {
    NULL,
    "the pool is shutting down and accepts no more tasks",
    "the task queue is full",
    "the task was cancelled",
    "no task type of that name is registered",
    "a task type of that name is already registered",
    "not a parkpool plugin",
    "the plugin was built for an incompatible parkpool ABI",
    "the task's deadline passed before it started",
    "the task ended its worker thread (pthread_exit or the like)",
    "computed checksum did NOT match",
};

const char *pp_strerror(apr_status_t status, char *buf, apr_size_t bufsize)
{
    if (!buf || bufsize == 0)
        return "";
    if (PP_IS_EEXIT(status)) {
        apr_snprintf(buf, bufsize, "the child process exited with status %d",
                     PP_EEXIT_CODE(status));
        return buf;
    }
    if (status > PP_START_ERROR && status < PP_END_ERROR) {
        apr_cpystrn(buf, messages[status - PP_START_ERROR], bufsize);
        return buf;
    }
    return apr_strerror(status, buf, bufsize);
}
