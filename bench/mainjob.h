/* SPDX-License-Identifier: Apache-2.0 */
/* pp_bench's main job table (mainjob.c): parkpool run against coreutils,
 * xargs and GNU parallel, hashing a tree made for it. */
#ifndef PP_BENCH_MAINJOB_H
#define PP_BENCH_MAINJOB_H

/** Make the tree, time the tools, print the table, remove the tree: 0, or
 *  -1 when the tree could not be made or parkpool failed. parkpool is the
 *  program to run; quick: a tenth of the tree. */
int pp_bench_main_job(const char *parkpool, unsigned reps, int quick);

#endif
