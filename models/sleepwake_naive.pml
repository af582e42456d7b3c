/* SPDX-License-Identifier: Apache-2.0 */
/* The mutant that spin must reject: see sleepwake.pml. */
#define NAIVE 1
#include "sleepwake.pml"
