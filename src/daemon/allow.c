/* SPDX-License-Identifier: Apache-2.0 */
/* The task types a service runs for its clients (allow.h). */
#include "allow.h"

#include <apr_fnmatch.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include <string.h>

/* The types refused unless a list names them: those that run programs. */
#define DEFAULT_DENY "exec.*"

struct svc_allow_t {
    apr_array_header_t *patterns;    /* const char * */
};

apr_status_t svc_allow_create(svc_allow_t **out, apr_pool_t *p)
{
    svc_allow_t *a = apr_pcalloc(p, sizeof(*a));

    a->patterns = apr_array_make(p, 4, sizeof(const char *));
    *out = a;
    return APR_SUCCESS;
}

static int valid_pattern(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return 0;
    return 1;
}

apr_status_t svc_allow_add(svc_allow_t *a, const char *patterns)
{
    apr_pool_t *p = a->patterns->pool;
    char *copy = apr_pstrdup(p, patterns), *tok, *last;
    int n = a->patterns->nelts;

    /* apr_strtok skips empty fields, so check for them first: "a,,b" or a
     * trailing comma is a typo to report, not to ignore. */
    if (!*patterns || patterns[0] == ',' || strstr(patterns, ",,")
        || patterns[strlen(patterns) - 1] == ',')
        return APR_EINVAL;
    for (tok = apr_strtok(copy, ",", &last); tok; tok = apr_strtok(NULL, ",", &last)) {
        if (!valid_pattern(tok)) {
            a->patterns->nelts = n;    /* all or nothing */
            return APR_EINVAL;
        }
        APR_ARRAY_PUSH(a->patterns, const char *) = tok;
    }
    return APR_SUCCESS;
}

int svc_allow_explicit(const svc_allow_t *a)
{
    return a->patterns->nelts > 0;
}

int svc_allow_permits(const svc_allow_t *a, const char *type)
{
    int i;

    if (!svc_allow_explicit(a))
        return apr_fnmatch(DEFAULT_DENY, type, 0) != APR_SUCCESS;
    for (i = 0; i < a->patterns->nelts; i++)
        if (apr_fnmatch(APR_ARRAY_IDX(a->patterns, i, const char *), type, 0) == APR_SUCCESS)
            return 1;
    return 0;
}

const char *svc_allow_describe(const svc_allow_t *a, apr_pool_t *p)
{
    if (!svc_allow_explicit(a))
        return "every type but " DEFAULT_DENY " (no --allow)";
    return apr_array_pstrcat(p, a->patterns, ',');
}
