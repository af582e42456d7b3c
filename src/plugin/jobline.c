/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The job line grammar (plugin.h, parkpool(1) "JOB LINES"): one parser for
 * every reader of them, the tool's job files and the service's sockets
 * alike. ARG is taken exactly as written, so that any file name (leading
 * blanks, trailing blanks, a '#') can be given; only the line's own ending
 * is not part of it.
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <string.h>

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

apr_status_t pp_job_record_split(char *rec, char **type, char **arg)
{
    char *t, *sep;

    if (!rec || !type || !arg)
        return APR_EINVAL;
    *type = *arg = NULL;
    /* Indentation before TYPE is layout, never part of a name. */
    for (t = rec; blank(*t); t++)
        ;
    if (!*t || *t == '#')
        return APR_EOF;
    sep = t + strcspn(t, " \t");
    *type = t;
    if (!*sep)
        return APR_EINVAL;
    *sep = '\0';
    *arg = sep + 1;    /* one separator: what follows is the argument */
    return APR_SUCCESS;
}

apr_status_t pp_job_line_split(char *line, char **type, char **arg)
{
    apr_size_t len;

    if (!line)
        return pp_job_record_split(line, type, arg);
    len = strlen(line);
    if (len && line[len - 1] == '\n') {
        line[--len] = '\0';
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
    }
    return pp_job_record_split(line, type, arg);
}
