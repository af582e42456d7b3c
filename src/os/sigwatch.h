/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program's signal watcher (POSIX): the signals are blocked in every
 * thread and taken by one thread with sigwait, so what they do runs as
 * ordinary code, not in a signal handler, and never on a pool's worker.
 * For the programs (parkpool, parkpoold), not the library: a library
 * inside a service leaves the signals to the service.
 */
#ifndef PP_SIGWATCH_H
#define PP_SIGWATCH_H

#include <apr_errno.h>

/**
 * Block the n signals in sigs in the calling thread (call it before any
 * other thread exists, so that every thread inherits the mask) and start
 * a detached thread that calls on_signal(sig, baton) for each one that
 * arrives. Each signal gets a handler that does nothing first: a shell
 * starts a background job with SIGINT ignored, and an ignored signal
 * never reaches sigwait. APR_EINVAL for bad arguments (at most 8
 * signals); the pthread error if the thread cannot start, and then the
 * signals are as they were.
 */
apr_status_t pp__sigwatch_start(const int *sigs, int n,
                                void (*on_signal)(int sig, void *baton), void *baton);

#endif
