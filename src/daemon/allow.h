/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which task types a service runs for its clients. Without a list, every
 * type of the plugin folder except those that run programs (exec.*): a
 * client that can reach the socket must not get a shell by default. With
 * one (parkpoold --allow), exactly the types that match it.
 */
#ifndef PP_SVC_ALLOW_H
#define PP_SVC_ALLOW_H

#include <apr_pools.h>
#include <apr_errno.h>

typedef struct svc_allow_t svc_allow_t;

/** An empty list: the default rule until svc_allow_add(). */
apr_status_t svc_allow_create(svc_allow_t **allow, apr_pool_t *p);

/**
 * Add patterns, separated by commas: type names or apr_fnmatch() globs
 * ("exec.sh", "hash.*", "*"). APR_EINVAL for an empty pattern or one with
 * a character no type name has (a blank, a control character).
 */
apr_status_t svc_allow_add(svc_allow_t *allow, const char *patterns);

/** Whether patterns were given (an explicit list). */
int svc_allow_explicit(const svc_allow_t *allow);

/** Whether a client may run tasks of this type. */
int svc_allow_permits(const svc_allow_t *allow, const char *type);

/** The list as given ("a,b"), or the default rule, for the log. */
const char *svc_allow_describe(const svc_allow_t *allow, apr_pool_t *p);

#endif
