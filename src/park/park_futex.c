/* SPDX-License-Identifier: Apache-2.0 */
/* Linux futex backend of park_word.h. */
#include "config.h"
#include "park.h"
#include "park_word.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void pp__word_wait(_Atomic apr_uint32_t *word, apr_interval_time_t timeout)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(timeout / APR_USEC_PER_SEC);
    ts.tv_nsec = (long)(timeout % APR_USEC_PER_SEC) * 1000L;
    /* EINTR, EAGAIN (the word changed first) and timeouts all return to
     * park_word.c, which looks at the word again. */
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, PP__PARK_PARKED,
            timeout < 0 ? NULL : &ts, NULL, 0);
}

void pp__word_wake(_Atomic apr_uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

const char *pp__park_backend_name(void)
{
    return "futex";
}
