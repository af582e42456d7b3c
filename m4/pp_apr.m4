# SPDX-License-Identifier: Apache-2.0
# PP_CHECK_APR: find APR 1.x the way APR-based projects do.
# pkg-config apr-1 first; --with-apr=PREFIX or an apr-1-config on PATH as
# the fallback. Sets APR_CFLAGS and APR_LIBS. APR 1.7+ is needed for the
# 64-bit atomics.
AC_DEFUN([PP_CHECK_APR], [
  AC_ARG_WITH([apr],
    [AS_HELP_STRING([--with-apr=PREFIX|CONFIG],
      [APR install prefix or path to apr-1-config (default: pkg-config apr-1)])],
    [pp_apr_with="$withval"], [pp_apr_with=""])
  pp_apr_found=no
  AS_IF([test -z "$pp_apr_with"], [
    PKG_CHECK_MODULES([APR], [apr-1 >= 1.7.0], [pp_apr_found=yes], [pp_apr_found=no])
  ])
  AS_IF([test "$pp_apr_found" = no], [
    pp_apr_config=""
    AS_IF([test -n "$pp_apr_with" && test -x "$pp_apr_with" && test ! -d "$pp_apr_with"],
          [pp_apr_config="$pp_apr_with"],
          [test -n "$pp_apr_with" && test -x "$pp_apr_with/bin/apr-1-config"],
          [pp_apr_config="$pp_apr_with/bin/apr-1-config"],
          [AC_PATH_PROG([pp_apr_config], [apr-1-config])])
    AS_IF([test -n "$pp_apr_config"], [
      AC_MSG_CHECKING([APR version from $pp_apr_config])
      pp_apr_version=`$pp_apr_config --version`
      AC_MSG_RESULT([$pp_apr_version])
      AS_VERSION_COMPARE([$pp_apr_version], [1.7.0],
        [AC_MSG_ERROR([APR $pp_apr_version is too old: parkpool needs APR >= 1.7.0])])
      APR_CFLAGS="`$pp_apr_config --cppflags --includes`"
      APR_LIBS="`$pp_apr_config --link-ld --libs`"
      pp_apr_found=yes
    ])
  ])
  AS_IF([test "$pp_apr_found" = no], [
    AC_MSG_ERROR([APR 1.7 or newer was not found.
    On Debian/Ubuntu: apt-get install libapr1-dev
    Elsewhere: install APR and pass --with-apr=PREFIX (or the path to apr-1-config).])
  ])
  AC_SUBST([APR_CFLAGS])
  AC_SUBST([APR_LIBS])
])

# PP_CHECK_APU: APR-util (the digests of the hash plugin), through
# pkg-config apr-util-1, or --with-apu / apu-1-config. Sets APU_CFLAGS/LIBS.
AC_DEFUN([PP_CHECK_APU], [
  AC_ARG_WITH([apu],
    [AS_HELP_STRING([--with-apu=PREFIX|CONFIG],
      [APR-util install prefix or path to apu-1-config (default: pkg-config apr-util-1)])],
    [pp_apu_with="$withval"], [pp_apu_with=""])
  pp_apu_found=no
  AS_IF([test -z "$pp_apu_with"], [
    PKG_CHECK_MODULES([APU], [apr-util-1 >= 1.5], [pp_apu_found=yes], [pp_apu_found=no])
  ])
  AS_IF([test "$pp_apu_found" = no], [
    pp_apu_config=""
    AS_IF([test -n "$pp_apu_with" && test -x "$pp_apu_with" && test ! -d "$pp_apu_with"],
          [pp_apu_config="$pp_apu_with"],
          [test -n "$pp_apu_with" && test -x "$pp_apu_with/bin/apu-1-config"],
          [pp_apu_config="$pp_apu_with/bin/apu-1-config"],
          [AC_PATH_PROG([pp_apu_config], [apu-1-config])])
    AS_IF([test -n "$pp_apu_config"], [
      APU_CFLAGS="`$pp_apu_config --includes`"
      APU_LIBS="`$pp_apu_config --link-ld --libs`"
      pp_apu_found=yes
    ])
  ])
  AS_IF([test "$pp_apu_found" = no], [
    AC_MSG_ERROR([APR-util was not found; the hash plugin needs it.
    On Debian/Ubuntu: apt-get install libaprutil1-dev
    Elsewhere: install APR-util and pass --with-apu=PREFIX (or the path to apu-1-config).])
  ])
  AC_SUBST([APU_CFLAGS])
  AC_SUBST([APU_LIBS])
])
