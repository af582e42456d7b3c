/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A task's output lines kept for whoever asked for them (a client of the
 * daemon, a queue's result), bounded: past SVC_CAPTURE_MAX bytes the rest
 * is dropped and truncated set. The lines are kept NUL-separated; a line
 * with line breaks in it (one pp_task_emit() of several lines) is that
 * many lines.
 */
#ifndef PP_SVC_CAPTURE_H
#define PP_SVC_CAPTURE_H

#include <apr.h>

#define SVC_CAPTURE_MAX (1024 * 1024)

typedef struct svc_capture_t {
    char      *buf;      /* malloc'd; free() it */
    apr_size_t len, cap;
    int        truncated;
} svc_capture_t;

/** Keep line (without its LF) in c. */
void svc_capture_add(svc_capture_t *c, const char *line);

#endif
