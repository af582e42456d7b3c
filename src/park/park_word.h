/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two backends that sleep on a word (Linux futex, Windows
 * WaitOnAddress) share park_word.c, which keeps the three-state token of
 * park.h; each backend supplies only these two calls.
 */
#ifndef PP_PARK_WORD_H
#define PP_PARK_WORD_H

#include <apr.h>
#include <apr_time.h>

/**
 * Sleep while *word holds PP__PARK_PARKED, for at most timeout
 * microseconds (negative: no limit). May return early or spuriously; the
 * caller re-checks the word.
 */
void pp__word_wait(_Atomic apr_uint32_t *word, apr_interval_time_t timeout);

/** Wake one thread sleeping on word, if any. */
void pp__word_wake(_Atomic apr_uint32_t *word);

#endif
