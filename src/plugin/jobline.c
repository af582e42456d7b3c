/* SPDX-License-Identifier: Apache-2.0 */
/* The "TYPE ARG" job line (plugin.h): one parser for every reader of them,
 * the tool's job files and the service's sockets alike. */
#include "config.h"
#include "parkpool/plugin.h"

#include <string.h>

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

apr_status_t pp_job_line_split(char *line, char **type, char **arg)
{
    char *end, *t, *a;

    if (!line || !type || !arg)
        return APR_EINVAL;
    *type = *arg = NULL;
    end = line + strlen(line);
    while (end > line && (end[-1] == '\n' || end[-1] == '\r'))
        *--end = '\0';
    t = line;
    while (blank(*t))
        t++;
    if (!*t || *t == '#')
        return APR_EOF;
    a = t + strcspn(t, " \t");
    *type = t;
    if (!*a)
        return APR_EINVAL;
    *a++ = '\0';
    while (blank(*a))
        a++;
    *arg = a;
    return APR_SUCCESS;
}
