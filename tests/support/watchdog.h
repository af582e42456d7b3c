/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-test watchdog of the CUnit programs: a test still running after
 * its limit ends the program with its suite and title on stderr, so that a
 * hang costs minutes and names itself, rather than costing the program's
 * whole budget and naming only the suite.
 */
#ifndef PP_WATCHDOG_H
#define PP_WATCHDOG_H

#include <apr_errno.h>

/* The limit when $PP_TEST_TIMEOUT does not give one, in seconds. */
#define T_WATCHDOG_DEFAULT 120

/* Seconds a test may run: $PP_TEST_TIMEOUT (a whole number from 1), or
 * T_WATCHDOG_DEFAULT. */
unsigned t_watchdog_limit(void);

/* Start the watchdog's thread and put every test registered with CUnit
 * so far under it; call once, after the suites registered. With
 * $PP_TEST_TIMES set, each test's wall time goes to stderr too. */
apr_status_t t_watchdog_start(void);

/* Stop and join the thread, before the registry is cleaned up. */
void t_watchdog_stop(void);

/* No test is running: called after each CUnit run, since a fatal assertion
 * leaves its test by longjmp, past the watchdog's end of the test. */
void t_watchdog_idle(void);

#endif
