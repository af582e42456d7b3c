# SPDX-License-Identifier: Apache-2.0
# PP_WITH_PARK: choose the park/unpark backend.
#   --with-park=futex  Linux futex (FUTEX_WAIT/WAKE_PRIVATE)
#   --with-park=cond   APR mutex + condition variable (any APR platform)
#   --with-park=win32  WaitOnAddress / WakeByAddressSingle (Windows 8+)
# Default: win32 on Windows, futex where <linux/futex.h> and SYS_futex
# exist, cond elsewhere. Needs pp_os (configure.ac) set first. Sets PP_PARK,
# PP_PARK_LIBS and the PARK_* conditionals.
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
    AS_IF([test "$pp_os" = win32], [PP_PARK=win32],
          [test "$pp_cv_futex" = yes], [PP_PARK=futex],
          [PP_PARK=cond])
  ])
  PP_PARK_LIBS=""
  AS_CASE([$PP_PARK],
    [futex], [AS_IF([test "$pp_cv_futex" != yes],
                [AC_MSG_ERROR([--with-park=futex needs Linux futexes (<linux/futex.h>, SYS_futex)])])],
    [win32], [
      AC_CACHE_CHECK([for WaitOnAddress in -lsynchronization], [pp_cv_wait_on_address], [
        pp_save_LIBS="$LIBS"; LIBS="-lsynchronization $LIBS"
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include <windows.h>
]], [[LONG w = 0, v = 0; WakeByAddressSingle(&w); return !WaitOnAddress(&w, &v, sizeof(v), 0);]])],
          [pp_cv_wait_on_address=yes], [pp_cv_wait_on_address=no])
        LIBS="$pp_save_LIBS"
      ])
      AS_IF([test "$pp_cv_wait_on_address" != yes],
        [AC_MSG_ERROR([--with-park=win32 needs WaitOnAddress (Windows 8+, _WIN32_WINNT >= 0x0602, -lsynchronization)])])
      PP_PARK_LIBS="-lsynchronization"],
    [cond], [],
    [AC_MSG_ERROR([--with-park takes futex, cond or win32, not '$PP_PARK'])])
  AC_SUBST([PP_PARK])
  AC_SUBST([PP_PARK_LIBS])
  AM_CONDITIONAL([PARK_FUTEX], [test "$PP_PARK" = futex])
  AM_CONDITIONAL([PARK_COND], [test "$PP_PARK" = cond])
  AM_CONDITIONAL([PARK_WIN32], [test "$PP_PARK" = win32])
])
