/* SPDX-License-Identifier: Apache-2.0 */
/* pp_bench's strand table (strands.c): tasks spread over 1, 16 and 1024
 * strands against the same tasks on the plain pool. */
#ifndef PP_BENCH_STRANDS_H
#define PP_BENCH_STRANDS_H

/** Time the strands, print the table: 0, or -1 when a pool, strand or
 *  submit failed. quick: a twentieth of the tasks. */
int pp_bench_strands(unsigned reps, int quick);

#endif
