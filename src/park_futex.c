/*
 * Linux futex parker, after the three-state token of Rust's std
 * (sys/sync/thread_parking/futex.rs).
 *
 * Orderings: apr_atomic_* are full barriers, stronger than needed. What the
 * token must order is "unparker's writes before unpark" -> "parker's reads
 * after park", a release/acquire pair that the full barriers give. The
 * pool does not even rely on that (tasks move under the queue mutex), but
 * a parker that promised less would be a trap for its next user.
 */
#include "park.h"

#include <apr_atomic.h>

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct pp__parker_t {
    volatile apr_uint32_t state;
};

apr_status_t pp__parker_create(pp__parker_t **parker, apr_pool_t *p)
{
    *parker = apr_pcalloc(p, sizeof(**parker));
    return *parker ? APR_SUCCESS : APR_ENOMEM;
}

/* Sleeps while state == PARKED; ts NULL = forever. EINTR, EAGAIN and
 * spurious returns all come back here to be re-checked by the caller. */
static void futex_wait(volatile apr_uint32_t *word, const struct timespec *ts)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, PP__PARK_PARKED, ts, NULL, 0);
}

static int consume(pp__parker_t *parker)
{
    return apr_atomic_cas32(&parker->state, PP__PARK_EMPTY, PP__PARK_NOTIFIED)
           == PP__PARK_NOTIFIED;
}

void pp__park(pp__parker_t *parker)
{
    /* NOTIFIED(1) - 1 = EMPTY: token consumed; EMPTY(0) - 1 = PARKED. */
    if (apr_atomic_dec32(&parker->state) == 0)
        return;
    do
        futex_wait(&parker->state, NULL);
    while (!consume(parker));
}

apr_status_t pp__park_timed(pp__parker_t *parker, apr_interval_time_t timeout)
{
    struct timespec now, deadline, left;

    if (apr_atomic_dec32(&parker->state) == 0)
        return APR_SUCCESS;
    if (timeout < 0)
        timeout = 0;
    /* The deadline is on the monotonic clock so that a wall-clock step
     * neither stretches nor cuts a wait, and the wait shrinks across
     * spurious returns instead of restarting. */
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)(timeout / APR_USEC_PER_SEC);
    deadline.tv_nsec += (long)(timeout % APR_USEC_PER_SEC) * 1000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        left.tv_sec = deadline.tv_sec - now.tv_sec;
        left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
        if (left.tv_nsec < 0) {
            left.tv_sec--;
            left.tv_nsec += 1000000000L;
        }
        if (left.tv_sec < 0)
            break;
        futex_wait(&parker->state, &left);
        if (consume(parker))
            return APR_SUCCESS;
    }
    /* Leave PARKED; an unpark may have raced in just now, and then its
     * token is ours to take rather than to leave for the next park. */
    return apr_atomic_xchg32(&parker->state, PP__PARK_EMPTY) == PP__PARK_NOTIFIED
           ? APR_SUCCESS : APR_TIMEUP;
}

int pp__park_notified(pp__parker_t *parker)
{
    return apr_atomic_read32(&parker->state) == PP__PARK_NOTIFIED;
}

void pp__unpark(pp__parker_t *parker)
{
    /* Waking after the swap touches only the address: if the owner woke on
     * its own and its pool was freed meanwhile, FUTEX_WAKE on a stale
     * address is harmless. */
    if (apr_atomic_xchg32(&parker->state, PP__PARK_NOTIFIED) == PP__PARK_PARKED)
        syscall(SYS_futex, &parker->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

const char *pp__park_backend_name(void)
{
    return "futex";
}
