/* SPDX-License-Identifier: Apache-2.0 */
/* What parkpoold --queue refuses of a queue entry (qentry.h). */
#include "qentry.h"

#include <apr_lib.h>

#include <string.h>

/* What a registry takes as a type's name (registry.c): "family.verb",
 * letters, digits, '_' and '-', one dot inside. No worker has any other,
 * and none of these can break the job line it goes out as. */
static int type_name(const char *type, apr_size_t len)
{
    apr_size_t i, dots = 0;

    if (type[0] == '.' || type[len - 1] == '.')
        return 0;
    for (i = 0; i < len; i++) {
        if (type[i] == '.')
            dots++;
        else if (!(apr_isalnum(type[i]) || type[i] == '_' || type[i] == '-'))
            return 0;
    }
    return dots == 1;
}

const char *svc_qentry_refusal(const char *type, apr_size_t tlen, const char *arg,
                               apr_size_t alen)
{
    if (!type || !tlen)
        return "the entry has no 'type' field";
    if (!type_name(type, tlen))
        return "the type is not a task type's name (family.verb)";
    /* An argument is the rest of a job line: a line break would also end
     * the line the worker process reads, and what followed it would be
     * read as a command of its own. */
    if (arg && (memchr(arg, '\0', alen) || memchr(arg, '\n', alen)))
        return "the argument has a line break or a NUL byte";
    return NULL;
}
