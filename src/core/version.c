/* SPDX-License-Identifier: Apache-2.0 */
/* What this build is: its version and its park backend. */
#include "config.h"
#include "parkpool/parkpool.h"
#include "park/park.h"

const char *pp_park_backend(void)
{
    return pp__park_backend_name();
}

const char *pp_version(void)
{
    return PP_VERSION_STRING;
}
