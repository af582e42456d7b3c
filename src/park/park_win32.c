/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Windows backend of park_word.h: WaitOnAddress / WakeByAddressSingle
 * (Windows 8 and later, -lsynchronization). Like FUTEX_WAIT, WaitOnAddress
 * sleeps only while the word still holds the expected value and may return
 * spuriously; park_word.c handles both.
 */
#include "config.h"
#include "park.h"
#include "park_word.h"

#include <windows.h>

void pp__word_wait(_Atomic apr_uint32_t *word, apr_interval_time_t timeout)
{
    apr_uint32_t parked = PP__PARK_PARKED;
    DWORD ms = INFINITE;

    /* Milliseconds, rounded up so that a timed park never ends early. */
    if (timeout >= 0)
        ms = timeout / 1000 >= INFINITE - 1 ? INFINITE - 1 : (DWORD)((timeout + 999) / 1000);
    WaitOnAddress(word, &parked, sizeof(parked), ms);
}

void pp__word_wake(_Atomic apr_uint32_t *word)
{
    WakeByAddressSingle((PVOID)word);
}

const char *pp__park_backend_name(void)
{
    return "win32";
}
