/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What parkpoold --queue refuses of a queue entry before it runs it: the
 * entry becomes a job line, and what cannot be one goes to the dead
 * letters at once.
 */
#ifndef PP_DAEMON_QENTRY_H
#define PP_DAEMON_QENTRY_H

#include <apr.h>

/** Why an entry of this type and argument cannot run, or NULL when it can.
 *  type (tlen bytes) or arg (alen bytes) may be NULL: the entry had no
 *  such field; the lengths count any NUL inside. */
const char *svc_qentry_refusal(const char *type, apr_size_t tlen, const char *arg,
                               apr_size_t alen);

#endif
