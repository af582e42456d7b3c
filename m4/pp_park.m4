# PP_WITH_PARK: choose the park/unpark backend.
#   --with-park=futex  Linux futex (FUTEX_WAIT/WAKE_PRIVATE)
#   --with-park=cond   APR mutex + condition variable (any APR platform)
#   --with-park=win32  WaitOnAddress / WakeByAddressSingle (Windows 8+)
# Default: futex where <linux/futex.h> and SYS_futex exist, cond elsewhere. Sets PP_PARK and the PARK_* conditionals.
AC_DEFUN([PP_WITH_PARK], [
  AC_ARG_WITH([park],
    [AS_HELP_STRING([--with-park=futex|cond|win32],
      [park/unpark backend (default: the best the platform has)])],
    [PP_PARK="$withval"], [PP_PARK=auto])
  AC_CACHE_CHECK([for the Linux futex syscall], [pp_cv_futex], [
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
]], [[return (int)syscall(SYS_futex, (void *)0, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);]])],
      [pp_cv_futex=yes], [pp_cv_futex=no])
  ])
  AS_IF([test "$PP_PARK" = auto], [
    AS_IF([test "$pp_cv_futex" = yes], [PP_PARK=futex],
          [PP_PARK=cond])
  ])
  AS_CASE([$PP_PARK],
    [futex], [AS_IF([test "$pp_cv_futex" != yes],
                [AC_MSG_ERROR([--with-park=futex needs Linux futexes (<linux/futex.h>, SYS_futex)])])],
    [win32], [AC_MSG_ERROR([the win32 park backend is not part of this release yet])],
    [cond], [],
    [AC_MSG_ERROR([--with-park takes futex, cond or win32, not '$PP_PARK'])])
  AC_SUBST([PP_PARK])
  AM_CONDITIONAL([PARK_FUTEX], [test "$PP_PARK" = futex])
  AM_CONDITIONAL([PARK_COND], [test "$PP_PARK" = cond])
])
