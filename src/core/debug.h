/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Contracts that execute: PP__ASSERT(x) checks an invariant in
 * --enable-debug builds (CI's sanitizer builds use them) and costs nothing
 * elsewhere. A failed one names itself on stderr and aborts, so the
 * sanitizer or the core dump shows where.
 */
#ifndef PP_DEBUG_H
#define PP_DEBUG_H

#ifdef PP_DEBUG
void pp__assert_fail(const char *what, const char *file, int line);
#define PP__ASSERT(x) ((x) ? (void)0 : pp__assert_fail(#x, __FILE__, __LINE__))
#else
#define PP__ASSERT(x) ((void)0)
#endif

#endif
