/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sigwatch.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define SIGWATCH_MAX 8

typedef struct sigwatch_t {
    sigset_t set;
    struct sigaction old[SIGWATCH_MAX];
    void (*on_signal)(int sig, void *baton);
    void *baton;
} sigwatch_t;

static void ignore(int sig)
{
    (void)sig;    /* never runs while blocked; here so that sigwait sees it */
}

static void *watch(void *data)
{
    sigwatch_t *w = data;
    int sig;

    for (;;)
        if (sigwait(&w->set, &sig) == 0)
            w->on_signal(sig, w->baton);
    return NULL;
}

apr_status_t pp__sigwatch_start(const int *sigs, int n,
                                void (*on_signal)(int sig, void *baton), void *baton)
{
    struct sigaction sa;
    sigwatch_t *w;
    pthread_t t;
    int i, rc;

    if (!sigs || n <= 0 || n > SIGWATCH_MAX || !on_signal)
        return APR_EINVAL;
    /* The watcher runs as long as the process: nothing frees this. */
    w = malloc(sizeof(*w));
    if (!w)
        return APR_ENOMEM;
    w->on_signal = on_signal;
    w->baton = baton;
    sigemptyset(&w->set);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = ignore;
    for (i = 0; i < n; i++)
        if (sigaddset(&w->set, sigs[i]) != 0) {
            free(w);
            return APR_EINVAL;
        }
    for (i = 0; i < n; i++)
        sigaction(sigs[i], &sa, &w->old[i]);    /* valid numbers: cannot fail */
    rc = pthread_sigmask(SIG_BLOCK, &w->set, NULL);
    if (rc == 0 && (rc = pthread_create(&t, NULL, watch, w)) != 0)
        pthread_sigmask(SIG_UNBLOCK, &w->set, NULL);
    if (rc != 0) {
        /* No watcher: the signals keep what they did before. */
        for (i = 0; i < n; i++)
            sigaction(sigs[i], &w->old[i], NULL);
        free(w);
        return APR_FROM_OS_ERROR(rc);
    }
    pthread_detach(t);
    return APR_SUCCESS;
}
